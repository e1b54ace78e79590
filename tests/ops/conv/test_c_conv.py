"""tinytorch._C.conv2d / conv2d_backward against a direct float64 loop (all channels)."""
import numpy as np
import pytest

from tinytorch import _C
from support.c_helpers import make

F16, BF16, F32, F64 = 4, 5, 6, 7
FLOATS = [F32, F16, BF16, F64]
TOL = {F64: 1e-10, F32: 2e-5, F16: 2e-3, BF16: 1.6e-2}


def check(got, want, code, scale=4.0):
    assert got is not None
    assert tuple(got.shape) == want.shape
    np.testing.assert_allclose(got.to_dtype(F64, True).numpy(), want, rtol=TOL[code] * scale,
                               atol=TOL[code] * scale * max(1.0, np.abs(want).max()))


def conv_ref(x, w, b, stride, padding, dilation, groups, g=None):
    """Direct loops: y, and (gx, gw, gb) for upstream gradient g."""
    B, C, H, W = x.shape
    O, Cg, kh, kw = w.shape
    Og = O // groups
    Ho = (H + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    Wo = (W + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    xp = np.zeros((B, C, H + 2 * padding[0], W + 2 * padding[1]))
    xp[:, :, padding[0]:padding[0] + H, padding[1]:padding[1] + W] = x
    y = np.zeros((B, O, Ho, Wo))
    gxp, gw = np.zeros_like(xp), np.zeros_like(w)
    for o in range(O):
        c0 = (o // Og) * Cg
        for i in range(kh):
            for j in range(kw):
                hs, ws = i * dilation[0], j * dilation[1]
                patch = xp[:, c0:c0 + Cg, hs:hs + stride[0] * (Ho - 1) + 1:stride[0],
                           ws:ws + stride[1] * (Wo - 1) + 1:stride[1]]  # (B, Cg, Ho, Wo)
                y[:, o] += np.einsum("bchw,c->bhw", patch, w[o, :, i, j])
                if g is not None:
                    gw[o, :, i, j] += np.einsum("bchw,bhw->c", patch, g[:, o])
                    gxp[:, c0:c0 + Cg, hs:hs + stride[0] * (Ho - 1) + 1:stride[0],
                        ws:ws + stride[1] * (Wo - 1) + 1:stride[1]] += np.einsum("bhw,c->bchw", g[:, o], w[o, :, i, j])
    if b is not None:
        y += b[None, :, None, None]
    if g is None:
        return y
    gx = gxp[:, :, padding[0]:padding[0] + H, padding[1]:padding[1] + W]
    return y, gx, gw, g.sum(axis=(0, 2, 3))


SPECS = [
    # B, C, H, W, O, kh, kw, stride, padding, dilation, groups, bias
    (2, 3, 6, 5, 4, 3, 3, (1, 1), (0, 0), (1, 1), 1, True),
    (2, 4, 7, 6, 6, 3, 2, (2, 1), (1, 2), (1, 2), 2, True),
    (2, 4, 5, 5, 8, 3, 3, (1, 2), (1, 1), (1, 1), 4, False),
    (3, 5, 4, 3, 7, 1, 1, (1, 1), (0, 0), (1, 1), 1, True),
    (1, 2, 9, 8, 3, 2, 3, (3, 2), (2, 0), (3, 2), 1, False),
    # Ho*Wo >= 128: the CPU's per-item path (smaller outputs take the batch-inner one)
    (2, 3, 16, 17, 4, 3, 3, (1, 1), (1, 1), (1, 1), 1, True),
    (2, 4, 17, 16, 6, 1, 1, (1, 1), (0, 0), (1, 1), 2, True),
]


@pytest.mark.parametrize("code", FLOATS)
@pytest.mark.parametrize("spec", SPECS, ids=[f"spec{i}" for i in range(len(SPECS))])
def test_conv2d_forward_backward(code, spec):
    B, C, H, W, O, kh, kw, stride, padding, dilation, groups, bias = spec
    x, xn = make((B, C, W, H), code, 1, lambda t: t.transpose(2, 3))  # non-contiguous input
    w, wn = make((O, C // groups, kh, kw), code, 2)
    b, bn = make((O,), code, 3) if bias else (None, None)
    y = _C.conv2d(x, w, b, stride, padding, dilation, groups)
    g, gn = make(tuple(y.shape), code, 4)
    yr, gxr, gwr, gbr = conv_ref(xn, wn, bn, stride, padding, dilation, groups, gn)
    check(y, yr, code)
    gx, gw, gb = _C.conv2d_backward(g, x, w, stride, padding, dilation, groups, (True, True, True))
    check(gx, gxr, code)
    check(gw, gwr, code, 8.0)
    check(gb, gbr, code, 8.0)
    gx2, gw2, gb2 = _C.conv2d_backward(g, x, w, stride, padding, dilation, groups, (True, False, False))
    assert gw2 is None and gb2 is None
    check(gx2, gxr, code)


def test_conv2d_larger_batch_float32():
    # Enough work for the threaded/batched GEMM paths.
    x, xn = make((8, 16, 20, 20), F32, 5)
    w, wn = make((32, 16, 3, 3), F32, 6)
    b, bn = make((32,), F32, 7)
    y = _C.conv2d(x, w, b, (1, 1), (1, 1), (1, 1), 1)
    check(y, conv_ref(xn, wn, bn, (1, 1), (1, 1), (1, 1), 1), F32, 20.0)


def test_conv2d_batch_inner_chunks_float32():
    # ResNet-like late layer (Ho*Wo = 121 < 128): the batch-inner CPU path, with the batch split
    # over two col chunks (30 + 6 items; grad_weight accumulates across them), stride 2, groups, padding.
    x, xn = make((36, 64, 21, 21), F32, 8)
    w, wn = make((8, 32, 3, 3), F32, 9)
    b, bn = make((8,), F32, 10)
    args = ((2, 2), (1, 1), (1, 1), 2)
    y = _C.conv2d(x, w, b, *args)
    g, gn = make(tuple(y.shape), F32, 11)
    yr, gxr, gwr, gbr = conv_ref(xn, wn, bn, *args, g=gn)
    check(y, yr, F32, 20.0)
    gx, gw, gb = _C.conv2d_backward(g, x, w, *args, (True, True, True))
    check(gx, gxr, F32, 20.0)
    check(gw, gwr, F32, 40.0)
    check(gb, gbr, F32, 20.0)


def test_conv2d_errors():
    x, _ = make((1, 4, 5, 5), F32, 1)
    with pytest.raises(RuntimeError, match="channels"):
        _C.conv2d(x, make((2, 3, 3, 3), F32, 1)[0], None, (1, 1), (0, 0), (1, 1), 1)
    with pytest.raises(RuntimeError, match="divisible"):
        _C.conv2d(x, make((3, 2, 3, 3), F32, 1)[0], None, (1, 1), (0, 0), (1, 1), 2)
    with pytest.raises(RuntimeError, match="Kernel size can't be greater"):
        _C.conv2d(x, make((2, 4, 7, 7), F32, 1)[0], None, (1, 1), (0, 0), (1, 1), 1)
    with pytest.raises(RuntimeError, match="stride"):
        _C.conv2d(x, make((2, 4, 3, 3), F32, 1)[0], None, (0, 1), (0, 0), (1, 1), 1)
    with pytest.raises(RuntimeError, match="type"):
        _C.conv2d(x, make((2, 4, 3, 3), F64, 1)[0], None, (1, 1), (0, 0), (1, 1), 1)
    with pytest.raises(RuntimeError, match="bias"):
        _C.conv2d(x, make((2, 4, 3, 3), F32, 1)[0], make((3,), F32, 1)[0], (1, 1), (0, 0), (1, 1), 1)
    with pytest.raises(RuntimeError, match="grad_output"):
        _C.conv2d_backward(make((1, 2, 4, 4), F32, 1)[0], x, make((2, 4, 3, 3), F32, 1)[0], (1, 1), (0, 0), (1, 1),
                           1, (True, True, True))
