"""CUDA GEMM (cuBLAS) and conv2d helpers against the CPU kernels.

The same values run on both devices; the GPU result must match the CPU result within the
dtype's tolerance (cuBLAS and OpenBLAS sum in different orders; 16-bit types accumulate in
float32 on both). Covers matmul's 1-D, batched and broadcast cases, transposed/sliced/expanded
operands, linear and mm, integer matmul, the TF32 switch, and conv2d forward and backward with
groups, stride, padding and dilation."""
from __future__ import annotations

import functools

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn.functional as F
from tinytorch import _C
from tinytorch._core.tensor_base import _wrap

from support import cuda_helpers
from support.numeric import to_numpy

pytestmark = pytest.mark.cuda

FLOATS = ["float32", "float16", "bfloat16", "float64"]
# GPU vs CPU (rtol, atol) per dtype for sums of O(10-100) products of values in [-1, 1].
TOL = {"float64": (1e-10, 1e-10), "float32": (1e-4, 1e-4), "float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2)}


pair = functools.partial(cuda_helpers.pair, low=-1.0, high=1.0)
close = functools.partial(cuda_helpers.close, tol=TOL)


MATMUL_CASES = [
    ("dot", (5,), (5,)),
    ("mv", (3, 5), (5,)),
    ("vm", (5,), (5, 4)),
    ("mm", (33, 17), (17, 9)),
    ("bmm", (2, 3, 5), (2, 5, 4)),
    ("broadcast", (2, 1, 3, 5), (4, 5, 6)),
    ("broadcast2", (3, 1, 4, 7), (1, 2, 7, 5)),
    ("batched@vec", (2, 3, 5), (5,)),
    ("vec@batched", (5,), (2, 5, 4)),
    ("fold", (2, 3, 5), (5, 4)),
    ("k0", (3, 0), (0, 4)),
    ("big", (130, 257), (257, 65)),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name,sa,sb", MATMUL_CASES, ids=[c[0] for c in MATMUL_CASES])
def test_matmul_matches_cpu(name, sa, sb, dtype):
    ac, ag = pair(sa, dtype, seed=1)
    bc, bg = pair(sb, dtype, seed=2)
    close(tt.matmul(ag, bg), tt.matmul(ac, bc), dtype, what=name)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("la", ["contiguous", "transposed", "sliced", "expanded"])
@pytest.mark.parametrize("lb", ["contiguous", "transposed", "sliced", "expanded"])
def test_matmul_layouts(la, lb, dtype):
    ac, ag = pair((3, 6, 7), dtype, la, seed=3)
    bc, bg = pair((3, 7, 5), dtype, lb, seed=4)
    close(tt.matmul(ag, bg), tt.matmul(ac, bc), dtype, what=f"{la} @ {lb}")


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8"])
def test_integer_matmul_exact(dtype):
    ac, ag = pair((2, 5, 9), dtype, seed=5)
    bc, bg = pair((9, 4), dtype, "transposed", seed=6)
    np.testing.assert_array_equal(to_numpy(tt.matmul(ag, bg)), to_numpy(tt.matmul(ac, bc)))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("rows, inner, outer", [(1, 8, 5), (37, 64, 96), (300, 72, 130), (64, 768, 2304)])
def test_linear_bias_epilogue(dtype, rows, inner, outer):
    # the bias is added by cuBLASLt's epilogue where a plan exists (float32/16-bit), else broadcast
    # into the output first: both must equal the CPU result, for aligned and misaligned biases and
    # transposed inputs
    xc, xg = pair((rows, inner), dtype, seed=12)
    wc, wg = pair((outer, inner), dtype, "transposed", seed=13)
    bc, bg = pair((outer + 1,), dtype, seed=14)
    for b_cpu, b_gpu in ((bc[:outer], bg[:outer]), (bc[1:], bg[1:])):  # 256-byte aligned, then 2-8 bytes off
        close(F.linear(xg, wg, b_gpu), F.linear(xc, wc, b_cpu), dtype, scale=max(1.0, inner / 64),
              what=f"linear {rows}x{inner}x{outer}")
        close(F.linear(xg.t().contiguous().t() if rows > 1 else xg, wg, b_gpu),
              F.linear(xc, wc, b_cpu), dtype, scale=max(1.0, inner / 64), what="linear, column-major x")


@pytest.mark.parametrize("dtype", FLOATS)
def test_linear_and_mm(dtype):
    xc, xg = pair((2, 3, 8), dtype, seed=7)
    wc, wg = pair((5, 8), dtype, seed=8)
    bc, bg = pair((5,), dtype, seed=9)
    close(F.linear(xg, wg, bg), F.linear(xc, wc, bc), dtype, what="linear")
    close(F.linear(xg, wg), F.linear(xc, wc), dtype, what="linear no bias")
    m1c, m1g = pair((4, 6), dtype, seed=10)
    m2c, m2g = pair((6, 5), dtype, "transposed", seed=11)
    # mm's GEMM runs with beta == 0 and must not read its fresh output: a freed block of NaNs,
    # which the caching allocator hands out again, must not leak into the product
    junk = tt.full((4, 5), float("nan"), dtype=getattr(tt, dtype), device="cuda")
    del junk
    got = m1g @ m2g
    assert not np.isnan(to_numpy(got)).any()
    close(got, m1c @ m2c, dtype, what="mm")


@pytest.mark.parametrize("dtype", FLOATS)
def test_matmul_backward(dtype):
    ac, ag = pair((2, 4, 6), dtype, seed=13, requires_grad=True)
    bc, bg = pair((6, 3), dtype, "transposed", seed=14, requires_grad=True)
    gc, gg = pair((2, 4, 3), dtype, seed=15)
    tt.matmul(ac, bc).backward(gc)
    tt.matmul(ag, bg).backward(gg)
    close(ag.grad, ac.grad, dtype, what="grad a")
    close(bg.grad, bc.grad, dtype, what="grad b")


def test_allow_tf32_flag():
    from tinytorch import _cuda
    assert _cuda.get_allow_tf32() is False  # default: exact float32
    ac, ag = pair((64, 128), "float32", seed=16)
    bc, bg = pair((128, 32), "float32", seed=17)
    want = tt.matmul(ac, bc)
    try:
        _cuda.set_allow_tf32(True)
        assert _cuda.get_allow_tf32() is True
        # TF32 keeps 10 mantissa bits: looser, but still the same product
        np.testing.assert_allclose(to_numpy(tt.matmul(ag, bg)), to_numpy(want), rtol=2e-2, atol=2e-2)
    finally:
        _cuda.set_allow_tf32(False)
    assert _cuda.get_allow_tf32() is False
    close(tt.matmul(ag, bg), want, "float32")


def test_gemm_is_deterministic():
    ac, ag = pair((8, 96, 200), "float32", seed=18)
    bc, bg = pair((200, 64), "float32", seed=19)
    r1, r2 = to_numpy(tt.matmul(ag, bg)), to_numpy(tt.matmul(ag, bg))
    np.testing.assert_array_equal(r1, r2)


@pytest.fixture(params=["cudnn", "im2col"])
def conv_path(request):
    """Runs a conv test through cuDNN (where the build has it) and through im2col + cuBLAS."""
    if request.param == "cudnn" and not tt.backends.cudnn.is_available():
        pytest.skip("this build has no cuDNN")
    tt.backends.cudnn.enabled = request.param == "cudnn"
    assert tt._cuda.get_cudnn_enabled() is (request.param == "cudnn")
    yield request.param
    tt.backends.cudnn.enabled = True


CONV_CASES = [
    # (B, C, H, W), (O, C/groups, kh, kw), stride, padding, dilation, groups
    ((2, 3, 9, 8), (4, 3, 3, 3), 1, 1, 1, 1),
    ((2, 4, 11, 10), (6, 2, 3, 2), (2, 1), (1, 0), (1, 2), 2),
    ((1, 6, 7, 7), (6, 1, 3, 3), 2, 1, 1, 6),  # depthwise
    ((3, 4, 6, 5), (8, 4, 1, 1), 1, 0, 1, 1),  # pointwise (no im2col)
    ((2, 3, 12, 12), (5, 3, 5, 5), 3, 2, 2, 1),
    ((4, 3, 10), None, 1, 1, 1, 1),  # unbatched (C, H, W)
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("case", range(len(CONV_CASES)))
def test_conv2d_forward_backward(case, dtype, conv_path):
    xs, ws, stride, padding, dilation, groups = CONV_CASES[case]
    if ws is None:
        ws = (5, xs[0], 3, 3)
    xc, xg = pair(xs, dtype, seed=20, requires_grad=True)
    wc, wg = pair(ws, dtype, seed=21, requires_grad=True)
    bc, bg = pair((ws[0],), dtype, seed=22, requires_grad=True)
    yc = F.conv2d(xc, wc, bc, stride, padding, dilation, groups)
    yg = F.conv2d(xg, wg, bg, stride, padding, dilation, groups)
    close(yg, yc, dtype, scale=2, what="conv2d out")
    gc, gg = pair(tuple(yc.shape), dtype, seed=23)
    yc.backward(gc)
    yg.backward(gg)
    close(xg.grad, xc.grad, dtype, scale=2, what="grad x")
    close(wg.grad, wc.grad, dtype, scale=4, what="grad w")
    close(bg.grad, bc.grad, dtype, scale=4, what="grad bias")


@pytest.mark.parametrize("layout", ["transposed", "sliced"])
def test_conv2d_noncontiguous_input(layout, conv_path):
    xc, xg = pair((2, 3, 8, 9), "float32", layout, seed=24)
    wc, wg = pair((4, 3, 3, 3), "float32", seed=25)
    close(F.conv2d(xg, wg, None, 1, 1), F.conv2d(xc, wc, None, 1, 1), "float32")


def test_conv2d_tf32_switch(conv_path):
    # tinytorch.backends.cudnn.allow_tf32 (PyTorch's default: on) lets float32 convolutions use TF32;
    # the suite runs with it off (tests/conftest.py) so float32 compares exactly with the CPU.
    xc, xg = pair((4, 16, 12, 12), "float32", seed=29)
    wc, wg = pair((8, 16, 3, 3), "float32", seed=30)
    want = to_numpy(F.conv2d(xc, wc, None, 1, 1))
    assert tt.backends.cudnn.allow_tf32 is False and tt._cuda.get_conv_allow_tf32() is False
    try:
        tt.backends.cudnn.allow_tf32 = True
        assert tt._cuda.get_conv_allow_tf32() is True
        got = to_numpy(F.conv2d(xg, wg, None, 1, 1))
        np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-2)
        if conv_path == "im2col":   # cuDNN's heuristics may pick a non-TF32 algorithm
            assert np.abs(got - want).max() > 1e-5, "TF32 on should round the operands to 10 mantissa bits"
    finally:
        tt.backends.cudnn.allow_tf32 = False
    close(F.conv2d(xg, wg, None, 1, 1), F.conv2d(xc, wc, None, 1, 1), "float32")
    assert tt._cuda.get_allow_tf32() is False      # matmuls have their own switch


def test_conv2d_backward_is_deterministic(conv_path):
    xc, xg = pair((4, 8, 16, 16), "float32", seed=26, requires_grad=True)
    wc, wg = pair((8, 8, 3, 3), "float32", seed=27, requires_grad=True)
    gc, gg = pair((4, 8, 8, 8), "float32", seed=28)
    grads = []
    tt.backends.cudnn.deterministic = True   # cuDNN's default heuristics may pick atomic algorithms
    try:
        for _ in range(2):
            xg.grad = None
            wg.grad = None
            F.conv2d(xg, wg, None, 2, 1).backward(gg)
            grads.append((to_numpy(xg.grad), to_numpy(wg.grad)))
    finally:
        tt.backends.cudnn.deterministic = False
    np.testing.assert_array_equal(grads[0][0], grads[1][0])
    np.testing.assert_array_equal(grads[0][1], grads[1][1])
