"""conv3d / conv_transpose3d and Conv3d / ConvTranspose3d against float64 numpy references (a
sum over kernel offsets of einsums for conv3d, a scatter for the transpose): stride, padding
('same'/'valid'), dilation, groups, output_padding, bias, unbatched input, padding_mode,
non-contiguous inputs, every float dtype; gradients by gradcheck; constructor, state_dict,
repr and errors as PyTorch's."""
import math

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
import tinytorch.nn.functional as F
from tinytorch.autograd import gradcheck
from support.numeric import FLOAT_DTYPES, GRAD_TOL, assert_close, assert_close_dot, make


def _t3(v):
    return (v,) * 3 if isinstance(v, int) else tuple(v)


def conv3d_ref(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """float64 conv3d: for every kernel offset, an einsum over the strided input window."""
    stride, dilation = _t3(stride), _t3(dilation)
    k = w.shape[2:]
    if padding == "same":
        tot = [d * (kk - 1) for d, kk in zip(dilation, k)]
        pads = [(t // 2, t - t // 2) for t in tot]
    elif padding == "valid":
        pads = [(0, 0)] * 3
    else:
        pads = [(p, p) for p in _t3(padding)]
    x = np.pad(x, [(0, 0), (0, 0)] + pads)
    n, c = x.shape[:2]
    out_sz = [(x.shape[2 + i] - dilation[i] * (k[i] - 1) - 1) // stride[i] + 1 for i in range(3)]
    cout, cg = w.shape[:2]
    og = cout // groups
    y = np.zeros((n, cout, *out_sz))
    for a in range(k[0]):
        for bb in range(k[1]):
            for cc in range(k[2]):
                win = x[:, :, a * dilation[0]: a * dilation[0] + (out_sz[0] - 1) * stride[0] + 1: stride[0],
                        bb * dilation[1]: bb * dilation[1] + (out_sz[1] - 1) * stride[1] + 1: stride[1],
                        cc * dilation[2]: cc * dilation[2] + (out_sz[2] - 1) * stride[2] + 1: stride[2]]
                for g in range(groups):
                    y[:, g * og:(g + 1) * og] += np.einsum("ncdhw,oc->nodhw", win[:, g * cg:(g + 1) * cg],
                                                           w[g * og:(g + 1) * og, :, a, bb, cc])
    return y if b is None else y + b.reshape(1, -1, 1, 1, 1)


def conv_transpose3d_ref(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """float64 transposed conv3d: every input element scatters its weighted kernel."""
    stride, padding, output_padding, dilation = _t3(stride), _t3(padding), _t3(output_padding), _t3(dilation)
    n, cin = x.shape[:2]
    sz = x.shape[2:]
    cog = w.shape[1]
    k = w.shape[2:]
    cpg = cin // groups
    full = [(sz[i] - 1) * stride[i] + dilation[i] * (k[i] - 1) + 1 + output_padding[i] for i in range(3)]
    y = np.zeros((n, cog * groups, *full))
    for a in range(k[0]):
        for bb in range(k[1]):
            for cc in range(k[2]):
                for g in range(groups):
                    part = np.einsum("ncdhw,co->nodhw", x[:, g * cpg:(g + 1) * cpg], w[g * cpg:(g + 1) * cpg, :, a, bb, cc])
                    y[:, g * cog:(g + 1) * cog,
                      a * dilation[0]: a * dilation[0] + (sz[0] - 1) * stride[0] + 1: stride[0],
                      bb * dilation[1]: bb * dilation[1] + (sz[1] - 1) * stride[1] + 1: stride[1],
                      cc * dilation[2]: cc * dilation[2] + (sz[2] - 1) * stride[2] + 1: stride[2]] += part
    y = y[:, :, padding[0]: full[0] - padding[0], padding[1]: full[1] - padding[1], padding[2]: full[2] - padding[2]]
    return y if b is None else y + b.reshape(1, -1, 1, 1, 1)


CONV_CASES = [  # (x shape, weight shape, kwargs)
    ((2, 4, 5, 6, 7), (6, 2, 3, 2, 3), dict(stride=(2, 1, 2), padding=(1, 0, 1), dilation=(1, 2, 1), groups=2)),
    ((2, 3, 4, 5, 6), (4, 3, 2, 3, 2), dict(padding="same", dilation=(2, 1, 1))),
    ((1, 2, 4, 4, 5), (3, 2, 3, 3, 3), dict(padding="valid", stride=2)),
    ((2, 3, 3, 4, 4), (5, 3, 1, 1, 1), dict()),
]
TRANSPOSE_CASES = [
    ((2, 4, 3, 4, 5), (4, 3, 3, 2, 3), dict(stride=2, padding=1, output_padding=1, groups=2)),
    ((1, 4, 3, 3, 4), (4, 1, 2, 2, 2), dict(stride=(1, 2, 3), padding=(0, 1, 0), dilation=(2, 1, 1), groups=4,
                                          output_padding=(1, 0, 2))),
    ((2, 3, 2, 3, 3), (3, 2, 3, 1, 2), dict(stride=3, padding=2, output_padding=2)),
]


def _abs_scale(fn, xr, wr, kw):
    return fn(np.abs(xr), np.abs(wr), None, **kw)


def _case_inputs(xs, ws, cout, dtype, layout, case, requires_grad=False):
    """x of shape ``xs`` (in ``layout``), w of shape ``ws`` and a bias of ``cout`` channels for case
    number ``case``: a (tensor, float64 values) pair each."""
    return (make(xs, dtype, layout, seed=case, requires_grad=requires_grad),
            make(ws, dtype, seed=case + 10, requires_grad=requires_grad),
            make((cout,), dtype, seed=case + 20, requires_grad=requires_grad))


def _check_batched(fn, ref_fn, xs, ws, kw, cout, case, dtype, layout):
    """fn(x, w, b, **kw) against ref_fn's float64 result: dtype, shape, values in units of the
    |x| |w| sums; returns x, w, b, the reference and that scale (for the unbatched checks)."""
    (x, xr), (w, wr), (b, br) = _case_inputs(xs, ws, cout, dtype, layout, case)
    ref = ref_fn(xr, wr, br, **kw)
    y = fn(x, w, b, **kw)
    assert y.dtype == x.dtype and tuple(y.shape) == ref.shape
    scale = _abs_scale(ref_fn, xr, wr, kw) + np.abs(br).reshape(1, -1, 1, 1, 1)
    assert_close_dot(y, ref, scale, dtype)
    return x, w, b, ref, scale


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("case", range(len(CONV_CASES)))
def test_conv3d_matches_reference(case, dtype, layout):
    xs, ws, kw = CONV_CASES[case]
    x, w, b, ref, scale = _check_batched(F.conv3d, conv3d_ref, xs, ws, kw, ws[0], case, dtype, layout)
    assert_close_dot(tt.conv3d(x[0], w, b, **kw), ref[0], scale[0], dtype, what="unbatched")


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("case", range(len(TRANSPOSE_CASES)))
def test_conv_transpose3d_matches_reference(case, dtype, layout):
    xs, ws, kw = TRANSPOSE_CASES[case]
    cout = ws[1] * kw.get("groups", 1)
    x, w, b, ref, scale = _check_batched(F.conv_transpose3d, conv_transpose3d_ref, xs, ws, kw, cout, case, dtype,
                                         layout)
    assert_close_dot(tt.conv_transpose3d(x[1 if xs[0] > 1 else 0], w, b, **kw), ref[1 if xs[0] > 1 else 0],
                     scale[0], dtype, what="unbatched")


@pytest.mark.parametrize("case", range(len(CONV_CASES)))
def test_conv3d_gradcheck(case):
    xs, ws, kw = CONV_CASES[case]
    (x, _), (w, _), (b, _) = _case_inputs((1,) + xs[1:], ws, ws[0], "float64", "transposed", case,
                                          requires_grad=True)
    assert gradcheck(lambda x, w, b: F.conv3d(x, w, b, **kw), (x, w, b))


@pytest.mark.parametrize("case", range(len(TRANSPOSE_CASES)))
def test_conv_transpose3d_gradcheck(case):
    xs, ws, kw = TRANSPOSE_CASES[case]
    (x, _), (w, _), (b, _) = _case_inputs((1,) + xs[1:], ws, ws[1] * kw.get("groups", 1), "float64", "transposed",
                                          case, requires_grad=True)
    assert gradcheck(lambda x, w, b: F.conv_transpose3d(x, w, b, **kw), (x, w, b))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_conv3d_gradients_low_precision(dtype):
    """Low-precision gradients against the float64 gradients of the same (rounded) values."""
    xs, ws, kw = CONV_CASES[0]
    x, _ = make(xs, dtype, seed=1, requires_grad=True)
    w, _ = make(ws, dtype, seed=2, requires_grad=True)
    x64 = x.detach().double().requires_grad_(True)
    w64 = w.detach().double().requires_grad_(True)
    F.conv3d(x, w, None, **kw).sum().backward()
    F.conv3d(x64, w64, None, **kw).sum().backward()
    scale_x = float(np.abs(x64.grad.numpy()).max())
    scale_w = float(np.abs(w64.grad.numpy()).max())
    assert_close(x.grad.double().numpy() / scale_x, x64.grad.numpy() / scale_x, tol=GRAD_TOL[dtype])
    assert_close(w.grad.double().numpy() / scale_w, w64.grad.numpy() / scale_w, tol=GRAD_TOL[dtype])


@pytest.mark.parametrize("mode, np_mode", [("reflect", "reflect"), ("replicate", "edge"), ("circular", "wrap")])
def test_conv3d_module_padding_modes(mode, np_mode):
    tt.manual_seed(0)
    m = nn.Conv3d(2, 3, (3, 2, 3), padding=(1, 2, 1), padding_mode=mode, dtype=tt.float64)
    x, xr = make((2, 2, 4, 5, 4), "float64", "transposed", seed=3)
    xp = np.pad(xr, [(0, 0), (0, 0), (1, 1), (2, 2), (1, 1)], mode=np_mode)
    ref = conv3d_ref(xp, m.weight.detach().numpy(), m.bias.detach().numpy())
    assert_close(m(x), ref, "float64")


def test_conv3d_module_same_padding_and_repr():
    m = nn.Conv3d(2, 4, (2, 3, 4), padding="same", dilation=(1, 2, 1), bias=False, dtype=tt.float64)
    x, xr = make((1, 2, 3, 5, 6), "float64", seed=4)
    assert_close(m(x), conv3d_ref(xr, m.weight.detach().numpy(), None, padding="same", dilation=(1, 2, 1)),
                 "float64")
    assert repr(m) == ("Conv3d(2, 4, kernel_size=(2, 3, 4), stride=(1, 1, 1), padding=same, dilation=(1, 2, 1), "
                       "bias=False)")
    assert repr(nn.Conv3d(3, 4, (1, 2, 3), stride=2, padding=1, bias=False, padding_mode="reflect")) == (
        "Conv3d(3, 4, kernel_size=(1, 2, 3), stride=(2, 2, 2), padding=(1, 1, 1), bias=False, padding_mode=reflect)")
    assert repr(nn.ConvTranspose3d(3, 4, 2, output_padding=1, stride=2)) == (
        "ConvTranspose3d(3, 4, kernel_size=(2, 2, 2), stride=(2, 2, 2), output_padding=(1, 1, 1))")


def test_conv3d_parameters_and_init():
    tt.manual_seed(0)
    m = nn.Conv3d(4, 6, (3, 2, 2), groups=2)
    assert list(m.state_dict()) == ["weight", "bias"]
    assert tuple(m.weight.shape) == (6, 2, 3, 2, 2) and tuple(m.bias.shape) == (6,)
    bound = 1 / math.sqrt(2 * 3 * 2 * 2)   # kaiming_uniform(a=sqrt(5)) and the bias: 1/sqrt(fan_in)
    assert float(m.weight.abs().max()) <= bound and float(m.weight.abs().max()) > bound / 2
    assert float(m.bias.abs().max()) <= bound
    t = nn.ConvTranspose3d(4, 6, 2, groups=2, bias=False)
    assert tuple(t.weight.shape) == (4, 3, 2, 2, 2) and t.bias is None
    assert list(t.state_dict()) == ["weight"]
    assert nn.Conv3d(2, 2, 1, dtype=tt.float64).weight.dtype == tt.float64


def test_conv_transpose3d_module_output_size():
    tt.manual_seed(0)
    m = nn.ConvTranspose3d(3, 2, 3, stride=2, padding=1, dtype=tt.float64)
    x, xr = make((1, 3, 3, 4, 4), "float64", seed=5)
    y = m(x, output_size=[6, 8, 7])
    assert tuple(y.shape) == (1, 2, 6, 8, 7)
    ref = conv_transpose3d_ref(xr, m.weight.detach().numpy(), m.bias.detach().numpy(), 2, 1, (1, 1, 0))
    assert_close(y, ref, "float64")
    with pytest.raises(ValueError, match="valid sizes"):
        m(x, output_size=[9, 8, 7])


def test_conv3d_errors():
    x = tt.randn(1, 3, 3, 4, 4)
    with pytest.raises(RuntimeError, match="Expected 4D \\(unbatched\\) or 5D \\(batched\\) input to conv3d"):
        F.conv3d(tt.randn(2, 3, 4), tt.randn(2, 3, 1, 1, 1))
    with pytest.raises(RuntimeError, match="expected input\\[1, 3, 3, 4, 4\\] to have 2 channels, but got 3"):
        F.conv3d(x, tt.randn(2, 2, 1, 1, 1))
    with pytest.raises(RuntimeError, match="Kernel size can't be greater than actual input size"):
        F.conv3d(x, tt.randn(2, 3, 5, 1, 1))
    with pytest.raises(RuntimeError, match="padding='same' is not supported for strided convolutions"):
        F.conv3d(x, tt.randn(2, 3, 1, 1, 1), stride=2, padding="same")
    with pytest.raises(RuntimeError, match="Invalid padding string: 'foo'"):
        F.conv3d(x, tt.randn(2, 3, 1, 1, 1), padding="foo")
    with pytest.raises(RuntimeError, match="should be the same"):
        F.conv3d(x, tt.randn(2, 3, 1, 1, 1, dtype=tt.float64))
    with pytest.raises(RuntimeError, match="Given transposed=1, weight of size \\[2, 3, 1, 1, 1\\]"):
        F.conv_transpose3d(x, tt.randn(2, 3, 1, 1, 1))
    with pytest.raises(RuntimeError, match="output padding must be smaller than either stride or dilation"):
        F.conv_transpose3d(x, tt.randn(3, 3, 1, 1, 1), output_padding=1)
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.Conv3d(3, 4, 2, groups=2)
    with pytest.raises(ValueError, match="padding='same' is not supported for strided convolutions"):
        nn.Conv3d(2, 2, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="Invalid padding string 'foo', should be one of"):
        nn.Conv3d(2, 2, 3, padding="foo")
    with pytest.raises(ValueError, match='Only "zeros" padding mode is supported for ConvTranspose3d'):
        nn.ConvTranspose3d(4, 4, 2, padding_mode="reflect")
    with pytest.raises(RuntimeError, match="Conv3d: expected 4D or 5D input"):
        nn.Conv3d(3, 4, 1)(tt.randn(3, 4, 4))
    with pytest.raises(RuntimeError, match="expected input with 3 channels"):
        nn.Conv3d(3, 4, 1)(tt.randn(1, 2, 4, 4, 4))


def test_conv3d_module_trains():
    """One SGD step through Conv3d and ConvTranspose3d lowers the loss (gradients reach both weights)."""
    tt.manual_seed(0)
    net = nn.Sequential(nn.Conv3d(2, 4, 3, padding=1), nn.ReLU(), nn.ConvTranspose3d(4, 2, 2, stride=2))
    x = tt.randn(2, 2, 4, 4, 4)
    target = tt.randn(2, 2, 8, 8, 8)
    opt = tt.optim.SGD(net.parameters(), lr=0.1)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = F.mse_loss(net(x), target)
        loss.backward()
        opt.step()
        losses.append(float(loss))
    assert losses[-1] < losses[0]
    assert all(p.grad is not None for p in net.parameters())


@pytest.mark.parametrize("op", ["conv3d", "conv_transpose3d"])
def test_double_backward(op):
    """gradcheck of the input gradient (so its own backward, the double backward, is checked)."""
    x, _ = make((1, 2, 3, 3, 3), "float64", "transposed", seed=8, requires_grad=True)
    w, _ = make((2, 2, 2, 2, 2), "float64", seed=9, requires_grad=True)
    kw = dict(stride=1, padding=1) if op == "conv3d" else dict(stride=2, padding=1, output_padding=1)
    fn = getattr(F, op)

    def input_grad(x, w):
        with tt.enable_grad():     # gradcheck evaluates its perturbed copies under no_grad
            x = x if x.requires_grad else x.detach().requires_grad_(True)
            g, = tt.autograd.grad((fn(x * x, w, None, **kw) ** 2).sum(), x, create_graph=True)
        return g
    assert gradcheck(input_grad, (x, w))
