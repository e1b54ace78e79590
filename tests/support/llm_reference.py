"""Helpers of the tests/models/test_llm_*.py files: random tiny Llama-family checkpoints (HF names,
numpy), writing them as safetensors/config.json or GGUF, and a float64 numpy forward pass."""
from __future__ import annotations

import json
import os
import struct

import numpy as np

TINY_LLAMA = dict(model_type="llama", vocab_size=97, hidden_size=64, intermediate_size=96, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64, rms_norm_eps=1e-5,
                  rope_theta=10000.0, tie_word_embeddings=False)
TINY_QWEN2 = dict(TINY_LLAMA, model_type="qwen2", num_key_value_heads=1, tie_word_embeddings=True,
                  rope_theta=1000000.0, sliding_window=32, use_sliding_window=False)
# qwen3: per-head q/k norms, head_dim 24 != hidden / heads; gemma: GeGLU, 1 + w norms, scaled tied
# embeddings, one KV head; gemma2 adds soft caps (low enough to bend the values), a sliding window of 4
# on layers 0 and 2, sandwich norms and query_pre_attn_scalar
TINY_QWEN3 = dict(TINY_LLAMA, model_type="qwen3", head_dim=24, rope_theta=1000000.0, sliding_window=8,
                  use_sliding_window=False)
TINY_GEMMA = dict(TINY_LLAMA, model_type="gemma", head_dim=32, num_key_value_heads=1, tie_word_embeddings=True,
                  hidden_act="gelu_pytorch_tanh")
TINY_GEMMA2 = dict(TINY_GEMMA, model_type="gemma2", num_hidden_layers=3, num_key_value_heads=2, sliding_window=4,
                   query_pre_attn_scalar=20, attn_logit_softcapping=3.0, final_logit_softcapping=2.5,
                   hidden_activation="gelu_pytorch_tanh")
# mistral: every layer sees only the last 4 positions (key j visible to query i when i - 4 < j <= i)
TINY_MISTRAL = dict(TINY_LLAMA, model_type="mistral", sliding_window=4)
GEMMA_TYPES = ("gemma", "gemma2")


def head_dim(cfg: dict) -> int:
    return cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]


def sliding_layers(cfg: dict) -> list:
    """Which layers slide: every mistral layer (when it has a window, whatever its layer_types), the
    "sliding_attention" layers of gemma2's and qwen2/qwen3's layer_types; by default gemma2's even
    layers, and with qwen's use_sliding_window the layers i >= max_window_layers (default 28)."""
    n, kind = cfg["num_hidden_layers"], cfg["model_type"]
    if kind == "mistral":
        return [cfg.get("sliding_window") is not None] * n
    if kind == "gemma2":
        default = [(i + 1) % 2 == 1 for i in range(n)]
    elif kind in ("qwen2", "qwen3") and cfg.get("use_sliding_window") and cfg.get("sliding_window") is not None:
        default = [i >= cfg.get("max_window_layers", 28) for i in range(n)]
    elif kind in ("qwen2", "qwen3"):
        default = [False] * n
    else:
        return [False] * n
    types = cfg.get("layer_types")
    return default if types is None else [t == "sliding_attention" for t in types]


