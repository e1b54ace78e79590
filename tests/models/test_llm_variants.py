"""qwen3, gemma, gemma2 and mistral (sliding window) without torch: their blocks (gemma's 1 + w
RMSNorm, soft-capping, qwen3's q/k norms, soft-capped GQA attention, the sliding-window mask) against
float64 numpy for every float dtype; tiny random checkpoints (HF safetensors, and GGUF written as
llama.cpp's converter writes them)
against the float64 numpy forward of tests/support/llm_reference.py; KV-cache decode, the CUDA-graph decode
step (run eagerly here) and greedy generation; the decode-graph cache's keys and invalidation; config
errors. test_llm_variants_hf.py checks the same models against transformers where torch is present."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import tinytorch as tt
from tinytorch.models import LlamaConfig, LlamaForCausalLM
from tinytorch.models.layers import LlamaAttention
from tinytorch.models.variant_blocks import GemmaRMSNorm, sliding_window_mask, soft_cap, softcapped_attention

from support.llm_checks import (check_cache_and_graph_step_equal_full_forward, check_full_and_cached_logits,
                                 check_greedy_generate_and_padded_batch)
from support.llm_reference import (TINY_GEMMA, TINY_GEMMA2, TINY_MISTRAL, TINY_QWEN3, forward_np, gelu_tanh_np,
                                   head_dim, llama_cpp_permute, random_weights, rope_np, write_checkpoint,
                                   write_gguf_file)
from support.numeric import FLOAT_DTYPES, GRAD_TOL, assert_close, make

NET_TOL_F32 = GRAD_TOL["float32"]  # a whole network in float32 (as test_llm_model.py)
CONFIGS = {"qwen3": TINY_QWEN3, "gemma": TINY_GEMMA, "gemma2": TINY_GEMMA2, "mistral": TINY_MISTRAL}
IDS = [3, 7, 1, 90, 44, 5, 6, 2, 8, 9, 11, 60, 17]


def _rms_np(x, eps):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps)


# ------------------------------------------------------------------------------------------------ blocks
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_gemma_rms_norm_matches_numpy(dtype, layout):
    x, xr = make((3, 4, 8), dtype, layout, seed=2)
    norm = GemmaRMSNorm(8, eps=1e-6, dtype=getattr(tt, dtype))
    g = np.random.default_rng(1).uniform(-0.5, 0.5, 8)
    norm.weight = tt.nn.Parameter(tt.tensor(g, dtype=getattr(tt, dtype)))
    gr = norm.weight.detach().double().numpy()
    out = norm(x)
    assert out.dtype == getattr(tt, dtype)
    assert_close(out, _rms_np(xr, 1e-6) * (1 + gr), dtype)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_soft_cap_matches_numpy(dtype, layout):
    x, xr = make((5, 6), dtype, layout, seed=3)
    x, xr = x * 4, xr * 4
    assert_close(soft_cap(x, 2.5), 2.5 * np.tanh(xr / 2.5), dtype)
    with pytest.raises(ValueError, match="cap must be positive"):
        soft_cap(x, 0.0)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_qwen3_attention_norms_queries_and_keys_per_head(dtype):
    """LlamaAttention.project with q_norm/k_norm: RMSNorm over each head's D, then the rotary."""
    cfg = LlamaConfig(model_type="qwen3", hidden_size=16, num_attention_heads=2, num_key_value_heads=1, head_dim=12,
                      rms_norm_eps=1e-6)
    dt = getattr(tt, dtype)
    attn = LlamaAttention(cfg, 0, dtype=dt)
    rng = np.random.default_rng(4)
    for m in (attn.q_norm, attn.k_norm):
        m.weight = tt.nn.Parameter(tt.tensor(rng.uniform(0.5, 1.5, 12), dtype=dt))
    x, xr = make((2, 5, 16), dtype, "transposed", seed=5)
    pos = np.arange(5)
    cos, sin = attn_rotary(cfg)(tt.tensor(pos)[None], dt)
    q, k, v = attn.project(x, cos, sin)
    wq, wk = (attn.q_proj.weight.detach().double().numpy(), attn.k_proj.weight.detach().double().numpy())
    gq, gk = attn.q_norm.weight.detach().double().numpy(), attn.k_norm.weight.detach().double().numpy()
    qr = (_rms_np((xr @ wq.T).reshape(2, 5, 2, 12), 1e-6) * gq).transpose(0, 2, 1, 3)
    kr = (_rms_np((xr @ wk.T).reshape(2, 5, 1, 12), 1e-6) * gk).transpose(0, 2, 1, 3)
    tol = GRAD_TOL[dtype] if dtype in ("float16", "bfloat16") else None   # a product, a norm, a rotation
    assert_close(q, rope_np(qr, pos.astype(np.float64), cfg.rope_theta), dtype, tol=tol)
    assert_close(k, rope_np(kr, pos.astype(np.float64), cfg.rope_theta), dtype, tol=tol)
    assert v.shape == (2, 1, 5, 12)


