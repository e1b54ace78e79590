"""Helpers of the tests/cpu/test_llm_*.py files: random tiny Llama-family checkpoints (HF names,
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


def random_weights(cfg: dict, seed: int = 0) -> dict:
    """HF-named float64 weights of a model with config cfg (scaled so activations stay O(1))."""
    rng = np.random.default_rng(seed)
    h, f, V = cfg["hidden_size"], cfg["intermediate_size"], cfg["vocab_size"]
    H, Hkv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    D = h // H
    w = {"model.embed_tokens.weight": rng.normal(0, 1.0, (V, h)), "model.norm.weight": rng.uniform(0.5, 1.5, h)}
    qkv_bias = cfg["model_type"] == "qwen2" or cfg.get("attention_bias", False)
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        lin = lambda o, n: rng.normal(0, 1 / np.sqrt(n), (o, n))  # noqa: E731
        w[p + "self_attn.q_proj.weight"] = lin(H * D, h)
        w[p + "self_attn.k_proj.weight"] = lin(Hkv * D, h)
        w[p + "self_attn.v_proj.weight"] = lin(Hkv * D, h)
        w[p + "self_attn.o_proj.weight"] = lin(h, H * D)
        if qkv_bias:
            for n, o in (("q", H * D), ("k", Hkv * D), ("v", Hkv * D)):
                w[p + f"self_attn.{n}_proj.bias"] = rng.normal(0, 0.5, o)
        w[p + "mlp.gate_proj.weight"] = lin(f, h)
        w[p + "mlp.up_proj.weight"] = lin(f, h)
        w[p + "mlp.down_proj.weight"] = lin(h, f)
        w[p + "input_layernorm.weight"] = rng.uniform(0.5, 1.5, h)
        w[p + "post_attention_layernorm.weight"] = rng.uniform(0.5, 1.5, h)
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


def forward_np(w: dict, cfg: dict, ids) -> np.ndarray:
    """Float64 logits (T, V) of one sequence of token ids, written from the Llama equations."""
    h, H, Hkv = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    D, eps = h // H, cfg["rms_norm_eps"]
    ids = np.asarray(ids)
    T = len(ids)
    pos = np.arange(T, dtype=np.float64)
    rms = lambda x, g: x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * g  # noqa: E731
    lin = lambda x, n: x @ w[n + ".weight"].T + w.get(n + ".bias", 0.0)  # noqa: E731
    x = w["model.embed_tokens.weight"][ids]
    causal = np.triu(np.full((T, T), -np.inf), 1)
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        a = rms(x, w[p + "input_layernorm.weight"])
        q = lin(a, p + "self_attn.q_proj").reshape(T, H, D).transpose(1, 0, 2)
        k = lin(a, p + "self_attn.k_proj").reshape(T, Hkv, D).transpose(1, 0, 2)
        v = lin(a, p + "self_attn.v_proj").reshape(T, Hkv, D).transpose(1, 0, 2)
        q, k = rope_np(q, pos, cfg["rope_theta"]), rope_np(k, pos, cfg["rope_theta"])
        k, v = np.repeat(k, H // Hkv, 0), np.repeat(v, H // Hkv, 0)
        s = q @ k.transpose(0, 2, 1) / np.sqrt(D) + causal
        s = np.exp(s - s.max(-1, keepdims=True))
        o = (s / s.sum(-1, keepdims=True)) @ v
        x = x + lin(o.transpose(1, 0, 2).reshape(T, H * D), p + "self_attn.o_proj")
        m = rms(x, w[p + "post_attention_layernorm.weight"])
        g = lin(m, p + "mlp.gate_proj")
        x = x + lin(g / (1 + np.exp(-g)) * lin(m, p + "mlp.up_proj"), p + "mlp.down_proj")
    x = rms(x, w["model.norm.weight"])
    head = w.get("lm_head.weight", w["model.embed_tokens.weight"])
    return x @ head.T


def llama_cpp_permute(w: np.ndarray, n_head: int) -> np.ndarray:
    """convert_hf_to_gguf.py's LlamaModel.permute of q/k rows (HF half-split -> interleaved pairs)."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)
