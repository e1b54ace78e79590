"""Loading llama.cpp GGUF files (architectures llama, mistral, qwen2, qwen3, gemma, gemma2), parsed and
checked by :mod:`tinytorch.models.gguf_file`: the metadata becomes a :class:`LlamaConfig`, the tensors
get Hugging Face names, and the tensor table is checked against the config before the model is built.

* llama.cpp's converter permutes the rows of llama's q/k weights so that its rotary pairs
  neighbouring dims (GPT-J); we undo that permutation (as transformers' GGUF loader), so the model
  keeps the half-split convention of the HF weights. qwen2/qwen3/gemma files are not permuted
  (llama.cpp runs them with the NeoX rotary).
* gemma's converter stores every RMSNorm weight plus 1 (llama.cpp multiplies by the weight); the
  model's norms compute x * (1 + weight) as transformers', so the loader subtracts the 1 again.
* gemma2's GGUF has no ``query_pre_attn_scalar``: llama.cpp scales the scores by 1/sqrt(head_dim),
  or 1/sqrt(hidden / heads) for the 46-layer (27B) model; we do the same.
* F32/F16/BF16 tensors are read as they are stored and cast once to the model dtype (default
  float32); quantized tensors that stay dense (the embedding rows, a float64 model) are dequantized
  once, by tinytorch's kernels for the types it packs (bit-identical to ``gguf.quants.dequantize``)
  and by the ``gguf`` package for the others. Linear layers are built by :func:`_make_linear`;
  q/k/v and gate/up of a layer are copied once, out of the memory map, into one packed buffer that
  the fused projections (``qkv_proj``, ``gate_up_proj``) and the three or two layers share.
"""
from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from typing import Any, Dict, Optional

import numpy as np

from tinytorch import _C
from tinytorch._tensor.creation import from_numpy
from tinytorch._core.dtype import bfloat16, float32, float64
from tinytorch._core.tensor_base import _wrap
from tinytorch.models.config import LlamaConfig
from tinytorch.models.gguf_file import GGML_TYPES, GGUFFile, read_gguf
from tinytorch.models.init_control import Linear, no_init_weights
from tinytorch.nn.modules.module import Module
from tinytorch.nn.modules.quantized import SUPPORTED_QTYPES, QuantizedLinear
from tinytorch.nn.parameter import Parameter
from tinytorch._tensor.raw_bits import from_bits
from tinytorch._tensor.tensor import Tensor

LLM_EXTRA = "pip install gguf tokenizers jinja2 (the [llm] extra: pip install '.[llm]' in tinytorch's checkout)"
SUPPORTED_ARCHITECTURES = ("llama", "mistral", "qwen2", "qwen3", "gemma", "gemma2")
_PERMUTED_QK = ("llama", "mistral")  # convert_hf_to_gguf.py permutes q/k rows for these
_GLOBAL_TENSORS = {"token_embd.weight": "model.embed_tokens.weight", "output_norm.weight": "model.norm.weight",
                   "output.weight": "lm_head.weight"}
_BLOCK_TENSORS = {"attn_norm": "input_layernorm", "ffn_norm": "post_attention_layernorm",
                  "attn_q": "self_attn.q_proj", "attn_k": "self_attn.k_proj", "attn_v": "self_attn.v_proj",
                  "attn_output": "self_attn.o_proj", "ffn_gate": "mlp.gate_proj", "ffn_up": "mlp.up_proj",
                  "ffn_down": "mlp.down_proj"}
