"""In-place ops through views (PyTorch's CopySlices): the written values reach the base, and
gradients reach what was written, the base's other elements and every other view of it. Each case
is checked by gradcheck (finite differences, float64) and its forward values against numpy."""
import numpy as np
import pytest

import tinytorch as tt
from tinytorch.autograd import gradcheck
from support.numeric import to_numpy


def c_iadd_column(lib, x, z):
    y = x * 2
    y[:, 0] += z[:, 0]                   # __getitem__, __iadd__ on the view, __setitem__
    return y


def c_transposed_row(lib, x, z):
    y = x * 1
    y.t()[1].mul_(z[0, 0])
    return y * y


def c_stale_overlapping_view(lib, x, z):
    y = x * 1
    row, col = y[0], y[:, 1]             # col was taken before the write through row: it sees it
    row.mul_(z[0])
    return col * 2 + y.sum()


def c_zero_block(lib, x, z):
    y = x * z
    y[1:, 1:].zero_()
    return y


def c_copy_row(lib, x, z):
    y = x + 0
    y[0].copy_(z[1] * z[1])
    return y


def c_buffer_without_grad(lib, x, z):
    buf = lib.zeros(3, 4, dtype=lib.float64)
    top, bottom = buf[:2], buf[1:]       # overlapping views of a tensor that needs no grad
    top += x[:2] * z[:2]
    return bottom * 3


def c_view_of_view(lib, x, z):
    y = x * 1
    v = y.view(12)[2:8].view(2, 3)
    v.add_(z[:2, :3])
    v.mul_(v * 1)
    return y


def c_non_contiguous_base(lib, x, z):
    y = (x * 1).t().contiguous().t()
    y[:, 2].sub_(z[:, 0].sin())
    return y


def c_fill_and_div(lib, x, z):
    y = x * 1
    r = y[0]
    r[1:3].div_(z[0, 1:3])
    y[2, 0].fill_(5.0)
    return y


CASES = {f.__name__[2:]: f for f in (c_iadd_column, c_transposed_row, c_stale_overlapping_view, c_zero_block,
                                     c_copy_row, c_buffer_without_grad, c_view_of_view, c_non_contiguous_base,
                                     c_fill_and_div)}


def _np(y, op):
    op(y)
    return y


def _np_buffer(x, z):
    buf = np.zeros((3, 4))
    buf[:2] += x[:2] * z[:2]
    return buf[1:] * 3


def _np_stale(x, z):
    y = x * 1
    col = y[:, 1]                        # a numpy view: it sees the write too
    y[0] *= z[0]
    return col * 2 + y.sum()


def _np_view_of_view(x, z):
    y = x * 1
    v = y.reshape(12)[2:8].reshape(2, 3)
    v += z[:2, :3]
    v *= v * 1
    return y


NUMPY = {  # the same cases with numpy's in-place semantics
    "iadd_column": lambda x, z: _np(x * 2, lambda y: y[:, 0].__iadd__(z[:, 0])),
    "transposed_row": lambda x, z: _np(x * 1, lambda y: y.T[1].__imul__(z[0, 0])) ** 2,
    "stale_overlapping_view": _np_stale,
    "zero_block": lambda x, z: _np(x * z, lambda y: y[1:, 1:].fill(0)),
    "copy_row": lambda x, z: _np(x + 0, lambda y: y[0].__setitem__(slice(None), z[1] * z[1])),
    "buffer_without_grad": _np_buffer,
    "view_of_view": _np_view_of_view,
    "non_contiguous_base": lambda x, z: _np(np.asfortranarray(x * 1), lambda y: y[:, 2].__isub__(np.sin(z[:, 0]))),
    "fill_and_div": lambda x, z: _np(_np(x * 1, lambda y: y[0][1:3].__itruediv__(z[0, 1:3])),
                                     lambda y: y.__setitem__((2, 0), 5.0)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_inplace_through_views(name):
    rng = np.random.default_rng(len(name))
    xv, zv = rng.uniform(0.5, 1.5, (3, 4)), rng.uniform(0.5, 1.5, (3, 4))
    x, z = tt.tensor(xv, requires_grad=True), tt.tensor(zv, requires_grad=True)
    np.testing.assert_allclose(to_numpy(CASES[name](tt, x, z)), NUMPY[name](xv, zv), rtol=1e-12)
    assert gradcheck(lambda a, b: CASES[name](tt, a, b), (x, z))


def test_inplace_on_a_view_of_a_leaf_that_requires_grad_raises():
    w = tt.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        w[0:1].add_(1.0)
    with tt.no_grad():
        w[0:1].add_(1.0)                 # fine without grad mode, as PyTorch
    np.testing.assert_array_equal(to_numpy(w), [2.0, 2.0])


def test_inplace_on_a_view_of_an_output_saved_for_backward_raises():
    x = tt.tensor([0.5, 1.0], dtype=tt.float64, requires_grad=True)
    y = x.exp()                          # exp saves its output
    y[0:1].add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_base_and_views_report_the_new_history():
    x = tt.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=tt.float64, requires_grad=True)
    y = x * 1
    v = y[1]
    v.mul_(2.0)
    assert y.grad_fn.name() == "CopySlices" and v.requires_grad and v._base is y
    buf = tt.zeros(2)
    buf[0:1].add_(x[0, :1])
    assert buf.requires_grad and buf.grad_fn.name() == "CopySlices"
