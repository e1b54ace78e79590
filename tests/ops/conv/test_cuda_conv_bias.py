"""conv2d on the GPU (cuDNN where built in: the bias fused into the convolution's graph, or added
after it where no engine takes the fused graph) against a float64 numpy reference: forward and
the three gradients, with and without bias, over groups, strides, padding, dilation and a
non-contiguous input, for every float dtype, with the bias always fused (where cuDNN has an
engine) and never fused; then the default choice (fused where timed faster) with
tinytorch.backends.cudnn.benchmark.

Errors are measured in units of the sums' magnitudes (support.numeric.assert_close_dot's rule): each
output is a dot product over C/groups*kh*kw terms, each weight gradient one over B*Ho*Wo terms."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn.functional as F

from support.numeric import GRAD_TOL, assert_close, assert_close_dot, to_numpy
from tinytorch._core.cuda_loader import cuda_backend

pytestmark = pytest.mark.cuda

DTYPES = ["float32", "float16", "bfloat16", "float64"]
# (B, C, H, W), (O, kh, kw), stride, padding, dilation, groups
CASES = [
    ((4, 3, 9, 8), (8, 3, 3), (1, 1), (0, 0), (1, 1), 1),
    ((3, 4, 11, 10), (6, 3, 2), (2, 1), (1, 2), (1, 1), 2),
    ((2, 6, 12, 13), (6, 3, 3), (1, 2), (2, 1), (2, 1), 3),
    ((5, 8, 7, 7), (16, 1, 1), (1, 1), (0, 0), (1, 1), 1),
    ((2, 4, 10, 9), (4, 3, 3), (2, 2), (1, 1), (1, 2), 4),  # depthwise
]


def windows(xp, kh, kw, Ho, Wo, stride, dilation):
    """xp: (B, C, Hp, Wp) padded -> (B, C, kh, kw, Ho, Wo), the input each kernel tap sees."""
    (sh, sw), (dh, dw) = stride, dilation
    return np.stack([np.stack([xp[:, :, i * dh:i * dh + sh * (Ho - 1) + 1:sh, j * dw:j * dw + sw * (Wo - 1) + 1:sw]
                               for j in range(kw)], 2) for i in range(kh)], 2)


def conv_ref(x, w, b, stride, padding, dilation, groups):
    """float64 conv2d with its adjoints: returns (y, grads(go) -> (gx, gw, gb))."""
    B, C, H, W = x.shape
    O, Cg, kh, kw = w.shape
    (ph, pw), (dh, dw), (sh, sw) = padding, dilation, stride
    Ho = (H + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    Wo = (W + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    win = windows(xp, kh, kw, Ho, Wo, stride, dilation).reshape(B, groups, Cg, kh, kw, Ho, Wo)
    wg = w.reshape(groups, O // groups, Cg, kh, kw)
    y = np.einsum("bgcijhw,gocij->bgohw", win, wg).reshape(B, O, Ho, Wo)
    if b is not None:
        y = y + b.reshape(1, O, 1, 1)

    def grads(go):
        gog = go.reshape(B, groups, O // groups, Ho, Wo)
        gw = np.einsum("bgcijhw,bgohw->gocij", win, gog).reshape(w.shape)
        gwin = np.einsum("bgohw,gocij->bgcijhw", gog, wg).reshape(B, C, kh, kw, Ho, Wo)
        gxp = np.zeros_like(xp)
        for i in range(kh):
            for j in range(kw):
                gxp[:, :, i * dh:i * dh + sh * (Ho - 1) + 1:sh, j * dw:j * dw + sw * (Wo - 1) + 1:sw] += gwin[:, :, i, j]
        gx = gxp[:, :, ph:ph + H, pw:pw + W]
        return gx, gw, go.sum(axis=(0, 2, 3))
    return y, grads


def gpu_leaf(arr, dtype, transposed=False):
    """(tensor on the GPU requiring grad, the float64 values it holds). transposed: a view of a
    (B, C, W, H) tensor with its last two dims swapped (non-contiguous)."""
    base = np.ascontiguousarray(arr.swapaxes(-1, -2)) if transposed else arr
    t = tt.tensor(base, dtype=getattr(tt, dtype)).to("cuda")
    if transposed:
        t = t.transpose(-1, -2)
    t.requires_grad_(True)
    return t, to_numpy(t)


def check_conv(case, dtype, with_bias, transposed, seed=0):
    xshape, (O, kh, kw), stride, padding, dilation, groups = case
    rng = np.random.default_rng(seed)
    C = xshape[1]
    x, xr = gpu_leaf(rng.uniform(-2, 2, xshape), dtype, transposed)
    w, wr = gpu_leaf(rng.uniform(-1, 1, (O, C // groups, kh, kw)), dtype)
    b, br = gpu_leaf(rng.uniform(-2, 2, (O,)), dtype) if with_bias else (None, None)
    y = F.conv2d(x, w, b, stride=stride, padding=padding, dilation=dilation, groups=groups)
    yr, grads = conv_ref(xr, wr, br, stride, padding, dilation, groups)
    assert y.dtype == getattr(tt, dtype) and tuple(y.shape) == yr.shape
    # each output's scale: the same sum over |x| |w| (+ |b|)
    yscale, _ = conv_ref(np.abs(xr), np.abs(wr), None if br is None else np.abs(br), stride, padding, dilation, groups)
    what = f"{case} {dtype} bias={with_bias} transposed={transposed}"
    assert_close_dot(y, yr, yscale, dtype, what=f"forward {what}")

    go = rng.uniform(-1, 1, yr.shape)
    got = tt.tensor(go, dtype=getattr(tt, dtype)).to("cuda")
    go = to_numpy(got)
    y.backward(got)
    gx, gw, gb = grads(go)
    _, agrads = conv_ref(np.abs(xr), np.abs(wr), None, stride, padding, dilation, groups)
    sx, sw, sb = agrads(np.abs(go))
    tiny = np.finfo(np.float64).tiny
    for name, t, ref, scale in [("x", x, gx, sx), ("weight", w, gw, sw)] + ([("bias", b, gb, sb)] if with_bias else []):
        assert t.grad is not None, f"no grad for {name}: {what}"
        s = np.maximum(scale, tiny)
        assert_close(to_numpy(t.grad) / s, ref / s, dtype, tol=GRAD_TOL[dtype], what=f"grad {name} {what}")


FUSE_MODES = {"never": 0, "auto": 1, "always": 2}  # cuDNN's fused-bias choice (conv_cudnn.cpp)


@pytest.fixture(params=["always", "never"])
def fuse(request):
    backend = cuda_backend()
    if backend is not None and tt.backends.cudnn.is_available():
        backend.set_cudnn_fuse_bias(FUSE_MODES[request.param])
    yield request.param
    if backend is not None and tt.backends.cudnn.is_available():
        backend.set_cudnn_fuse_bias(FUSE_MODES["auto"])


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("with_bias", [True, False])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(CASES)))
def test_conv2d_bias_forward_backward(case, dtype, with_bias, transposed, fuse):
    check_conv(CASES[case], dtype, with_bias, transposed, seed=case)


@pytest.fixture
def cudnn_benchmark():
    old = tt.backends.cudnn.benchmark
    tt.backends.cudnn.benchmark = True
    assert tt.backends.cudnn.benchmark is True
    yield
    tt.backends.cudnn.benchmark = old


@pytest.mark.parametrize("with_bias", [True, False])
@pytest.mark.parametrize("dtype", DTYPES)
def test_conv2d_bias_with_cudnn_benchmark(cudnn_benchmark, dtype, with_bias):
    # new shapes (not cached by the tests above), so the candidates really are timed
    check_conv(((6, 5, 13, 12), (7, 3, 3), (1, 1), (1, 1), (1, 1), 1), dtype, with_bias, False, seed=11)
    check_conv(((3, 4, 9, 14), (8, 2, 3), (2, 1), (0, 1), (1, 2), 2), dtype, with_bias, True, seed=12)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_conv2d_bias_unbatched_and_mnist_shapes(dtype, fuse):
    # demo/mnist.py's two convolutions at a small batch, and an unbatched (C, H, W) input
    check_conv(((8, 1, 28, 28), (32, 3, 3), (1, 1), (0, 0), (1, 1), 1), dtype, True, False, seed=3)
    check_conv(((8, 32, 26, 26), (64, 3, 3), (1, 1), (0, 0), (1, 1), 1), dtype, True, False, seed=4)
    rng = np.random.default_rng(5)
    x = tt.tensor(rng.uniform(-2, 2, (3, 8, 7)), dtype=getattr(tt, dtype)).to("cuda")
    w = tt.tensor(rng.uniform(-1, 1, (4, 3, 3, 3)), dtype=getattr(tt, dtype)).to("cuda")
    b = tt.tensor(rng.uniform(-2, 2, (4,)), dtype=getattr(tt, dtype)).to("cuda")
    y = F.conv2d(x, w, b, padding=1)
    xr, wr, br = to_numpy(x), to_numpy(w), to_numpy(b)
    yr, _ = conv_ref(xr[None], wr, br, (1, 1), (1, 1), (1, 1), 1)
    ys, _ = conv_ref(np.abs(xr[None]), np.abs(wr), np.abs(br), (1, 1), (1, 1), (1, 1), 1)
    assert tuple(y.shape) == (4, 8, 7)
    assert_close_dot(y, yr[0], ys[0], dtype, what="unbatched")


def test_cudnn_benchmark_switch_round_trips():
    old = tt.backends.cudnn.benchmark
    try:
        for v in (True, False):
            tt.backends.cudnn.benchmark = v
            assert tt.backends.cudnn.benchmark is v
    finally:
        tt.backends.cudnn.benchmark = old
