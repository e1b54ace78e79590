"""Fused scaled_dot_product_attention on CUDA: the tensor-core kernels (float16/bfloat16, head
dims up to 128), the tiled float32 kernels (head dims up to 128) and the plain kernels (every
dtype, head dims up to 256; forced with TINYTORCH_ATTENTION_PLAIN=1) against the float64 numpy reference, the composed path and the CPU;
dropout masks equal to the CPU's; peak memory O(L)."""
import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn.functional as F
import tinytorch.nn.functional.attention as attention_module
from support.attention_cases import (FUSED_NODE, check_against_reference, check_double_backward, check_dropout,
                                     check_matches_composed, graph_names, tensor)
from support.numeric import FLOAT_DTYPES, GRAD_TOL, assert_close

pytestmark = pytest.mark.cuda

MASKS = ["none", "causal", "bool", "bool_rows", "float", "float_heads"]


@pytest.fixture(autouse=True)
def fused_kernels_only(monkeypatch):
    """Small float32/float64 calls take the composed path on CUDA; these tests are about the kernels."""
    monkeypatch.setattr(attention_module, "COMPOSED_WIDE_FLOAT_MAX_BYTES", 0)


@pytest.fixture(params=["fast", "mma", "plain"])
def path(request, monkeypatch):
    """fast: the tensor-core (float16/bfloat16: wgmma on Hopper, else mma.sync) or tiled (float32)
    kernels where they apply; mma: the mma.sync kernels even on Hopper (TINYTORCH_ATTENTION_WGMMA=0);
    plain: the plain kernels (TINYTORCH_ATTENTION_PLAIN=1)."""
    monkeypatch.delenv("TINYTORCH_ATTENTION_PLAIN", raising=False)
    monkeypatch.delenv("TINYTORCH_ATTENTION_WGMMA", raising=False)
    if request.param == "plain":
        monkeypatch.setenv("TINYTORCH_ATTENTION_PLAIN", "1")
    elif request.param == "mma":
        monkeypatch.setenv("TINYTORCH_ATTENTION_WGMMA", "0")
    return request.param


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("mask_kind", MASKS)
def test_forward_backward_vs_numpy(path, dtype, mask_kind):
    # E = Ev = 64: the tensor-core / tiled head dim; Lq != Lk, neither a multiple of 64; GQA 4 on 2
    check_against_reference("cuda", dtype, B=2, H=4, Hkv=2, L=77, S=130, E=64, Ev=64, mask_kind=mask_kind)


def test_value_head_dim_differs():
    check_against_reference("cuda", "bfloat16", B=2, H=2, Hkv=1, L=40, S=50, E=32, Ev=48, mask_kind="causal")


@pytest.mark.parametrize("E", [16, 64, 80, 128, 256])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_head_dims(path, E, dtype):
    check_against_reference("cuda", dtype, B=1, H=2, Hkv=2, L=129, S=129, E=E, Ev=E, mask_kind="causal")


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
@pytest.mark.parametrize("E", [64, 128])
@pytest.mark.parametrize("L,S,mask_kind", [(128, 128, "causal"), (129, 127, "none"), (257, 255, "causal"),
                                           (255, 257, "none"), (33, 300, "causal"), (200, 161, "bool"),
                                           (63, 65, "causal"), (65, 63, "float"), (64, 64, "bool_rows"),
                                           (65, 130, "causal"), (130, 65, "causal"), (127, 64, "float_heads")])
def test_tile_boundaries(dtype, E, L, S, mask_kind):
    # lengths straddling the tensor-core tiles: Hopper: 128 query rows x 128-key tiles (forward),
    # 128 keys x query steps of 64 (one-pass backward), 128 rows x 128 keys (dQ); mma.sync: 128 query
    # rows per forward / dQ block (32 per warp), 128 (E = 64) or 64 keys per dK/dV block, key tiles of
    # 64 (forward) and 32 (dQ), query steps of 32; the tiled float32 kernels' 64 x 64 tiles
    check_against_reference("cuda", dtype, B=1, H=2, Hkv=1, L=L, S=S, E=E, Ev=E, mask_kind=mask_kind)


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
@pytest.mark.parametrize("layout", ["heads_inner", "sliced"])
def test_noncontiguous(layout, dtype):
    check_against_reference("cuda", dtype, B=2, H=3, Hkv=3, L=70, S=33, E=64, Ev=64, mask_kind="bool",
                            layout=layout)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_long_causal_rows_below_keys(dtype):
    check_against_reference("cuda", dtype, B=1, H=2, Hkv=1, L=300, S=100, E=128, Ev=128, mask_kind="causal",
                            scale=0.2)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("causal", [False, True])
def test_matches_composed_path(dtype, causal):
    check_matches_composed("cuda", dtype, causal)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_dropout(path, dtype):
    check_dropout("cuda", dtype)


def test_dropout_mask_equals_cpu():
    """The same generator state draws the same dropout mask on both devices (v = identity shows it)."""
    tt.manual_seed(3)
    q, _ = tensor((1, 2, 40, 16), "float32", "cuda", seed=1)
    eye = tt.eye(40, device="cuda").expand(1, 2, 40, 40)
    gpu = F.scaled_dot_product_attention(q, q, eye, dropout_p=0.4).detach().cpu().numpy()
    tt.manual_seed(3)
    qc = q.detach().cpu()
    cpu = F.scaled_dot_product_attention(qc, qc, eye.cpu(), dropout_p=0.4).numpy()
    assert np.array_equal(gpu != 0, cpu != 0)


def test_double_backward_matches_composed():
    check_double_backward("cuda")


