"""``LlamaConfig``: the hyperparameters of a Llama-family causal LM (llama, mistral, qwen2), read from a
Hugging Face ``config.json`` with its key names."""
from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Optional, Union

MODEL_TYPES = ("llama", "mistral", "qwen2")


@dataclass
class LlamaConfig:
    """Hyperparameters under Hugging Face ``transformers``' names (``LlamaConfig``, ``MistralConfig``,
    ``Qwen2Config``). ``qkv_bias``/``o_bias`` are derived: llama's ``attention_bias`` sets both,
    qwen2 always has q/k/v biases and no o_proj bias."""
    vocab_size: int = 32000
    hidden_size: int = 4096
    intermediate_size: int = 11008
    num_hidden_layers: int = 32
    num_attention_heads: int = 32
    num_key_value_heads: Optional[int] = None
    head_dim: Optional[int] = None
    max_position_embeddings: int = 2048
    rms_norm_eps: float = 1e-6
    rope_theta: float = 10000.0
    rope_scaling: Optional[dict] = None
    attention_bias: bool = False
    mlp_bias: bool = False
    tie_word_embeddings: bool = False
    hidden_act: str = "silu"
    model_type: str = "llama"
    sliding_window: Optional[int] = None
    bos_token_id: Optional[int] = None
    eos_token_id: Optional[Union[int, list]] = None
    pad_token_id: Optional[int] = None
    torch_dtype: Optional[str] = None
    rotary_convention: str = "half"     # tinytorch's: "half" (HF weights) or "interleaved" (GPT-J pairs)
    extra: dict = field(default_factory=dict, repr=False)  # keys we read but do not use

    def __post_init__(self) -> None:
        if self.model_type not in MODEL_TYPES:
            raise ValueError(f"LlamaConfig: model_type {self.model_type!r} is not supported "
                             f"(supported: {', '.join(MODEL_TYPES)})")
        if self.num_key_value_heads is None:
            self.num_key_value_heads = self.num_attention_heads
        if self.head_dim is None:
            self.head_dim = self.hidden_size // self.num_attention_heads
        if self.num_attention_heads % self.num_key_value_heads:
            raise ValueError(f"LlamaConfig: num_attention_heads ({self.num_attention_heads}) must be a multiple of "
                             f"num_key_value_heads ({self.num_key_value_heads})")
        if self.hidden_act != "silu":
            raise NotImplementedError(f"LlamaConfig: hidden_act {self.hidden_act!r} is not supported (only 'silu')")

    @property
    def qkv_bias(self) -> bool:
        return True if self.model_type == "qwen2" else self.attention_bias

    @property
    def o_bias(self) -> bool:
        return False if self.model_type == "qwen2" else self.attention_bias

    @classmethod
    def from_dict(cls, d: dict) -> "LlamaConfig":
        """From a ``config.json`` dict; keys tinytorch does not use go to ``extra``."""
        d = dict(d)
        model_type = d.get("model_type", "llama")
        rope = d.pop("rope_parameters", None)  # transformers 5 keeps rope_theta/rope_type here
        if isinstance(rope, dict):
            d.setdefault("rope_theta", rope.get("rope_theta", 10000.0))
            if rope.get("rope_type", "default") != "default":
                d.setdefault("rope_scaling", {k: v for k, v in rope.items() if k != "rope_theta"})
        if model_type == "qwen2" and not d.get("use_sliding_window", False):
            d["sliding_window"] = None  # qwen2 lists a window it does not use
        if isinstance(d.get("torch_dtype", d.get("dtype")), str):
            d["torch_dtype"] = d.get("torch_dtype", d.get("dtype"))
        names = {f.name for f in fields(cls)} - {"extra"}
        known = {k: v for k, v in d.items() if k in names}
        known["extra"] = {k: v for k, v in d.items() if k not in names}
        return cls(**known)

    @classmethod
    def from_json_file(cls, path: Union[str, os.PathLike]) -> "LlamaConfig":
        with open(path, encoding="utf-8") as f:
            try:
                d = json.load(f)
            except ValueError as e:
                raise ValueError(f"LlamaConfig: {os.fspath(path)} is not valid JSON ({e})") from None
        if not isinstance(d, dict):
            raise ValueError(f"LlamaConfig: {os.fspath(path)} must hold a JSON object")
        return cls.from_dict(d)

    def to_dict(self) -> dict:
        d = asdict(self)
        extra = d.pop("extra")
        d.pop("rotary_convention")
        return {**extra, **d}

    def check_length(self, length: int, what: str) -> None:
        """Raises when ``length`` positions don't fit: the context, or mistral's sliding window
        (tinytorch attends to the full context, so a window shorter than the sequence is unsupported)."""
        if length > self.max_position_embeddings:
            raise ValueError(f"{what}: {length} positions exceed the model's context "
                             f"(max_position_embeddings={self.max_position_embeddings})")
        if self.sliding_window is not None and length > self.sliding_window:
            raise NotImplementedError(f"{what}: {length} positions exceed the sliding window "
                                      f"({self.sliding_window}) of this {self.model_type} model; sliding-window "
                                      "attention is not supported, so sequences must fit in the window")
