"""conv_transpose1d/2d and ConvTranspose1d/2d against a numpy scatter reference: stride, padding,
output_padding, groups, dilation, bias, unbatched input, output_size; gradients by gradcheck and a
double backward against central differences."""
import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
import tinytorch.nn.functional as F
from tinytorch.autograd import gradcheck
from support.numeric import assert_close, make, to_numpy


def conv_transpose2d_ref(x, w, b, stride=(1, 1), padding=(0, 0), output_padding=(0, 0), groups=1,
                         dilation=(1, 1)):
    """Each input element scatters its weighted kernel into the output (float64)."""
    n, cin, h, wd = x.shape
    _, cog, kh, kw = w.shape
    full = np.zeros((n, cog * groups, (h - 1) * stride[0] + dilation[0] * (kh - 1) + 1 + output_padding[0],
                     (wd - 1) * stride[1] + dilation[1] * (kw - 1) + 1 + output_padding[1]))
    cpg = cin // groups
    for ci in range(cin):
        g = ci // cpg
        for i in range(h):
            for j in range(wd):
                for a in range(kh):
                    for c in range(kw):
                        full[:, g * cog:(g + 1) * cog, i * stride[0] + a * dilation[0], j * stride[1] + c * dilation[1]] \
                            += x[:, ci, i, j][:, None] * w[ci, :, a, c][None, :]
    out = full[:, :, padding[0]:full.shape[2] - padding[0], padding[1]:full.shape[3] - padding[1]]
    return out if b is None else out + b.reshape(1, -1, 1, 1)


CASES = [  # (x shape, weight shape, kwargs)
    ((2, 4, 3, 4), (4, 3, 3, 3), dict(stride=(2, 2), padding=(1, 1), output_padding=(1, 1))),
    ((1, 4, 3, 3), (4, 1, 2, 3), dict(stride=(2, 1), padding=(0, 1), groups=2, dilation=(1, 2))),
    ((2, 6, 3, 3), (6, 1, 3, 3), dict(stride=(2, 2), groups=3, dilation=(2, 2), output_padding=(1, 0))),
    ((2, 2, 3, 3), (2, 5, 1, 1), dict()),
]


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_conv_transpose2d_matches_reference(case, dtype, layout):
    xs, ws, kw = CASES[case]
    x, xr = make(xs, dtype, layout, seed=case)
    w, wr = make(ws, dtype, seed=case + 10)
    b, br = make((ws[1] * kw.get("groups", 1),), dtype, seed=case + 20)
    ref = conv_transpose2d_ref(xr, wr, br, **kw)
    assert_close(F.conv_transpose2d(x, w, b, **kw), ref, dtype, tol=(1e-5, 1e-5) if dtype == "float32" else None)
    assert_close(F.conv_transpose2d(x[0], w, b, **kw), ref[0], dtype, tol=(1e-5, 1e-5) if dtype == "float32" else None)


@pytest.mark.parametrize("case", range(len(CASES)))
def test_conv_transpose2d_gradients(case):
    xs, ws, kw = CASES[case]
    x, _ = make(xs, "float64", seed=case, requires_grad=True)
    w, _ = make(ws, "float64", seed=case + 10, requires_grad=True)
    b, _ = make((ws[1] * kw.get("groups", 1),), "float64", seed=case + 20, requires_grad=True)
    assert gradcheck(lambda *t: F.conv_transpose2d(*t, **kw), (x, w, b))


def test_conv_transpose2d_double_backward():
    xs, ws, kw = CASES[0]
    rng = np.random.default_rng(5)
    xv, wv, v = rng.standard_normal(xs), rng.standard_normal(ws), rng.standard_normal(int(np.prod(xs)))

    def grad_x(xa, create_graph=False):
        x, w = tt.tensor(xa, requires_grad=True), tt.tensor(wv, requires_grad=True)
        g, = tt.autograd.grad((F.conv_transpose2d(x * x, w, **kw) ** 2).sum(), x, create_graph=create_graph)
        return x, g
    x, g = grad_x(xv, True)
    hv, = tt.autograd.grad((g * tt.tensor(v.reshape(xs))).sum(), x)
    eps = 1e-6
    fd = (to_numpy(grad_x(xv + eps * v.reshape(xs))[1]) - to_numpy(grad_x(xv - eps * v.reshape(xs))[1])) / (2 * eps)
    np.testing.assert_allclose(to_numpy(hv), fd, rtol=1e-5, atol=1e-7)


def test_conv_transpose_modules():
    m = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, groups=2).double()
    assert tuple(m.weight.shape) == (4, 3, 3, 3) and tuple(m.bias.shape) == (6,)
    x, xr = make((1, 4, 5, 5), "float64")
    ref = conv_transpose2d_ref(xr, to_numpy(m.weight), to_numpy(m.bias), (2, 2), (1, 1), (0, 0), 2)
    assert_close(m(x), ref)
    ref10 = conv_transpose2d_ref(xr, to_numpy(m.weight), to_numpy(m.bias), (2, 2), (1, 1), (1, 1), 2)
    assert_close(m(x, output_size=[10, 10]), ref10)              # output_padding chosen from output_size
    with pytest.raises(ValueError, match="valid sizes range from 9 to 10"):
        m(x, output_size=[12, 12])
    m1 = nn.ConvTranspose1d(2, 3, 4, stride=3, output_padding=2).double()
    y, yr = make((2, 2, 5), "float64", seed=3)
    ref1 = conv_transpose2d_ref(yr[:, :, None, :], to_numpy(m1.weight)[:, :, None, :], to_numpy(m1.bias),
                                (1, 3), (0, 0), (0, 2))
    assert_close(m1(y), ref1[:, :, 0, :])
    assert "output_padding=(2,)" in repr(m1)
    with pytest.raises(ValueError, match="zeros"):
        nn.ConvTranspose2d(2, 2, 3, padding_mode="reflect")
    with pytest.raises(ValueError, match="smaller than either stride"):
        F.conv_transpose2d(x, m.weight, stride=1, output_padding=1)
    with pytest.raises(RuntimeError, match="channels"):
        F.conv_transpose2d(tt.zeros(1, 3, 4, 4, dtype=tt.float64), m.weight)