def random_weights(cfg: dict, seed: int = 0) -> dict:
    """HF-named float64 weights of a model with config cfg (scaled so activations stay O(1))."""
    rng = np.random.default_rng(seed)
    h, f, V = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    H, Hkv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    D = head_dim(cfg)
    gemma = cfg["model_type"] in GEMMA_TYPES
    # gemma's norms multiply by 1 + w (w near 0) and its embeddings by sqrt(hidden)
    norm = (lambda n: rng.uniform(-0.5, 0.5, n)) if gemma else (lambda n: rng.uniform(0.5, 1.5, n))  # noqa: E731
    w = {"model.embed_tokens.weight": rng.normal(0, 1.0 / np.sqrt(h) if gemma else 1.0, (V, h)),
         "model.norm.weight": norm(h)}
    qkv_bias = cfg["model_type"] == "qwen2" or cfg.get("attention_bias", False)
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        lin = lambda o, n: rng.normal(0, 1 / np.sqrt(n), (o, n))  # noqa: E731
        w[p + "self_attn.q_proj.weight"] = lin(H * D, h) * (2.0 if gemma else 1.0)   # gemma2: scores of a few
        w[p + "self_attn.k_proj.weight"] = lin(Hkv * D, h) * (2.0 if gemma else 1.0)  # units, bent by the cap
        w[p + "self_attn.v_proj.weight"] = lin(Hkv * D, h)
        w[p + "self_attn.o_proj.weight"] = lin(h, H * D)
        if qkv_bias:
            for n, o in (("q", H * D), ("k", Hkv * D), ("v", Hkv * D)):
                w[p + f"self_attn.{n}_proj.bias"] = rng.normal(0, 0.5, o)
        w[p + "mlp.gate_proj.weight"] = lin(f, h)
        w[p + "mlp.up_proj.weight"] = lin(f, h)
        w[p + "mlp.down_proj.weight"] = lin(h, f)
        w[p + "input_layernorm.weight"] = norm(h)
        w[p + "post_attention_layernorm.weight"] = norm(h)
        if cfg["model_type"] == "qwen3":
            w[p + "self_attn.q_norm.weight"] = rng.uniform(0.5, 1.5, D)
            w[p + "self_attn.k_norm.weight"] = rng.uniform(0.5, 1.5, D)
        if cfg["model_type"] == "gemma2":
            w[p + "pre_feedforward_layernorm.weight"] = norm(h)
            w[p + "post_feedforward_layernorm.weight"] = norm(h)
    if not cfg.get("tie_word_embeddings", False):
        w["lm_head.weight"] = lin(V, h)
    return w


def write_safetensors(path: str, tensors: dict, dtype=np.float32) -> None:
    """A plain safetensors file (as huggingface's writer: header JSON, raw little-endian bytes)."""
    code = {np.float32: "F32", np.float16: "F16", np.float64: "F64"}[dtype]
    header, blobs, off = {}, [], 0
    for name, a in tensors.items():
        b = np.ascontiguousarray(a, dtype=dtype).tobytes()
        header[name] = {"dtype": code, "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def write_checkpoint(folder: str, cfg: dict, weights: dict, shards: int = 1) -> str:
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f)
    if shards == 1:
        write_safetensors(os.path.join(folder, "model.safetensors"), weights)
        return folder
    names = sorted(weights)
    weight_map = {}
    for s in range(shards):
        part = names[s::shards]
        fname = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
        write_safetensors(os.path.join(folder, fname), {n: weights[n] for n in part})
        weight_map.update({n: fname for n in part})
    with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {}, "weight_map": weight_map}, f)
    return folder


def rope_np(x: np.ndarray, pos: np.ndarray, theta: float, convention: str = "half") -> np.ndarray:
    """x: (..., T, D) rotated at positions pos (T,) in float64."""
    D = x.shape[-1]
    inv = 1.0 / theta ** (np.arange(0, D, 2) / D)
    ang = pos[:, None] * inv[None, :]
    c, s = np.cos(ang), np.sin(ang)
    if convention == "half":
        x1, x2 = x[..., :D // 2], x[..., D // 2:]
        return np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], -1)
    x0, x1 = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2], out[..., 1::2] = x0 * c - x1 * s, x0 * s + x1 * c
    return out


