"""nn.BitLinear (BitNet b1.58) against float64 numpy: the absmean / absmax quantizers, the forward,
the straight-through gradients; 2-bit packing and the packed inference module."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
from tinytorch.nn.modules.bitlinear import absmax_int8, absmean_ternary, pack_ternary, unpack_ternary
from support.numeric import GRAD_TOL, TOL, assert_close, make
from support.training import fit_mse

EPS = 1e-5


def np_ternary(w):
    gamma = np.abs(w).mean()
    return np.clip(np.round(w / (gamma + EPS)), -1, 1), gamma


def np_int8(x):
    s = 127.0 / np.maximum(np.abs(x).max(-1, keepdims=True), EPS)
    return np.clip(np.round(x * s), -128, 127), s


def np_rms(x):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + EPS)


def np_forward(x, w, b, input_norm):
    h = np_rms(x) if input_norm else x
    q, s = np_int8(h)
    t, g = np_ternary(w)
    return (q / s) @ (t * g).T + (0 if b is None else b)


def _np(t):
    return np.asarray(t.detach().double())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_quantizers_match_numpy(dtype, layout):
    w, wr = make((12, 10), dtype, layout=layout, seed=1)
    t, gamma = absmean_ternary(w)
    tr, gr = np_ternary(wr)
    np.testing.assert_array_equal(_np(t), tr)
    assert_close(gamma, gr, tol=TOL[dtype])
    assert set(np.unique(_np(t))) <= {-1.0, 0.0, 1.0}
    x, xr = make((3, 4, 10), dtype, layout=layout, seed=2, low=-5, high=5)
    q, s = absmax_int8(x)
    qr, sr = np_int8(xr)
    np.testing.assert_array_equal(_np(q), qr)
    assert_close(s, sr, tol=TOL[dtype])
    assert _np(q).max() <= 127 and _np(q).min() >= -128


def test_quantizer_edge_cases():
    t, gamma = absmean_ternary(tt.zeros(3, 4))  # all-zero weight: γ = 0, ε keeps it finite
    assert gamma.item() == 0 and np.all(_np(t) == 0)
    q, s = absmax_int8(tt.zeros(2, 5))  # an all-zero token
    assert np.all(_np(q) == 0) and np.all(np.isfinite(_np(s)))
    q, _ = absmax_int8(tt.tensor([[1.0, -1.0, 0.5]]))  # the absmax element maps to ±127
    np.testing.assert_array_equal(_np(q), [[127, -127, 64]])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("input_norm", [False, True])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_forward_matches_numpy(dtype, input_norm, layout):
    tt.manual_seed(0)
    layer = nn.BitLinear(10, 7, dtype=getattr(tt, dtype), input_norm=input_norm)
    x, xr = make((2, 5, 10), dtype, layout=layout, seed=3)
    expect = np_forward(xr, _np(layer.weight), _np(layer.bias), input_norm)
    assert_close(layer(x), expect, tol=TOL[dtype])


def test_forward_bfloat16_close_to_float32():
    tt.manual_seed(0)
    layer = nn.BitLinear(16, 8, input_norm=False)
    x = tt.randn(4, 16)
    ref = _np(layer(x))
    out = layer.to(tt.bfloat16)(x.to(tt.bfloat16))
    assert out.dtype == tt.bfloat16
    np.testing.assert_allclose(_np(out), ref, rtol=TOL["bfloat16"][0] * 4, atol=TOL["bfloat16"][1] * 4)


@pytest.mark.parametrize("input_norm", [False, True])
def test_straight_through_gradients(input_norm):
    tt.manual_seed(1)
    layer = nn.BitLinear(9, 6, dtype=tt.float64, input_norm=input_norm)
    x, xr = make((4, 9), "float64", seed=4)
    x.requires_grad_()
    g = np.random.default_rng(5).normal(size=(4, 6))
    layer(x).backward(tt.tensor(g))
    h = np_rms(xr) if input_norm else xr
    q, s = np_int8(h)
    t, gamma = np_ternary(_np(layer.weight))
    # dW = gᵀ·x̃/s (quantized input), db = Σg, dh = g·γW̃ (identity through both quantizers)
    assert_close(layer.weight.grad, g.T @ (q / s), tol=GRAD_TOL["float64"])
    assert_close(layer.bias.grad, g.sum(0), tol=GRAD_TOL["float64"])
    dh = g @ (t * gamma)
    if input_norm:  # then through the RMSNorm: (dh - n·mean(n·dh)) / rms
        r = np.sqrt((xr * xr).mean(-1, keepdims=True) + EPS)
        n = xr / r
        dh = (dh - n * (n * dh).mean(-1, keepdims=True)) / r
    assert_close(x.grad, dh, tol=GRAD_TOL["float64"])


def _through_norm(dh, xr, input_norm):
    if not input_norm:
        return dh
    r = np.sqrt((xr * xr).mean(-1, keepdims=True) + EPS)  # RMSNorm backward: (dh - n·mean(n·dh)) / rms
    n = xr / r
    return (dh - n * (n * dh).mean(-1, keepdims=True)) / r


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("input_norm", [False, True])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_latent_straight_through_gradients(dtype, input_norm, layout):
    # ste="latent" (gradients from the full-precision weights): the forward is the quantized one, the backward that of a
    # plain Linear on the full-precision weight and the unquantized (normalized) input
    tt.manual_seed(1)
    layer = nn.BitLinear(9, 6, dtype=getattr(tt, dtype), input_norm=input_norm, ste="latent")
    reference = nn.BitLinear(9, 6, dtype=getattr(tt, dtype), input_norm=input_norm)
    reference.load_state_dict(layer.state_dict())
    x, xr = make((2, 4, 9), dtype, layout=layout, seed=4)
    x.requires_grad_()
    y = layer(x)
    assert_close(y, np_forward(xr, _np(layer.weight), _np(layer.bias), input_norm), tol=TOL[dtype])
    assert_close(y, _np(reference(x)), tol=TOL[dtype])  # same forward as the default STE
    g = np.random.default_rng(5).normal(size=(2, 4, 6))
    y.backward(tt.tensor(g, dtype=getattr(tt, dtype)))
    w = _np(layer.weight)
    h = np_rms(xr) if input_norm else xr
    assert_close(layer.weight.grad, g.reshape(-1, 6).T @ h.reshape(-1, 9), tol=GRAD_TOL[dtype])
    assert_close(layer.bias.grad, g.reshape(-1, 6).sum(0), tol=GRAD_TOL[dtype])
    assert_close(x.grad, _through_norm(g @ w, xr, input_norm), tol=GRAD_TOL[dtype])
    # and the default differs exactly where the issue's wording and the authors' code differ
    t, gamma = np_ternary(w)
    assert not np.allclose(g @ w, g @ (t * gamma), rtol=0.05)


def test_latent_ste_trains_and_bad_mode():
    tt.manual_seed(3)
    rng = np.random.default_rng(7)
    x = tt.tensor(rng.normal(size=(256, 16)), dtype=tt.float32)
    y = x @ tt.tensor(rng.choice([-1.0, 0.0, 1.0], size=(16, 4)), dtype=tt.float32)
    layer = nn.BitLinear(16, 4, input_norm=False, ste="latent")
    opt = tt.optim.Adam(layer.parameters(), lr=1e-2)
    losses = []
    for _ in range(150):
        loss = ((layer(x) - y) ** 2).mean()
        losses.append(loss.item())
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert losses[-1] < 0.1 * losses[0]
    with pytest.raises(ValueError, match="BitLinear: ste must be one of"):
        nn.BitLinear(4, 3, ste="exact")


@pytest.mark.parametrize("in_features", [8, 10, 13])
def test_pack_unpack_round_trip(in_features):
    rng = np.random.default_rng(6)
    t = rng.integers(-1, 2, (5, in_features)).astype(np.float32)
    packed = pack_ternary(tt.tensor(t))
    assert packed.dtype == tt.uint8 and tuple(packed.shape) == (5, -(-in_features // 4))
    np.testing.assert_array_equal(_np(unpack_ternary(packed, in_features)), t)
    # the layout: column j + k·K4 of a row is in bits 2k..2k+1 of byte j, as t + 1 (padding: code 1)
    k4 = -(-in_features // 4)
    padded = np.concatenate([t, np.zeros((5, 4 * k4 - in_features), np.float32)], 1)
    for j in range(k4):
        assert int(_np(packed)[0, j]) == sum(int(padded[0, j + k * k4] + 1) << (2 * k) for k in range(4))


@pytest.mark.parametrize("input_norm", [False, True])
def test_packed_module_equals_bitlinear_and_is_small(input_norm):
    tt.manual_seed(2)
    layer = nn.BitLinear(30, 12, input_norm=input_norm)
    packed = layer.pack()
    x = tt.randn(2, 3, 30)
    assert_close(packed(x), _np(layer(x)), tol=TOL["float32"])
    assert_close(packed.unpacked_weight(), _np(layer.quantized_weight()), tol=TOL["float32"])
    float_bytes = layer.weight.numel() * 4
    assert packed.weight_nbytes() <= float_bytes / 8
    assert packed.packed.numel() == 12 * 8  # ceil(30 / 4) bytes per row
    # the packed buffers travel in a state dict
    sd = packed.state_dict()
    assert set(sd) == {"packed", "bias"}
    no_bias = nn.BitLinear(30, 4, bias=False).pack()
    assert no_bias.bias is None and tuple(no_bias(x).shape) == (2, 3, 4)


def test_trains_a_small_regression():
    tt.manual_seed(3)
    rng = np.random.default_rng(7)
    x = tt.tensor(rng.normal(size=(256, 16)), dtype=tt.float32)
    y = x @ tt.tensor(rng.choice([-1.0, 0.0, 1.0], size=(16, 4)), dtype=tt.float32)
    layer = nn.BitLinear(16, 4, input_norm=False)
    opt = tt.optim.Adam(layer.parameters(), lr=1e-2)
    first, last = fit_mse(layer, opt, x, y, 150)
    assert last < 0.1 * first


def test_errors():
    layer = nn.BitLinear(4, 3)
    with pytest.raises(TypeError, match="BitLinear: input must be a floating-point tensor, got tinytorch.int64"):
        layer(tt.ones(2, 4, dtype=tt.int64))
    with pytest.raises(ValueError, match=r"BitLinear: expected input with last dimension 4, got input of shape \[2, 5\]"):
        layer(tt.ones(2, 5))
    with pytest.raises(TypeError, match="PackedBitLinear: input must be a floating-point"):
        layer.pack()(tt.ones(2, 4, dtype=tt.int32))
    with pytest.raises(ValueError, match="packed must be uint8"):
        nn.PackedBitLinear(tt.zeros(3, 2), 1.0, 8)
    with pytest.raises(ValueError, match="2-D"):
        pack_ternary(tt.zeros(4))


@pytest.mark.parametrize("shape,in_features,out_features", [((1, 37), 37, 9), ((2, 3, 64), 64, 33), ((5, 8), 8, 1), ((1, 1, 2048), 2048, 7)])
def test_packed_cpu_kernel_equals_unpack_path(shape, in_features, out_features):
    from tinytorch import _C
    assert hasattr(_C, "bitnet_matmul"), "the packed CPU kernel is built with _C"
    tt.manual_seed(4)
    layer = nn.BitLinear(in_features, out_features)
    packed = layer.pack()
    x = tt.randn(*shape) * 3
    y_kernel = packed(x)
    packed.use_kernel = False
    y_unpack = packed(x)
    np.testing.assert_array_equal(_np(y_kernel), _np(y_unpack))  # both sums are exact integers times one scale
    assert_close(y_kernel, np_forward(_np(x), _np(layer.weight), _np(layer.bias), True), tol=TOL["float32"])


def test_packed_cpu_kernel_argument_errors():
    from tinytorch import _C
    q, w, m = tt.zeros(2, 8), tt.zeros(3, 2, dtype=tt.uint8), tt.ones(2)
    with pytest.raises(TypeError, match="bitnet_matmul: packed must be uint8"):
        _C.bitnet_matmul(q._impl, tt.zeros(3, 2)._impl, m._impl)
    with pytest.raises(ValueError, match="needs 2 bytes per row for K = 8"):
        _C.bitnet_matmul(q._impl, tt.zeros(3, 3, dtype=tt.uint8)._impl, m._impl)
    with pytest.raises(ValueError, match="mult must be"):
        _C.bitnet_matmul(q._impl, w._impl, tt.ones(3)._impl)
