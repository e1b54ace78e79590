"""F.pad in every mode (constant, reflect, replicate, circular; negative pads crop) against numpy.pad,
on every float dtype and memory layout, with gradients; Conv1d/Conv2d padding_mode; padding='same'
with an even kernel (the asymmetric split PyTorch uses); the padding layers (ReflectionPad*,
ReplicationPad*, ZeroPad*, ConstantPad*, CircularPad*)."""
import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
import tinytorch.nn.functional as F
from tinytorch.autograd import gradcheck
from support.numeric import FLOAT_DTYPES, assert_close, make, to_numpy

NP_MODE = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}
LAYOUTS = ["contiguous", "transposed", "sliced"]


def pad_ref(xr, pad, mode, value=0.0):
    """numpy version of F.pad: negative pads crop first, then numpy pads what is left."""
    k = len(pad) // 2
    widths = [(0, 0)] * (xr.ndim - k) + [(max(pad[2 * i], 0), max(pad[2 * i + 1], 0)) for i in reversed(range(k))]
    crops = [(0, 0)] * (xr.ndim - k) + [(max(-pad[2 * i], 0), max(-pad[2 * i + 1], 0)) for i in reversed(range(k))]
    sl = tuple(slice(lo, xr.shape[d] - hi) for d, (lo, hi) in enumerate(crops))
    xr = xr[sl]
    kw = {"constant_values": value} if mode == "constant" else {}
    return np.pad(xr, widths, mode=NP_MODE[mode], **kw)


CASES = [  # (input shape, pad)
    ((2, 3, 5), (2, 1)),
    ((3, 5), (0, 3)),                      # unbatched (C, W)
    ((2, 3, 4, 5), (1, 2, 3, 0)),
    ((2, 2, 3, 4, 5), (1, 1, 2, 0, 0, 2)),
]


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_pad_modes_match_numpy(mode, dtype, layout):
    for shape, pad in CASES:
        x, xr = make(shape, dtype, layout)
        assert_close(F.pad(x, pad, mode=mode), pad_ref(xr, pad, mode), dtype, what=f"{mode} {shape} {pad}")
    x, xr = make((2, 3, 6), dtype, layout, seed=1)
    assert_close(F.pad(x, (-2, 3), mode=mode), pad_ref(xr, (-2, 3), mode), dtype, what="crop left, pad right")
    if mode == "constant":
        assert_close(F.pad(x, (1, 2), value=-1.5), pad_ref(xr, (1, 2), mode, -1.5), dtype)


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_gradients(mode):
    x, _ = make((2, 3, 4, 5), "float64", requires_grad=True)
    assert gradcheck(lambda t: F.pad(t, (2, 1, 1, 3), mode=mode), (x,))
    x1, _ = make((2, 3, 6), "float64", "transposed", seed=2, requires_grad=True)
    assert gradcheck(lambda t: F.pad(t, (-1, 4), mode=mode), (x1,))


def test_pad_gradient_sums_the_copies():
    # replicate copies the edge 3 extra times: its gradient is 4 (the values themselves, and that
    # the sum lands on the right elements, checked against numpy's scatter-add).
    x = tt.arange(4.0, dtype=tt.float64).reshape(1, 1, 4).requires_grad_()
    w = np.arange(1.0, 11.0).reshape(1, 1, 10)
    (F.pad(x, (2, 4), mode="replicate") * tt.tensor(w)).sum().backward()
    idx = np.array([0, 0, 0, 1, 2, 3, 3, 3, 3, 3])
    ref = np.zeros(4)
    np.add.at(ref, idx, w[0, 0])
    assert_close(x.grad, ref.reshape(1, 1, 4))


def test_pad_errors_name_the_problem():
    x = tt.zeros(1, 2, 3)
    with pytest.raises(ValueError, match=r"reflect padding \(3, 0\) at dimension 2 of input \[1, 2, 3\]"):
        F.pad(x, (3, 0), mode="reflect")
    with pytest.raises(ValueError, match="circular"):
        F.pad(x, (0, 4), mode="circular")
    with pytest.raises(ValueError, match="doesn't take in value"):
        F.pad(x, (1, 1), mode="replicate", value=2.0)
    with pytest.raises(NotImplementedError, match="needs a 3-D or 4-D input"):
        F.pad(x[0], (1, 1, 1, 1), mode="reflect")
    with pytest.raises(NotImplementedError, match="mode 'symmetric'"):
        F.pad(x, (1, 1), mode="symmetric")
    with pytest.raises(ValueError, match="divisible by 2"):
        F.pad(x, (1, 1, 1))
    with pytest.raises(ValueError, match="leaves less than nothing"):
        F.pad(x, (-2, -2))


