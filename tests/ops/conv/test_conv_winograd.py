"""conv2d's CPU Winograd F(2x2, 3x3) path (stride-1 3x3 convolutions with >= 16 channels in and out
and >= 64 outputs per plane: forward and input gradient) against float64 numpy references, on
non-contiguous inputs and weights, odd output sizes, paddings 0-2 and 16-bit dtypes."""
from __future__ import annotations

import numpy as np
import pytest
from support.numeric import GRAD_TOL, assert_close_dot, make, to_numpy

import tinytorch as tt
import tinytorch.nn.functional as F


def conv_ref(x: np.ndarray, w: np.ndarray, pad: int) -> np.ndarray:
    """x: (B, C, H, W), w: (O, C, 3, 3) float64 -> (B, O, Ho, Wo), stride 1."""
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(2, 3))  # (B, C, Ho, Wo, 3, 3)
    return np.einsum("bchwij,ocij->bohw", win, w)


def grad_input_ref(go: np.ndarray, w: np.ndarray, pad: int) -> np.ndarray:
    """The input gradient of conv_ref: go convolved with the flipped, transposed kernel."""
    return conv_ref(go, w[:, :, ::-1, ::-1].transpose(1, 0, 2, 3), 2 - pad)


# (B, C, O, H, W, padding): every one takes the Winograd path (3x3, stride 1, >= 16 channels, >= 64 outputs)
SHAPES = [
    (3, 16, 24, 8, 8, 1),
    (2, 32, 16, 10, 11, 0),  # 8x9 output: an odd width, edge tiles cropped
    (2, 16, 16, 9, 8, 2),  # 11x10 output: an odd height
    (1, 24, 32, 17, 13, 1),
]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_winograd_conv2d_forward_and_grads(shape, dtype):
    B, C, O, H, W, pad = shape
    x, xr = make((B, C, H, W), dtype, layout="sliced", low=-1, high=1, seed=1, requires_grad=True)
    w, wr = make((O, C, 3, 3), dtype, layout="transposed", low=-0.5, high=0.5, seed=2, requires_grad=True)
    b, br = make((O,), dtype, seed=3, requires_grad=True)
    assert not x.is_contiguous() and not w.is_contiguous()
    y = F.conv2d(x, w, b, padding=pad)
    want = conv_ref(xr, wr, pad) + br[None, :, None, None]
    scale = conv_ref(np.abs(xr), np.abs(wr), pad) + np.abs(br)[None, :, None, None]
    assert tuple(y.shape) == want.shape
    assert_close_dot(y, want, scale, dtype, what="forward")

    go, gor = make(want.shape, dtype, low=-1, high=1, seed=4)
    y.backward(go)
    gx_want = grad_input_ref(gor, wr, pad)
    gx_scale = grad_input_ref(np.abs(gor), np.abs(wr), pad)
    rtol, atol = GRAD_TOL[dtype]
    s = np.maximum(gx_scale, np.finfo(np.float64).tiny)
    np.testing.assert_allclose(to_numpy(x.grad) / s, gx_want / s, rtol=rtol, atol=atol, err_msg="grad_input")
    xp = np.pad(xr, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (3, 3), axis=(2, 3))
    gw_want = np.einsum("bchwij,bohw->ocij", win, gor)
    gw_scale = np.einsum("bchwij,bohw->ocij", np.abs(win), np.abs(gor))
    s = np.maximum(gw_scale, np.finfo(np.float64).tiny)
    np.testing.assert_allclose(to_numpy(w.grad) / s, gw_want / s, rtol=rtol, atol=atol, err_msg="grad_weight")
    np.testing.assert_allclose(to_numpy(b.grad), gor.sum(axis=(0, 2, 3)), rtol=rtol, atol=atol * B * want.shape[2]
                               * want.shape[3], err_msg="grad_bias")


def test_winograd_conv2d_resnet_layer_float32():
    # a ResNet-shaped layer (64 channels, 16x16): errors stay at float32 rounding of the dot products
    x, xr = make((2, 64, 16, 16), "float32", low=-1, high=1, seed=5)
    w, wr = make((64, 64, 3, 3), "float32", low=-0.1, high=0.1, seed=6)
    y = F.conv2d(x, w, padding=1)
    assert_close_dot(y, conv_ref(xr, wr, 1), conv_ref(np.abs(xr), np.abs(wr), 1), "float32")


def test_winograd_conv2d_independent_of_thread_count():
    # chunks of items differ with the thread count; every result must not (bit-equal)
    x, _ = make((6, 16, 12, 12), "float32", seed=7, requires_grad=True)
    w, _ = make((32, 16, 3, 3), "float32", low=-0.5, high=0.5, seed=8, requires_grad=True)
    go, _ = make((6, 32, 12, 12), "float32", seed=9)
    old = tt.get_num_threads()
    results = []
    try:
        for n in (1, 2, 3):
            tt.set_num_threads(n)
            x.grad = w.grad = None
            y = F.conv2d(x, w, padding=1)
            y.backward(go)
            results.append([to_numpy(t) for t in (y, x.grad, w.grad)])
    finally:
        tt.set_num_threads(old)
    for other in results[1:]:
        for a, b in zip(results[0], other):
            np.testing.assert_array_equal(a, b)
