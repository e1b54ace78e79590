"""tinytorch.models building blocks: rotary embeddings in both conventions and with the rope
scalings against float64 numpy, the interleaved convention equal to the half-split one on llama.cpp's
permuted rows, SwiGLU and GQA attention against numpy, the KV cache's bookkeeping and errors."""
from __future__ import annotations

import math

import numpy as np
import pytest

import tinytorch as tt
from tinytorch.models import KVCache, LlamaConfig, RotaryEmbedding, apply_rotary_pos_emb, rope_inv_freq, swiglu
from tinytorch.models.layers import LlamaAttention

from support.llm_reference import llama_cpp_permute, rope_np
from support.numeric import FLOAT_DTYPES, assert_close, make


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("convention", ["half", "interleaved"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_rotary_matches_numpy(dtype, convention, layout):
    B, H, T, D = 2, 3, 5, 8
    x, xr = make((B, H, T, D), dtype, layout, seed=1)
    pos = np.array([[0, 1, 2, 3, 4], [3, 4, 5, 6, 9]])
    rope = RotaryEmbedding(D, max_position_embeddings=16, rope_theta=500.0, convention=convention)
    cos, sin = rope(tt.tensor(pos), getattr(tt, dtype))
    out = apply_rotary_pos_emb(x, cos, sin, convention)
    ref = np.stack([rope_np(xr[b], pos[b].astype(np.float64), 500.0, convention) for b in range(B)])
    assert_close(out, ref, dtype)


def test_interleaved_rotary_on_permuted_rows_equals_half_split():
    """llama.cpp permutes q/k rows so its (GPT-J) rotary gives HF's (half-split) result: the two
    conventions agree up to that permutation, which is what the GGUF loader undoes."""
    rng = np.random.default_rng(0)
    H, D, C, T = 2, 8, 6, 4
    w = rng.normal(size=(H * D, C))
    x = rng.normal(size=(T, C))
    pos = np.arange(T, dtype=np.float64)
    q_hf = (x @ w.T).reshape(T, H, D).transpose(1, 0, 2)
    q_cpp = (x @ llama_cpp_permute(w, H).T).reshape(T, H, D).transpose(1, 0, 2)
    rope_h = RotaryEmbedding(D, 16, convention="half")
    rope_i = RotaryEmbedding(D, 16, convention="interleaved")
    p = tt.tensor(pos.astype(np.int64))[None]
    half = apply_rotary_pos_emb(tt.tensor(q_hf)[None], *rope_h(p, tt.float64), "half")[0].numpy()
    inter = apply_rotary_pos_emb(tt.tensor(q_cpp)[None], *rope_i(p, tt.float64), "interleaved")[0].numpy()
    # the interleaved result, its rows un-permuted per head, is the half-split result
    back = inter.reshape(H, T, D // 2, 2).transpose(0, 1, 3, 2).reshape(H, T, D)
    assert_close(back, half, "float64")
    assert_close(half, rope_np(q_hf, pos, 10000.0, "half"), "float64")


def _llama3_numpy(inv, factor, low, high, old):
    wavelen = 2 * math.pi / inv
    out = []
    for f, wl in zip(inv, wavelen):
        if wl < old / high:
            out.append(f)
        elif wl > old / low:
            out.append(f / factor)
        else:
            s = (old / wl - low) / (high - low)
            out.append((1 - s) * f / factor + s * f)
    return np.array(out)


def test_rope_scalings():
    D, theta = 64, 500000.0
    base = 1.0 / theta ** (np.arange(0, D, 2) / D)
    assert_close(rope_inv_freq(D, theta, precision=np.float64), base, "float64")
    assert_close(rope_inv_freq(D, theta, {"rope_type": "linear", "factor": 4.0}, precision=np.float64), base / 4,
                 "float64")
    llama3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
              "original_max_position_embeddings": 8192}
    assert_close(rope_inv_freq(D, theta, llama3, precision=np.float64), _llama3_numpy(base, 8.0, 1.0, 4.0, 8192),
                 "float64")
    assert_close(rope_inv_freq(D, theta, llama3), _llama3_numpy(base, 8.0, 1.0, 4.0, 8192), "float32")
    with pytest.raises(NotImplementedError, match="yarn"):
        rope_inv_freq(D, theta, {"rope_type": "yarn", "factor": 2.0})


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_swiglu_matches_numpy(dtype):
    x, xr = make((3, 8), dtype, "transposed", seed=2)
    g, gr = make((12, 8), dtype, seed=3)
    u, ur = make((12, 8), dtype, seed=4)
    d, dr = make((8, 12), dtype, seed=5)
    a = xr @ gr.T
    ref = (a / (1 + np.exp(-a)) * (xr @ ur.T)) @ dr.T
    tol = {"float16": (1e-2, 1e-2), "bfloat16": (6e-2, 6e-2)}.get(dtype)  # three chained roundings
    assert_close(swiglu(x, g, u, d), ref, dtype, tol=tol)


@pytest.mark.parametrize("kv_heads", [4, 2, 1])
def test_gqa_attention_matches_numpy(kv_heads):
    cfg = LlamaConfig(hidden_size=32, num_attention_heads=4, num_key_value_heads=kv_heads, intermediate_size=8,
                      num_hidden_layers=1, vocab_size=8, max_position_embeddings=16)
    tt.manual_seed(0)
    attn = LlamaAttention(cfg, 0, dtype=tt.float64)
    x, xr = make((2, 5, 32), "float64", seed=6)
    rope = RotaryEmbedding(8, 16)
    pos = tt.arange(5)[None]
    out = attn(x, *rope(pos, tt.float64), is_causal=True)
    W = {n: getattr(attn, n).weight.detach().numpy() for n in ("q_proj", "k_proj", "v_proj", "o_proj")}
    q = (xr @ W["q_proj"].T).reshape(2, 5, 4, 8).transpose(0, 2, 1, 3)
    k = (xr @ W["k_proj"].T).reshape(2, 5, kv_heads, 8).transpose(0, 2, 1, 3)
    v = (xr @ W["v_proj"].T).reshape(2, 5, kv_heads, 8).transpose(0, 2, 1, 3)
    p = np.arange(5.0)
    q, k = rope_np(q, p, 10000.0), rope_np(k, p, 10000.0)
    k, v = np.repeat(k, 4 // kv_heads, 1), np.repeat(v, 4 // kv_heads, 1)
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(8) + np.triu(np.full((5, 5), -np.inf), 1)
    s = np.exp(s - s.max(-1, keepdims=True))
    o = (s / s.sum(-1, keepdims=True)) @ v
    assert_close(out, o.transpose(0, 2, 1, 3).reshape(2, 5, 32) @ W["o_proj"].T, "float64")


def test_kv_cache_writes_in_place_and_checks():
    c = KVCache(2, 1, 2, 4, max_length=6)
    k0, v0 = c.keys[0], c.values[0]
    k = tt.ones(1, 2, 3, 4)
    ks, vs = c.update(0, k, k * 2)
    assert ks.shape == (1, 2, 3, 4) and float(vs.sum()) == 48.0
    c.advance(3)
    ks, _ = c.update(0, tt.full((1, 2, 1, 4), 5.0), tt.zeros(1, 2, 1, 4))
    assert ks.shape == (1, 2, 4, 4) and float(ks[0, 0, 3, 0]) == 5.0
    assert c.keys[0] is k0 and c.values[0] is v0  # static storage
    c.advance(1)
    with pytest.raises(ValueError, match="max_length=6"):
        c.update(1, tt.ones(1, 2, 3, 4), tt.ones(1, 2, 3, 4))
    with pytest.raises(ValueError, match="does not fit"):
        c.update(1, tt.ones(1, 3, 1, 4), tt.ones(1, 3, 1, 4))


def test_config_from_dict_and_errors():
    c = LlamaConfig.from_dict({"model_type": "qwen2", "hidden_size": 8, "num_attention_heads": 2,
                               "sliding_window": 4, "use_sliding_window": False, "rope_parameters":
                               {"rope_theta": 5.0, "rope_type": "default"}, "architectures": ["X"]})
    assert c.sliding_window is None and c.rope_theta == 5.0 and c.qkv_bias and not c.o_bias
    assert c.extra["architectures"] == ["X"] and c.num_key_value_heads == 2 and c.head_dim == 4
    with pytest.raises(ValueError, match="model_type 'gpt2'"):
        LlamaConfig(model_type="gpt2")
    with pytest.raises(ValueError, match="multiple of num_key_value_heads"):
        LlamaConfig(num_attention_heads=4, num_key_value_heads=3)
    m = LlamaConfig(model_type="mistral", sliding_window=8, max_position_embeddings=32)
    m.check_length(32, "x")                    # mistral's window is masked: any length up to the context
    with pytest.raises(ValueError, match="exceed the model's context"):
        m.check_length(33, "x")
    q = LlamaConfig.from_dict({"model_type": "qwen2", "sliding_window": 8, "use_sliding_window": True,
                               "max_window_layers": 0, "max_position_embeddings": 32})
    q.check_length(32, "x")                    # qwen's windows are masked too (test_llm_qwen_window.py)
    with pytest.raises(ValueError, match="exceed the model's context"):
        q.check_length(33, "x")


def test_import_needs_no_optional_package():
    """`import tinytorch.models` works without gguf, tokenizers and jinja2 (imported on use)."""
    import subprocess
    import sys
    code = ("import sys, tinytorch.models; bad = [m for m in ('gguf', 'tokenizers', 'jinja2') if m in sys.modules]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=str(__import__("pathlib").Path(tt.__file__).parents[1]))
