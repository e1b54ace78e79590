"""Fused scaled_dot_product_attention on the CPU: forward and gradients against a float64
numpy reference for every float dtype, mask kind, GQA, odd lengths, head dims and layouts (each with
whole heads per task and with tiles of them: TINYTORCH_ATTENTION_CPU_WHOLE_HEADS=1 and 0);
agreement with the composed path; dropout reproducibility and its gradient; double backward;
modules routed through it; errors."""
import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn.functional as F
from support.attention_cases import (FUSED_NODE, check_against_reference, check_double_backward, check_dropout,
                                     check_matches_composed, graph_names, reference, tensor)
from support.numeric import FLOAT_DTYPES, assert_close

MASKS = ["none", "causal", "bool", "bool_rows", "float", "float_heads"]


@pytest.fixture(autouse=True, params=["1", "0"], ids=["whole_heads", "tiles"])
def task_shape(request, monkeypatch):
    """Every test on both CPU task shapes: whole heads per task (the backward in one pass) or
    query blocks / key blocks of them (the backward in two passes)."""
    monkeypatch.setenv("TINYTORCH_ATTENTION_CPU_WHOLE_HEADS", request.param)
    return request.param


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("mask_kind", MASKS)
def test_forward_backward_vs_numpy(dtype, mask_kind):
    # Lq != Lk, neither a multiple of the tiles (32 query rows, 128 keys); GQA 4 query heads on 2
    check_against_reference("cpu", dtype, B=2, H=4, Hkv=2, L=37, S=70, E=24, Ev=40, mask_kind=mask_kind)


@pytest.mark.parametrize("mask_kind", ["causal", "bool", "float"])
@pytest.mark.parametrize("L", [150, 300])
def test_several_key_tiles(L, mask_kind):
    # 3 key tiles of 128 (the last partial) and 5 or 10 query blocks of 32, Lq < Lk and Lq = Lk
    check_against_reference("cpu", "float32", B=2, H=4, Hkv=2, L=L, S=300, E=32, Ev=32, mask_kind=mask_kind)


@pytest.mark.parametrize("E", [16, 64, 80, 128, 256])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_head_dims(E, dtype):
    check_against_reference("cpu", dtype, B=1, H=2, Hkv=2, L=65, S=65, E=E, Ev=E, mask_kind="causal")


@pytest.mark.parametrize("layout", ["heads_inner", "sliced"])
def test_noncontiguous(layout):
    check_against_reference("cpu", "float32", B=2, H=3, Hkv=3, L=20, S=33, E=16, Ev=16, mask_kind="bool",
                            layout=layout)


def test_scale_and_long_causal_rows_below_keys():
    # causal with Lq > Lk (rows past the last key see every key) and an explicit scale
    check_against_reference("cpu", "float64", B=1, H=1, Hkv=1, L=90, S=40, E=8, Ev=8, mask_kind="causal",
                            scale=0.3)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("causal", [False, True])
def test_matches_composed_path(dtype, causal):
    check_matches_composed("cpu", dtype, causal)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_dropout(dtype):
    check_dropout("cpu", dtype)


def test_double_backward_matches_composed():
    check_double_backward("cpu")


@pytest.mark.parametrize("shape", [(7, 8), (3, 7, 8)])
def test_lower_rank_inputs(shape):
    q = tt.tensor(np.random.default_rng(0).uniform(-1, 1, shape), dtype=tt.float32, requires_grad=True)
    out = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    assert FUSED_NODE in graph_names(out) and tuple(out.shape) == shape
    qn = q.detach().double().numpy().reshape((1,) * (4 - len(shape)) + shape)
    ref, *_ = reference(qn, qn, qn, np.zeros_like(qn), np.where(np.tril(np.ones((7, 7))) > 0, 0.0, -np.inf))
    assert_close(out, ref.reshape(shape), "float32")


def test_fully_masked_row_gives_zeros():
    q, qn = tensor((1, 1, 4, 8), "float32", seed=1)
    k, kn = tensor((1, 1, 5, 8), "float32", seed=2)
    keep = np.ones((4, 5), dtype=bool)
    keep[2] = False
    out = F.scaled_dot_product_attention(q, k, k, attn_mask=tt.tensor(keep))
    o = out.detach().numpy()
    assert np.all(o[0, 0, 2] == 0) and np.isfinite(o).all()
    out.sum().backward()
    assert np.isfinite(q.grad.numpy()).all() and np.all(q.grad.numpy()[0, 0, 2] == 0)


