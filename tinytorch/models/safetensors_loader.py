"""Loading Hugging Face checkpoint directories (``config.json`` + ``model.safetensors`` or the shards
of ``model.safetensors.index.json``) into a tinytorch model with tinytorch's safetensors reader."""
from __future__ import annotations

import json
import os
from typing import Dict

from tinytorch.models.config import LlamaConfig
from tinytorch.models.init_control import no_init_weights
from tinytorch.serialization import load
from tinytorch._tensor.tensor import Tensor

_IGNORED_SUFFIXES = ("rotary_emb.inv_freq",)  # older checkpoints saved the rotary buffer


def _shard_files(path: str) -> list:
    single = os.path.join(path, "model.safetensors")
    index = os.path.join(path, "model.safetensors.index.json")
    if os.path.exists(single):
        return [single]
    if os.path.exists(index):
        with open(index, encoding="utf-8") as f:
            try:
                weight_map = json.load(f)["weight_map"]
            except (ValueError, KeyError, TypeError) as e:
                raise ValueError(f"from_pretrained: {index} is not a valid safetensors index ({e!r})") from None
        files = sorted(set(weight_map.values()))
        missing = [x for x in files if not os.path.exists(os.path.join(path, x))]
        if missing:
            raise FileNotFoundError(f"from_pretrained: {index} lists shards that are missing: {missing}")
        return [os.path.join(path, x) for x in files]
    raise FileNotFoundError(f"from_pretrained: {path} has neither model.safetensors nor "
                            "model.safetensors.index.json")


def read_state_dict(path: str) -> Dict[str, Tensor]:
    """The tensors of every shard of the checkpoint directory, by name (CPU)."""
    state: Dict[str, Tensor] = {}
    for f in _shard_files(path):
        tensors = load(f)
        dup = set(tensors) & set(state)
        if dup:
            raise ValueError(f"from_pretrained: {f} repeats tensors of another shard: {sorted(dup)[:5]}")
        state.update(tensors)
    return state


def load_into(model, state: Dict[str, Tensor], source: str, dtype=None, device=None) -> None:
    """Checks the whole state dict against the model (names and shapes) before taking any tensor,
    then assigns them (cast to ``dtype``, on ``device``) and re-ties tied weights."""
    state = {k: v for k, v in state.items() if not k.endswith(_IGNORED_SUFFIXES)}
    if not any(k.startswith("model.") for k in state) and "embed_tokens.weight" in state:
        state = {("lm_head.weight" if k == "lm_head.weight" else "model." + k): v for k, v in state.items()}
    if model.config.tie_word_embeddings:
        emb = state.get("model.embed_tokens.weight")
        if emb is not None:
            state["lm_head.weight"] = emb
    own = model.state_dict(keep_vars=True)
    missing = [k for k in own if k not in state]
    unexpected = [k for k in state if k not in own]
    bad = [f"{k}: checkpoint {list(v.shape)}, model {list(own[k].shape)}" for k, v in state.items()
           if k in own and tuple(v.shape) != tuple(own[k].shape)]
    if missing or unexpected or bad:
        raise ValueError(f"{source} does not match its config: missing {missing[:8]}, unexpected "
                         f"{unexpected[:8]}, shape mismatches {bad[:8]}")
    placed = {}
    for k, v in state.items():
        if id(v) not in placed:
            placed[id(v)] = v.to(device=device, dtype=dtype if (dtype is not None and v.is_floating_point())
                                  else v.dtype)
        state[k] = placed[id(v)]
    model.load_state_dict(state, strict=True, assign=True)
    model.tie_weights()


def load_pretrained(cls, path, dtype=None, device=None):
    path = os.fspath(path)
    if not os.path.isdir(path):
        raise FileNotFoundError(f"from_pretrained: {path} is not a directory (expected config.json and "
                                "model.safetensors)")
    cfg_file = os.path.join(path, "config.json")
    if not os.path.exists(cfg_file):
        raise FileNotFoundError(f"from_pretrained: {path} has no config.json")
    config = LlamaConfig.from_json_file(cfg_file)
    state = read_state_dict(path)
    with no_init_weights():
        model = cls(config, device=device, dtype=dtype)
    load_into(model, state, path, dtype=dtype, device=device)
    return model.eval()