_ARCH_BLOCK_TENSORS = {   # per architecture, on top of _BLOCK_TENSORS
    "qwen3": {"attn_q_norm": "self_attn.q_norm", "attn_k_norm": "self_attn.k_norm"},
    "gemma2": {"ffn_norm": "pre_feedforward_layernorm", "post_attention_norm": "post_attention_layernorm",
               "post_ffw_norm": "post_feedforward_layernorm"},
}
_LINEARS = {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"}
_FUSED = (("attn_q", "attn_k", "attn_v"), ("ffn_gate", "ffn_up"))   # LlamaAttention/LlamaMLP.fuse_projections
_F32, _F16, _BF16 = 0, 1, 30   # ggml type codes
_INTEGER_TYPES = (24, 25, 26, 27)   # I8, I16, I32, I64: never a model weight
_BLOCK_NAME = re.compile(r"^blk\.(\d+)\.(\w+)\.(weight|bias)$")


def import_gguf():
    """The ``gguf`` package (needed only to dequantize types tinytorch has no kernel for)."""
    try:
        import gguf
    except ImportError:
        raise ImportError(f"reading GGUF files needs the `gguf` package: {LLM_EXTRA}") from None
    return gguf


def open_gguf(path) -> GGUFFile:
    """The parsed and checked :class:`~tinytorch.models.gguf_file.GGUFFile` at path; a missing file
    raises FileNotFoundError, a file that is not GGUF, truncated or corrupt a ValueError naming it."""
    return read_gguf(path)


def field_value(reader: GGUFFile, key: str, default=None):
    """The metadata value under key (str, number, bool, or a list of them), or default."""
    return reader.value(key, default)


def config_from_gguf(reader, path: str) -> LlamaConfig:
    """The :class:`LlamaConfig` that the file's ``general.architecture`` and ``<arch>.*`` keys describe.
    Every value is checked for its type and range (a width or count a positive int, rope_theta a finite
    number > 0, ...); an error names the file and the key."""
    arch = field_value(reader, "general.architecture")
    if arch not in SUPPORTED_ARCHITECTURES:
        raise NotImplementedError(f"load_gguf: {path} holds a {arch!r} model; supported architectures: "
                                  f"{', '.join(SUPPORTED_ARCHITECTURES)}")
    def key(name, default=None, required=False):
        v = field_value(reader, f"{arch}.{name}", default)
        if v is None and required:
            raise ValueError(f"load_gguf: {path} lacks the metadata key {arch}.{name}")
        return v
    def size(name, default=None, required=False):   # a count or width: a positive int
        v = key(name, default, required)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v <= 0):
            raise ValueError(f"load_gguf: {path}: metadata key {arch}.{name} must be a positive integer, got {v!r}")
        return v
    def real(name, default=None, least: float = 0.0, strict: bool = True):   # a finite number > (>=) least
        v = key(name, default)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or \
                not (v > least if strict else v >= least):
            raise ValueError(f"load_gguf: {path}: metadata key {arch}.{name} must be a finite number "
                             f"{'>' if strict else '>='} {least:g}, got {v!r}")
        return float(v)
    def token_id(name):
        v = field_value(reader, name)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
            raise ValueError(f"load_gguf: {path}: metadata key {name} must be a non-negative integer token id, "
                             f"got {v!r}")
        return v
    heads = size("attention.head_count", required=True)
    hidden = size("embedding_length", required=True)
    head_dim = size("attention.key_length", hidden // heads)
    layers = size("block_count", required=True)
    if layers > len(reader.tensors):
        raise ValueError(f"load_gguf: {path}: block_count {layers}, but the file holds {len(reader.tensors)} "
                         "tensors in all (each block has several)")
    rot = size("rope.dimension_count", head_dim)
    if rot != head_dim:
        raise NotImplementedError(f"load_gguf: {path}: partial rotary (rope.dimension_count={rot} < head_dim="
                                  f"{head_dim}) is not supported")
    scaling = None
    kind = key("rope.scaling.type", "none")
    if kind == "linear":
        scaling = {"rope_type": "linear", "factor": real("rope.scaling.factor", 1.0)}
    elif kind not in ("none", None):
        raise NotImplementedError(f"load_gguf: {path}: rope scaling {kind!r} is not supported (none, linear)")
    names = reader.tensors
    if "rope_freqs.weight" in names:
        scaling = {"rope_type": "freq_factors", "factors": _freq_factors(names["rope_freqs.weight"], head_dim, path)}
    tokens = reader.metadata.get("tokenizer.ggml.tokens")
    vocab = size("vocab_size", len(tokens) if isinstance(tokens, list) else None)
    if vocab is None:
        if "token_embd.weight" not in names:
            raise ValueError(f"load_gguf: {path} has no vocab_size, tokenizer.ggml.tokens or token_embd.weight")
        vocab = names["token_embd.weight"].dims[-1]
    gemma2 = {}
    if arch == "gemma2":
        gemma2 = dict(attn_logit_softcapping=real("attn_logit_softcapping"),
                      final_logit_softcapping=real("final_logit_softcapping"),
                      sliding_window=size("attention.sliding_window"),
                      query_pre_attn_scalar=hidden // heads if layers == 46 else head_dim)
    model_type = arch
    window = size("attention.sliding_window")
    if arch in ("llama", "mistral") and window is not None:
        # llama.cpp writes mistral as arch "llama"; a window in the metadata makes it mistral's
        gemma2 = dict(sliding_window=window)
        model_type = "mistral"
    try:
        return LlamaConfig(
            model_type=model_type, vocab_size=int(vocab), hidden_size=hidden,
            intermediate_size=size("feed_forward_length", required=True),
            num_hidden_layers=layers, num_attention_heads=heads,
            num_key_value_heads=size("attention.head_count_kv", heads), head_dim=head_dim,
            max_position_embeddings=size("context_length", 2048),
            rms_norm_eps=real("attention.layer_norm_rms_epsilon", 1e-5, strict=False),
            rope_theta=real("rope.freq_base", 10000.0), rope_scaling=scaling,
            tie_word_embeddings="output.weight" not in names,
            bos_token_id=token_id("tokenizer.ggml.bos_token_id"),
            eos_token_id=token_id("tokenizer.ggml.eos_token_id"),
            pad_token_id=token_id("tokenizer.ggml.padding_token_id"), **gemma2)
    except (ValueError, NotImplementedError) as e:   # LlamaConfig's own checks (heads vs kv heads, ...)
        raise type(e)(f"load_gguf: {path}: {e}") from None


def _freq_factors(t, head_dim: int, path: str) -> list:
    """llama.cpp's ``rope_freqs.weight``: one float divisor > 0 per rotary frequency (head_dim / 2)."""
    if t.ggml_type not in (_F32, _F16) or t.shape != (head_dim // 2,):
        raise ValueError(f"load_gguf: {path}: tensor rope_freqs.weight must be F32 or F16 of shape [{head_dim // 2}] "
                         f"(one factor per rotary frequency), got {t.type_name} of shape {list(t.shape)}")
    factors = np.asarray(t.data, dtype=np.float64)
    if not (np.isfinite(factors).all() and (factors > 0).all()):
        raise ValueError(f"load_gguf: {path}: tensor rope_freqs.weight: the frequency factors must be finite and "
                         f"> 0, got {factors.tolist()}")
    return [float(x) for x in factors]


def unpermute_rows(rows: np.ndarray, n_head: int) -> np.ndarray:
    """Undoes convert_hf_to_gguf.py's ``permute`` of q/k rows (rows: (n_head * D, ...), raw or
    dequantized): within each head, llama.cpp's order (pairs) back to HF's (two halves)."""
    d = rows.shape[0] // n_head // 2
    return rows.reshape(n_head, d, 2, *rows.shape[1:]).swapaxes(1, 2).reshape(rows.shape)


@dataclass
class WeightInfo:
    """One GGUF tensor: its names, ggml type code, logical shape (numpy order: rows first) and raw data
    (rows already un-permuted; quantized types as uint8 blocks, one row of blocks per row; a read-only
    view of the file unless un-permuted)."""
    gguf_name: str
    hf_name: str
    qtype: int
    shape: tuple
    raw: np.ndarray
    path: str = ""      # the file, for errors

    @property
    def type_name(self) -> str:
        return GGML_TYPES[self.qtype][0]


def _writable(a: np.ndarray) -> np.ndarray:
    """a, or a contiguous copy when it is read-only (the file's map) or strided (a tensor borrows it)."""
    return a if a.flags.writeable and a.flags.c_contiguous else np.array(a, order="C")


def dense(info: WeightInfo, dtype, device) -> Tensor:
    """The tensor as a dense ``dtype`` tensor: F32/F16 read as stored, BF16 from its bits, the packed
    types tinytorch runs dequantized to float32 by its kernel, other types by ``gguf.quants.dequantize``."""
    q = info.qtype
    if q in (_F32, _F16):
        t = from_numpy(_writable(info.raw))
    elif q == _BF16:
        t = from_bits(_writable(info.raw.view(np.uint16).reshape(info.shape)), bfloat16)
    elif q in SUPPORTED_QTYPES:
        k = info.shape[-1]
        rows = info.raw.size // _C.quant_row_bytes(q, k)
        t = _wrap(_C.quant_dequantize(from_numpy(_writable(info.raw))._impl, q, rows, k, float32.code))
        t = t.reshape(info.shape)
    else:
        gguf = import_gguf()
        try:
            arr = gguf.quants.dequantize(info.raw, gguf.GGMLQuantizationType(q))
        except NotImplementedError:
            where = f"{info.path}: " if info.path else ""
            raise NotImplementedError(f"load_gguf: {where}tensor {info.gguf_name} has ggml type {info.type_name}, "
                                      "which gguf cannot dequantize") from None
        t = from_numpy(np.ascontiguousarray(arr, dtype=np.float32).reshape(info.shape))
    return t.to(device=device, dtype=dtype)


def norm_weight_minus_one(info: WeightInfo, dtype, device) -> Tensor:
    """A gemma norm weight as transformers stores it: the GGUF's value minus the 1 that llama.cpp's
    converter added (computed in float64, then cast)."""
    w = dense(info, float64, None).numpy() - 1.0
    return from_numpy(w).to(device=device, dtype=dtype)


# ---------------------------------------------------------------------------------------------------
# The one place a GGUF linear layer is built: packed (QuantizedLinear) for the block types it runs,
# else dequantized once into a dense nn.Linear.
# ---------------------------------------------------------------------------------------------------
def _make_linear(weight_info: WeightInfo, bias: Optional[Tensor] = None, dtype=float32, device=None,
                 packed: Optional[Tensor] = None) -> Module:
    """The Linear layer for one GGUF weight (out_features, in_features): a packed
    :class:`~tinytorch.nn.QuantizedLinear` for the block types it runs (weights stay 4-8 bits,
    dequantized inside the matvec; ``packed``, when given, holds the blocks already out of the file),
    else a dense Linear in ``dtype`` (dequantized once)."""
    out_f, in_f = weight_info.shape
    if int(weight_info.qtype) in SUPPORTED_QTYPES and dtype != float64:
        try:
            return QuantizedLinear(in_f, out_f, int(weight_info.qtype),
                                   weight_info.raw if packed is None else packed, bias, device)
        except ValueError:
            pass            # e.g. a K-quant row not a multiple of 256 weights: dense below
    with no_init_weights():
        layer = Linear(in_f, out_f, bias=bias is not None, device=device, dtype=dtype)
    layer.weight = Parameter(dense(weight_info, dtype, device), requires_grad=False)
    if bias is not None:
        layer.bias = Parameter(bias, requires_grad=False)
    return layer


def _weight_infos(reader: GGUFFile, config: LlamaConfig, arch: str, path: str) -> Dict[str, WeightInfo]:
    infos = {}
    block_tensors = {**_BLOCK_TENSORS, **_ARCH_BLOCK_TENSORS.get(arch, {})}
    for t in reader.tensors.values():
        if t.name == "rope_freqs.weight":
            continue
        m = _BLOCK_NAME.match(t.name)
        if t.name in _GLOBAL_TENSORS:
            hf = _GLOBAL_TENSORS[t.name]
        elif m and m.group(2) in block_tensors:
            hf = f"model.layers.{m.group(1)}.{block_tensors[m.group(2)]}.{m.group(3)}"
        else:
            raise NotImplementedError(f"load_gguf: {path}: tensor {t.name!r} has no place in a {arch} model "
                                      "(unsupported variant)")
        if t.ggml_type in _INTEGER_TYPES:
            raise ValueError(f"load_gguf: {path}: tensor {t.name!r} has ggml type {t.type_name}, an integer type; "
                             "model weights are float (F32, F16, BF16, F64) or quantized")
        raw = t.data
        if m and arch in _PERMUTED_QK and m.group(2) in ("attn_q", "attn_k"):
            heads = config.num_attention_heads if m.group(2) == "attn_q" else config.num_key_value_heads
            if t.shape[0] % (2 * heads):
                raise ValueError(f"load_gguf: {path}: tensor {t.name} has {t.shape[0]} rows, not a multiple of "
                                 f"2 x {heads} heads")
            raw = unpermute_rows(raw, heads)
        infos[hf] = WeightInfo(t.name, hf, t.ggml_type, t.shape, raw, path)
    return infos


def _check_table(infos: Dict[str, WeightInfo], config: LlamaConfig, arch: str, path: str) -> None:
    """Every block's weights present and the big ones (embedding, projections) of the config's shapes,
    checked before the model is built, so a file whose metadata claims more than its tensors hold
    (a huge block_count or width) fails here instead of allocating that model."""
    h, hd, inter = config.hidden_size, config.head_dim, config.intermediate_size
    q, kv = config.num_attention_heads * hd, config.num_key_value_heads * hd
    want = {"attn_q": (q, h), "attn_k": (kv, h), "attn_v": (kv, h), "attn_output": (h, q),
            "ffn_gate": (inter, h), "ffn_up": (inter, h), "ffn_down": (h, inter)}
    block_tensors = {**_BLOCK_TENSORS, **_ARCH_BLOCK_TENSORS.get(arch, {})}
    problems = []
    embed = infos.get("model.embed_tokens.weight")
    if embed is None:
        problems.append("token_embd.weight is missing")
    elif embed.shape != (config.vocab_size, h):
        problems.append(f"token_embd.weight: file {list(embed.shape)}, config {[config.vocab_size, h]}")
    for i in range(config.num_hidden_layers):
        for short, name in block_tensors.items():
            info = infos.get(f"model.layers.{i}.{name}.weight")
            if info is None:
                problems.append(f"blk.{i}.{short}.weight is missing")
            elif short in want and info.shape != want[short]:
                problems.append(f"blk.{i}.{short}.weight: file {list(info.shape)}, config {list(want[short])}")
            if len(problems) >= 8:
                break
        if len(problems) >= 8:
            break
    if problems:
        raise ValueError(f"load_gguf: {path}: the tensors do not match the metadata ({config.num_hidden_layers} "
                         f"blocks, hidden {h}, intermediate {inter}, vocab {config.vocab_size}): "
                         f"{'; '.join(problems)}")


def _packed_groups(infos: Dict[str, WeightInfo], config: LlamaConfig, dtype) -> Dict[str, Tensor]:
    """hf name -> the packed rows of q/k/v (gate/up) of each layer as row views of one buffer per group
    (copied once out of the file), so that ``fuse_projections`` stacks them without another copy."""
    views: Dict[str, Tensor] = {}
    if dtype == float64:
        return views
    for i in range(config.num_hidden_layers):
        for group in _FUSED:
            members = [infos.get(f"model.layers.{i}.{_BLOCK_TENSORS[g]}.weight") for g in group]
            if any(m is None for m in members) or len({(m.qtype, m.shape[1]) for m in members}) != 1 \
                    or members[0].qtype not in SUPPORTED_QTYPES:
                continue
            rows = from_numpy(np.concatenate([m.raw.reshape(m.shape[0], -1) for m in members]))
            start = 0
            for m in members:
                views[m.hf_name] = rows.narrow(0, start, m.shape[0])
                start += m.shape[0]
    return views


def load_gguf(cls, path, dtype=None, device=None):
    """Builds ``cls`` (a :class:`LlamaForCausalLM`) from a GGUF file. The tensor table is checked
    against the config before the model is built, and every tensor before the model is returned; a
    mismatch names the tensor and both shapes."""
    path = os.fspath(path)
    reader = open_gguf(path)
    arch = field_value(reader, "general.architecture")
    config = config_from_gguf(reader, path)
    dtype = dtype or float32
    infos = _weight_infos(reader, config, arch, path)
    _check_table(infos, config, arch, path)
    with no_init_weights():
        model = cls(config, device=device, dtype=dtype)
    own = model.state_dict(keep_vars=True)
    missing = [k for k in own if k not in infos and not (k == "lm_head.weight" and config.tie_word_embeddings)]
    unexpected = [k for k in infos if k not in own]
    bad = [f"{i.gguf_name}: file {list(i.shape)}, config {list(own[k].shape)}" for k, i in infos.items()
           if k in own and i.shape != tuple(own[k].shape)]
    if missing or unexpected or bad:
        raise ValueError(f"load_gguf: {path} does not match its own metadata: missing {missing[:8]}, unexpected "
                         f"{unexpected[:8]}, shape mismatches {bad[:8]}")
    packed = _packed_groups(infos, config, dtype)
    for hf, info in infos.items():
        module_path, _, kind = hf.rpartition(".")
        if info.gguf_name.split(".")[-2] in _LINEARS or hf == "lm_head.weight":
            if kind == "bias":
                continue
            bias_info = infos.get(module_path + ".bias")
            bias = dense(bias_info, dtype, device) if bias_info is not None else None
            parent_path, _, child = module_path.rpartition(".")
            setattr(model.get_submodule(parent_path) if parent_path else model, child,
                    _make_linear(info, bias, dtype, device, packed.get(hf)))
        else:
            module = model.get_submodule(module_path)
            if config.gemma_norm and info.gguf_name.endswith("norm.weight"):
                value = norm_weight_minus_one(info, dtype, device)
            else:
                value = dense(info, dtype, device)
            setattr(module, kind, Parameter(value, requires_grad=False))
    embed = infos["model.embed_tokens.weight"]
    if config.tie_word_embeddings and "lm_head.weight" not in infos:
        # the tied head reads the embedding's packed blocks (Q8_0 in most files: 4x fewer bytes per
        # token than float32); the lookup keeps the float rows. Same values, float32 sums.
        model.lm_head = _make_linear(embed, None, dtype, device)
    model.tie_weights()
    for layer in model.model.layers:   # packed q/k/v and gate/up as one kernel call each
        layer.self_attn.fuse_projections()
        layer.mlp.fuse_projections()
    model.gguf_path = path
    return model.eval()