def test_composed_cases_still_work():
    # a mask that needs a gradient, and key/value broadcast over heads, take the composed path
    q, _ = tensor((1, 2, 5, 4), "float32", seed=1)
    k, _ = tensor((1, 1, 6, 4), "float32", seed=2)
    m = tt.zeros(5, 6, requires_grad=True)
    out = F.scaled_dot_product_attention(q, k, k, attn_mask=m)
    assert FUSED_NODE not in graph_names(out)
    out.sum().backward()
    assert m.grad is not None and tuple(m.grad.shape) == (5, 6)


def test_multihead_attention_and_transformer_use_fused():
    tt.manual_seed(0)
    mha = tt.nn.MultiheadAttention(16, 4, batch_first=True)
    x = tt.randn(2, 9, 16, requires_grad=True)
    causal = tt.nn.Transformer.generate_square_subsequent_mask(9)
    out, _ = mha(x, x, x, attn_mask=causal, need_weights=False)
    assert FUSED_NODE in graph_names(out)
    ref, _ = mha(x, x, x, attn_mask=causal, need_weights=True)   # the composed path (it returns weights)
    assert_close(out, ref.detach().double().numpy(), "float32")
    layer = tt.nn.TransformerEncoderLayer(16, 4, dim_feedforward=32, dropout=0.0, batch_first=True)
    y = layer(x, src_mask=causal)
    assert FUSED_NODE in graph_names(y)


def test_errors():
    q = tt.zeros(1, 4, 3, 8)
    k = tt.zeros(1, 3, 3, 8)
    with pytest.raises(RuntimeError, match="is_causal"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=tt.ones(3, 3, dtype=tt.bool), is_causal=True)
    with pytest.raises(ValueError, match="dropout_p"):
        F.scaled_dot_product_attention(q, q, q, dropout_p=1.5)
    with pytest.raises(ValueError, match="multiple"):
        F.scaled_dot_product_attention(q, k, k, enable_gqa=True)
    with pytest.raises(RuntimeError, match="must match"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=tt.ones(2, 3, dtype=tt.bool))
    with pytest.raises(RuntimeError, match="head dims up to 256"):
        tt._C.scaled_dot_product_attention(tt.zeros(1, 1, 2, 300)._impl, tt.zeros(1, 1, 2, 300)._impl,
                                           tt.zeros(1, 1, 2, 300)._impl)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_strided_operands_read_in_place(dtype):
    # q, k, v and grad_out transposed out of (B, L, H, E), as attention modules make them, are read
    # in place by the CPU kernels: the same values in the same order as their contiguous copies
    q, _ = tensor((2, 4, 70, 32), dtype, "cpu", "heads_inner", seed=1)
    k, _ = tensor((2, 2, 70, 32), dtype, "cpu", "heads_inner", seed=2)
    v, _ = tensor((2, 2, 70, 24), dtype, "cpu", "heads_inner", seed=3)
    g = tt.tensor(np.random.default_rng(5).uniform(-1, 1, (2, 70, 4, 24)), dtype=getattr(tt, dtype)).transpose(1, 2)
    assert not q.is_contiguous() and not g.is_contiguous()
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    out.backward(g)
    qc, kc, vc = (t.detach().contiguous().requires_grad_(True) for t in (q, k, v))
    ref = F.scaled_dot_product_attention(qc, kc, vc, is_causal=True, enable_gqa=True)
    ref.backward(g.contiguous())
    for got, want in ((out, ref), (q.grad, qc.grad), (k.grad, kc.grad), (v.grad, vc.grad)):
        assert np.array_equal(got.detach().float().numpy(), want.detach().float().numpy())


def test_gradients_keep_the_operands_layout():
    # q, k, v split out of one (B, L, 3, H, E) projection: their gradients come back (B, L, H, E)-laid
    # out, so the transposes and the split's backward copy nothing more
    x = tt.randn(2, 9, 3 * 4 * 8, requires_grad=True)
    q, k, v = (t.view(2, 9, 4, 8).transpose(1, 2) for t in x.split(32, dim=2))
    seen = {}
    for name, t in (("q", q), ("k", k), ("v", v)):
        t.register_hook(lambda g, name=name: seen.setdefault(name, g))
    F.scaled_dot_product_attention(q, k, v, is_causal=True).sum().backward()
    for name in "qkv":
        assert seen[name].transpose(1, 2).is_contiguous(), name