def gelu_tanh_np(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def soft_cap_np(x: np.ndarray, cap) -> np.ndarray:
    return x if cap is None else cap * np.tanh(x / cap)


def forward_np(w: dict, cfg: dict, ids) -> np.ndarray:
    """Float64 logits (T, V) of one sequence of token ids, written from the equations of the
    architecture (llama, qwen2; mistral's and qwen2/qwen3's sliding windows; qwen3's q/k norms; gemma's
    1 + w norms, GeGLU and scaled embeddings; gemma2's soft caps, sliding window and sandwich norms)."""
    h, H, Hkv = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    D, eps, kind = head_dim(cfg), cfg["rms_norm_eps"], cfg["model_type"]
    gemma = kind in GEMMA_TYPES
    ids = np.asarray(ids)
    T = len(ids)
    pos = np.arange(T, dtype=np.float64)
    unit = lambda x: x / np.sqrt((x * x).mean(-1, keepdims=True) + eps)  # noqa: E731
    rms = (lambda x, g: unit(x) * (1 + g)) if gemma else (lambda x, g: unit(x) * g)  # noqa: E731
    lin = lambda x, n: x @ w[n + ".weight"].T + w.get(n + ".bias", 0.0)  # noqa: E731
    act = gelu_tanh_np if gemma else (lambda g: g / (1 + np.exp(-g)))  # noqa: E731
    scale = (cfg.get("query_pre_attn_scalar") or D) ** -0.5 if kind == "gemma2" else D ** -0.5
    x = w["model.embed_tokens.weight"][ids]
    if gemma:
        x = x * float(np.float32(np.sqrt(h)))   # transformers' float32 buffer
    i, j = np.arange(T)[:, None], np.arange(T)[None, :]
    for layer, sliding in enumerate(sliding_layers(cfg)):
        p = f"model.layers.{layer}."
        a = rms(x, w[p + "input_layernorm.weight"])
        q = lin(a, p + "self_attn.q_proj").reshape(T, H, D).transpose(1, 0, 2)
        k = lin(a, p + "self_attn.k_proj").reshape(T, Hkv, D).transpose(1, 0, 2)
        v = lin(a, p + "self_attn.v_proj").reshape(T, Hkv, D).transpose(1, 0, 2)
        if kind == "qwen3":
            q, k = unit(q) * w[p + "self_attn.q_norm.weight"], unit(k) * w[p + "self_attn.k_norm.weight"]
        q, k = rope_np(q, pos, cfg["rope_theta"]), rope_np(k, pos, cfg["rope_theta"])
        k, v = np.repeat(k, H // Hkv, 0), np.repeat(v, H // Hkv, 0)
        s = soft_cap_np(q @ k.transpose(0, 2, 1) * scale, cfg.get("attn_logit_softcapping"))
        keep = (j <= i) & ((j > i - cfg["sliding_window"]) if sliding else True)
        s = np.where(keep, s, -np.inf)
        s = np.exp(s - s.max(-1, keepdims=True))
        o = lin(((s / s.sum(-1, keepdims=True)) @ v).transpose(1, 0, 2).reshape(T, H * D), p + "self_attn.o_proj")
        if kind == "gemma2":
            x = x + rms(o, w[p + "post_attention_layernorm.weight"])
            m = rms(x, w[p + "pre_feedforward_layernorm.weight"])
        else:
            x = x + o
            m = rms(x, w[p + "post_attention_layernorm.weight"])
        f = lin(act(lin(m, p + "mlp.gate_proj")) * lin(m, p + "mlp.up_proj"), p + "mlp.down_proj")
        x = x + (rms(f, w[p + "post_feedforward_layernorm.weight"]) if kind == "gemma2" else f)
    x = rms(x, w["model.norm.weight"])
    head = w.get("lm_head.weight", w["model.embed_tokens.weight"])
    return soft_cap_np(x @ head.T, cfg.get("final_logit_softcapping"))


def llama_cpp_permute(w: np.ndarray, n_head: int) -> np.ndarray:
    """convert_hf_to_gguf.py's LlamaModel.permute of q/k rows (HF half-split -> interleaved pairs)."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def write_gguf_file(writer) -> None:
    """Writes a ``gguf.GGUFWriter``'s header, key-value data and tensors to its file and closes it."""
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