@pytest.mark.parametrize("dtype", ["bfloat16", "float32"])
def test_fully_masked_row_gives_zeros(dtype):
    q, _ = tensor((1, 1, 4, 64), dtype, "cuda", seed=1)
    keep = np.ones((4, 5), dtype=bool)
    keep[2] = False
    out = F.scaled_dot_product_attention(q, q[:, :, :1].expand(1, 1, 5, 64), q[:, :, :1].expand(1, 1, 5, 64),
                                         attn_mask=tt.tensor(keep, device="cuda"))
    o = out.detach().float().cpu().numpy()
    assert np.all(o[0, 0, 2] == 0) and np.isfinite(o).all()
    out.float().sum().backward()
    assert np.isfinite(q.grad.float().cpu().numpy()).all()


def test_multihead_attention_uses_fused():
    tt.manual_seed(0)
    mha = tt.nn.MultiheadAttention(64, 4, batch_first=True).cuda()
    x = tt.randn(2, 33, 64, device="cuda", requires_grad=True)
    out, _ = mha(x, x, x, need_weights=False)
    assert FUSED_NODE in graph_names(out)
    ref, _ = mha(x, x, x, need_weights=True)
    np.testing.assert_allclose(out.detach().cpu().numpy(), ref.detach().cpu().numpy(), rtol=1e-4, atol=1e-5)


def _peak_fwd_bwd(L, B=1, H=4, E=64):
    q, _ = tensor((B, H, L, E), "bfloat16", "cuda", seed=1)
    k, _ = tensor((B, H, L, E), "bfloat16", "cuda", seed=2)
    v, _ = tensor((B, H, L, E), "bfloat16", "cuda", seed=3)
    tt.cuda.synchronize()
    base = tt.cuda.memory_allocated()
    tt.cuda.reset_peak_memory_stats()
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    out.backward(tt.ones_like(out))
    tt.cuda.synchronize()
    return tt.cuda.max_memory_allocated() - base


@pytest.mark.parametrize("path_", ["fast", "plain"])
def test_peak_memory_is_linear_in_length(path_, monkeypatch):
    """Forward + backward memory grows linearly with L (x2 from L = 2048 to 4096, where an (L, L)
    matrix would grow x4) and stays far below one bf16 score matrix (128 MiB at B=1, H=4, L=4096)."""
    if path_ == "plain":
        monkeypatch.setenv("TINYTORCH_ATTENTION_PLAIN", "1")
    small, large = _peak_fwd_bwd(2048), _peak_fwd_bwd(4096)
    scores = 1 * 4 * 4096 * 4096 * 2
    assert large <= 2.5 * small and large < scores / 4, (small, large, scores)


@pytest.mark.parametrize("dtype,E", [("float64", 32), ("float32", 256)])
def test_small_wide_float_calls_take_the_composed_path(dtype, E, monkeypatch):
    """Unmasked calls with small score matrices that only the plain kernels would run (float64;
    float32 with head dims over 128) run the composed products on CUDA and give the fused kernels'
    values; masks, dropout or TINYTORCH_ATTENTION_PLAIN keep the kernels."""
    monkeypatch.setattr(attention_module, "COMPOSED_WIDE_FLOAT_MAX_BYTES", 64 << 20)
    q, _ = tensor((2, 4, 40, E), dtype, "cuda", seed=1)
    k, _ = tensor((2, 4, 40, E), dtype, "cuda", seed=2)
    v, _ = tensor((2, 4, 40, E), dtype, "cuda", seed=3)
    composed = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert FUSED_NODE not in graph_names(composed)
    monkeypatch.setenv("TINYTORCH_ATTENTION_PLAIN", "1")
    fused = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert FUSED_NODE in graph_names(fused)
    assert_close(composed, fused.detach().cpu().double().numpy(), dtype)
    monkeypatch.delenv("TINYTORCH_ATTENTION_PLAIN")
    mask = tt.ones(40, 40, dtype=tt.bool, device="cuda").tril()
    assert FUSED_NODE in graph_names(F.scaled_dot_product_attention(q, k, v, attn_mask=mask))


@pytest.mark.parametrize("E", [16, 64, 128])
def test_small_float32_calls_take_the_tiled_kernels(E, monkeypatch):
    """float32 with head dims up to 128 keeps the fused (tiled) kernels at any size, with the
    composed path's values."""
    from tinytorch.nn.functional.attention import _composed_scaled_dot_product_attention as composed
    monkeypatch.setattr(attention_module, "COMPOSED_WIDE_FLOAT_MAX_BYTES", 64 << 20)
    q, _ = tensor((2, 4, 40, E), "float32", "cuda", seed=1)
    out = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    assert FUSED_NODE in graph_names(out)
    assert_close(out, composed(q, q, q, is_causal=True).detach().cpu().double().numpy(), "float32")


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("E", [64, 128])
def test_deterministic_backward(dtype, E):
    """Where the one-pass backward adds dQ with atomics (Hopper), use_deterministic_algorithms(True)
    takes the two-kernel backward: the same gradients bit for bit, run to run, and equal to the
    default path's within the dtype's tolerance."""
    def grads():
        q, _ = tensor((2, 4, 300, E), dtype, "cuda", seed=1)
        k, _ = tensor((2, 2, 300, E), dtype, "cuda", seed=2)
        v, _ = tensor((2, 2, 300, E), dtype, "cuda", seed=3)
        for t in (q, k, v):
            t.requires_grad_(True)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        out.backward(tt.ones_like(out))
        return [t.grad.cpu().float().numpy() for t in (q, k, v)]

    default = grads()
    tt.use_deterministic_algorithms(True)
    try:
        first, second = grads(), grads()
    finally:
        tt.use_deterministic_algorithms(False)
    for a, b, d in zip(first, second, default):
        np.testing.assert_array_equal(a, b)
        assert_close(d, a.astype(np.float64), tol=GRAD_TOL[dtype])