def conv_ref(xr, w, b):
    """'valid' cross-correlation of (N, C, H, W) with (O, C, kh, kw), float64."""
    kh, kw = w.shape[2:]
    H, W = xr.shape[2] - kh + 1, xr.shape[3] - kw + 1
    cols = np.stack([xr[:, :, i:i + H, j:j + W] for i in range(kh) for j in range(kw)], -1)  # N C H W K
    out = np.einsum("nchwk,ock->nohw", cols, w.reshape(w.shape[0], w.shape[1], -1))
    return out + (0 if b is None else b.reshape(1, -1, 1, 1))


@pytest.mark.parametrize("padding_mode", ["zeros", "reflect", "replicate", "circular"])
def test_conv2d_padding_mode(padding_mode):
    m = nn.Conv2d(2, 3, (3, 2), padding=(2, 1), padding_mode=padding_mode).double()
    x, xr = make((2, 2, 5, 6), "float64", "transposed")
    mode = "constant" if padding_mode == "zeros" else padding_mode
    ref = conv_ref(pad_ref(xr, (1, 1, 2, 2), mode), to_numpy(m.weight), to_numpy(m.bias))
    assert_close(m(x), ref)
    assert_close(m(x[0]), ref[0])                                 # unbatched
    assert f"padding_mode={padding_mode}" in repr(m) or padding_mode == "zeros"
    assert gradcheck(lambda t: m(t).sum(), (make((1, 2, 4, 4), "float64", requires_grad=True)[0],))
    c1 = nn.Conv1d(2, 2, 3, padding=1, padding_mode=padding_mode).double()
    y, yr = make((2, 2, 7), "float64", seed=3)
    ref1 = conv_ref(pad_ref(yr, (1, 1), mode)[:, :, None, :], to_numpy(c1.weight)[:, :, None, :], to_numpy(c1.bias))
    assert_close(c1(y), ref1[:, :, 0, :])


def test_conv_bad_padding_mode():
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        nn.Conv2d(1, 1, 3, padding_mode="mirror")


@pytest.mark.parametrize("kernel,dilation", [((2, 4), (1, 1)), ((3, 2), (2, 3)), ((4, 4), (1, 2))])
@pytest.mark.parametrize("padding_mode", ["zeros", "reflect"])
def test_conv_same_padding_with_even_kernels(kernel, dilation, padding_mode):
    # PyTorch splits an odd total padding d*(k-1) as (total // 2 before, the rest after).
    m = nn.Conv2d(2, 3, kernel, padding="same", dilation=dilation, padding_mode=padding_mode).double()
    x, xr = make((2, 2, 7, 8), "float64", "sliced", seed=4)
    totals = [d * (k - 1) for d, k in zip(dilation, kernel)]
    pad = (totals[1] // 2, totals[1] - totals[1] // 2, totals[0] // 2, totals[0] - totals[0] // 2)
    mode = "constant" if padding_mode == "zeros" else padding_mode
    w = to_numpy(m.weight)
    wd = np.zeros(w.shape[:2] + tuple(d * (k - 1) + 1 for d, k in zip(dilation, kernel)))
    wd[:, :, ::dilation[0], ::dilation[1]] = w                  # the dilated kernel
    ref = conv_ref(pad_ref(xr, pad, mode), wd, to_numpy(m.bias))
    y = m(x)
    assert tuple(y.shape) == (2, 3, 7, 8)
    assert_close(y, ref)
    xg = make((1, 2, 5, 5), "float64", requires_grad=True)[0]
    assert gradcheck(lambda t: F.conv2d(t, m.weight, None, padding="same", dilation=dilation), (xg,))
    y1 = F.conv1d(x[:, :, 0], m.weight[:, :, 0], None, padding="same", dilation=dilation[1])
    assert tuple(y1.shape) == (2, 3, 8)
    assert_close(y1, conv_ref(pad_ref(xr[:, :, :1], pad[:2], "constant"), wd[:, :, :1], None)[:, :, 0])


def test_padding_layers():
    x, xr = make((2, 3, 4, 5), "float64", "transposed")
    cases = [(nn.ZeroPad2d((1, 2, 0, 1)), dict(mode="constant")), (nn.ConstantPad2d(1, 2.5), dict(mode="constant",
             constant_values=2.5)), (nn.ReflectionPad2d((2, 1, 1, 3)), dict(mode="reflect")),
             (nn.ReplicationPad2d(2), dict(mode="edge")), (nn.CircularPad2d((1, 0, 2, 1)), dict(mode="wrap"))]
    for m, kw in cases:
        p = m.padding
        assert_close(m(x), np.pad(xr, ((0, 0), (0, 0), (p[2], p[3]), (p[0], p[1])), **kw), what=repr(m))
    assert_close(nn.ReflectionPad1d(2)(x[0]), np.pad(xr[0], ((0, 0), (0, 0), (2, 2)), mode="reflect"))
    assert repr(nn.ConstantPad1d((1, 2), 3.5)) == "ConstantPad1d(padding=(1, 2), value=3.5)"