def attn_rotary(cfg):
    from tinytorch.models import RotaryEmbedding
    return RotaryEmbedding(cfg.head_dim, cfg.max_position_embeddings, cfg.rope_theta)


def _attention_np(q, k, v, keep, scale, cap):
    G = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, G, 1), np.repeat(v, G, 1)
    s = q @ k.swapaxes(-1, -2) * scale
    if cap is not None:
        s = cap * np.tanh(s / cap)
    s = np.where(keep, s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("mask", ["causal", "window", "padded"])
def test_softcapped_attention_matches_numpy(dtype, mask):
    B, H, Hkv, T, S, D = 2, 4, 2, 3, 7, 8
    q, qr = make((B, H, T, D), dtype, "transposed", seed=6)
    k, kr = make((B, Hkv, S, D), dtype, "sliced", seed=7)
    v, vr = make((B, Hkv, S, D), dtype, "contiguous", seed=8)
    q, qr = q * 3, qr * 3
    past = S - T
    i, j = np.arange(T)[:, None] + past, np.arange(S)[None, :]
    keep = np.broadcast_to(j <= i, (B, 1, T, S))
    attn_mask = None
    if mask == "window":
        keep = keep & (j > i - 3)
        attn_mask = sliding_window_mask(tt.tensor(np.broadcast_to(j <= i, (1, 1, T, S)).copy()), past, 3)
    elif mask == "padded":
        valid = np.ones((B, 1, 1, S), bool)
        valid[1, ..., :2] = False
        keep = keep & valid
        attn_mask = tt.tensor(keep.copy())
    out = softcapped_attention(q, k, v, attn_mask, mask == "causal", 0.3, 2.0)
    tol = GRAD_TOL[dtype] if dtype in ("float16", "bfloat16") else None   # scores, tanh, softmax, product
    assert_close(out, _attention_np(qr, kr, vr, keep, 0.3, 2.0), dtype, tol=tol)


def test_sliding_window_mask_counts_cache_indices():
    keep = tt.ones(1, 1, 2, 6, dtype=tt.bool).tril(4)                       # queries at indices 4 and 5
    got = sliding_window_mask(keep, 4, 3)[0, 0].numpy()
    assert got.tolist() == [[False, False, True, True, True, False], [False, False, False, True, True, True]]


# ------------------------------------------------------------------------------------------------ models
def _weights(name, seed=0):
    return {k: v.astype(np.float32).astype(np.float64) for k, v in random_weights(CONFIGS[name], seed).items()}


@pytest.fixture(scope="module", params=list(CONFIGS))
def tiny(request, tmp_path_factory):
    name = request.param
    w = _weights(name)
    folder = write_checkpoint(str(tmp_path_factory.mktemp(name)), CONFIGS[name], w)
    return name, folder, w, LlamaForCausalLM.from_pretrained(folder)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_logits_match_numpy(tiny, dtype):
    name, folder, w, _ = tiny
    model = LlamaForCausalLM.from_pretrained(folder, dtype=getattr(tt, dtype))
    cfg = CONFIGS[name]
    assert model.config.head_dim == head_dim(cfg) and set(w) <= set(model.state_dict())
    with tt.no_grad():
        out = model(tt.tensor([IDS]))[0]
    assert_close(out, forward_np(w, cfg, IDS), dtype, tol=NET_TOL_F32 if dtype == "float32" else None)


def test_kv_cache_and_graph_step_equal_full_forward(tiny):
    """Prefill + chunk + single steps, and the CUDA-graph decode step (static cache, run eagerly on
    the CPU), equal the full forward (gemma2's and mistral's window of 4 slides past the prompt)."""
    name, folder, w, model = tiny
    check_cache_and_graph_step_equal_full_forward(model, IDS)


def test_greedy_generate_and_padded_batch(tiny):
    name, folder, w, model = tiny
    check_greedy_generate_and_padded_batch(model, w, CONFIGS[name], IDS, 8)


def test_decode_graph_cache_keys_and_invalidation():
    """The CUDA-graph decoders kept on the model (built here without capturing): one per batch size
    and 64-position length bucket, dropped when a parameter is replaced or the model is cast."""
    model = LlamaForCausalLM(LlamaConfig(**dict(TINY_GEMMA2, max_position_embeddings=200)))
    graphs = model.decode_graphs
    a = graphs.decoder(model, 2, 10, 1)
    assert graphs.decoder(model, 2, 64, 1) is a and a.cache.max_length == 64 and a.out.shape == (2, 64)
    assert graphs.decoder(model, 2, 65, 1) is not a and graphs.decoder(model, 1, 10, 1) is not a
    assert graphs.decoder(model, 2, 10, 0) is not a and len(graphs) == 4
    assert graphs.decoder(model, 1, 199, 0).cache.max_length == 200          # capped at the context
    model.model.layers[1].mlp.up_proj.weight.data.mul_(2)                     # in place: the graph reads it
    assert graphs.decoder(model, 2, 10, 1) is a
    model.model.norm.weight = tt.nn.Parameter(tt.zeros(64))                   # replaced: captures are stale
    b = graphs.decoder(model, 2, 10, 1)
    assert b is not a and len(graphs) == 1
    model.to(tt.float64)
    c = graphs.decoder(model, 2, 10, 1)
    assert c is not b and c.cache.keys[0].dtype == tt.float64
    assert len(copy.deepcopy(model).decode_graphs) == 0 and graphs.captures == 0


# -------------------------------------------------------------------------------------------------- GGUF
@pytest.mark.parametrize("packed", [False, True], ids=["f32", "q8_0"])
def test_gguf_round_trip_matches_numpy(tmp_path, packed):
    """GGUFs written as llama.cpp's converter writes them (gguf's tensor name map; gemma's norms + 1),
    float32 or with every linear weight Q8_0 (kept packed: q/k/v and gate/up fused, qwen3's q/k norms
    applied to the fused projection's parts; mistral as arch "llama" with q/k rows permuted and
    ``llama.attention.sliding_window``); logits against numpy on the weights as stored."""
    gguf = pytest.importorskip("gguf")
    for name, cfg in CONFIGS.items():
        w = _weights(name, seed=1)
        path = tmp_path / f"{name}.gguf"
        arch = "llama" if name == "mistral" else name
        wr = gguf.GGUFWriter(str(path), arch)
        wr.add_context_length(cfg["max_position_embeddings"])
        wr.add_embedding_length(cfg["hidden_size"])
        wr.add_block_count(cfg["num_hidden_layers"])
        wr.add_feed_forward_length(cfg["intermediate_size"])
        wr.add_head_count(cfg["num_attention_heads"])
        wr.add_head_count_kv(cfg["num_key_value_heads"])
        wr.add_key_length(head_dim(cfg))
        wr.add_value_length(head_dim(cfg))
        wr.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
        wr.add_rope_freq_base(cfg["rope_theta"])
        if name == "gemma2":
            wr.add_attn_logit_softcapping(cfg["attn_logit_softcapping"])
            wr.add_final_logit_softcapping(cfg["final_logit_softcapping"])
            wr.add_sliding_window(cfg["sliding_window"])
        if name == "mistral":
            wr.add_sliding_window(cfg["sliding_window"])
        names = gguf.get_tensor_name_map(gguf.MODEL_ARCH[arch.upper()], cfg["num_hidden_layers"])
        stored = {}
        for hf, a in w.items():
            a = a.astype(np.float32)
            if name.startswith("gemma") and hf.endswith("norm.weight"):
                a = a + 1     # llama.cpp's gemma converter stores the norms with the 1 added
            stored[hf] = w[hf]
            if packed and "_proj." in hf:
                a = gguf.quants.quantize(a, gguf.GGMLQuantizationType.Q8_0)
                stored[hf] = gguf.quants.dequantize(a, gguf.GGMLQuantizationType.Q8_0).astype(np.float64)
            if arch == "llama" and hf.endswith(("q_proj.weight", "k_proj.weight")):
                heads = cfg["num_attention_heads" if "q_proj" in hf else "num_key_value_heads"]
                a = llama_cpp_permute(a, heads)   # llama.cpp's row permutation (packed rows: blocks stay whole)
            if packed and "_proj." in hf:
                wr.add_tensor(names.get_name(hf, try_suffixes=(".weight",)), a,
                              raw_dtype=gguf.GGMLQuantizationType.Q8_0)
            else:
                wr.add_tensor(names.get_name(hf, try_suffixes=(".weight",)), np.ascontiguousarray(a))
        write_gguf_file(wr)
        model = LlamaForCausalLM.from_gguf(path)
        assert model.config.model_type == name
        assert ("qkv_proj" in model.model.layers[0].self_attn._modules) == packed
        # llama.cpp's gemma2 scale is 1/sqrt(head_dim) (no query_pre_attn_scalar in the file)
        ref_cfg = dict(cfg, query_pre_attn_scalar=head_dim(cfg))
        check_full_and_cached_logits(model, forward_np(stored, ref_cfg, IDS), IDS, 6)


# ---------------------------------------------------------------------------------------------- errors
def test_config_traits_and_errors():
    g = LlamaConfig.from_dict({"model_type": "gemma", "hidden_size": 16, "num_attention_heads": 2, "head_dim": 32,
                               "hidden_act": "gelu"})
    assert g.activation == "gelu_tanh" and g.gemma_norm and g.embed_scale == 4.0 and g.head_dim == 32
    g2 = LlamaConfig(model_type="gemma2", num_hidden_layers=3, hidden_size=16, num_attention_heads=2,
                     sliding_window=4)
    assert [g2.layer_window(i) for i in range(3)] == [4, None, 4] and g2.query_pre_attn_scalar == 8
    q = LlamaConfig.from_dict({"model_type": "qwen3", "sliding_window": 4, "use_sliding_window": False})
    assert q.qk_norm and q.sliding_window is None and q.activation == "silu"
    with pytest.raises(NotImplementedError, match="soft-capping is gemma2's"):
        LlamaConfig(model_type="llama", final_logit_softcapping=30.0)
    with pytest.raises(NotImplementedError, match="hidden_act 'relu'"):
        LlamaConfig(model_type="gemma", hidden_act="relu")
    m = LlamaConfig.from_dict({"model_type": "mistral", "num_hidden_layers": 2, "sliding_window": 4})
    assert [m.layer_window(i) for i in range(2)] == [4, 4]
    assert LlamaConfig.from_dict({"model_type": "mistral"}).sliding_window == 4096     # MistralConfig's default
    assert LlamaConfig.from_dict({"model_type": "mistral", "sliding_window": None}).layer_window(0) is None
    assert LlamaConfig.from_dict({"model_type": "llama", "sliding_window": 4}).sliding_window is None
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="sliding_window must be a positive int"):
            LlamaConfig(model_type="mistral", sliding_window=bad)
    with pytest.raises(ValueError, match="layer_types"):
        LlamaConfig(model_type="gemma2", num_hidden_layers=2, layer_types=["sliding_attention", "chunked"])
    assert_close(gelu_tanh_np(np.array([1.0])), np.array([0.8411919906082768]), "float64")
