"""In-place shape methods (schema rows with inplace="view": squeeze_, unsqueeze_, transpose_,
swapaxes_, swapdims_, t_, as_strided_): the tensor becomes the view (values against numpy, every
layout, identity and autograd history kept), gradients equal the out-of-place view's, and
PyTorch's errors."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt
from support.numeric import FLOAT_DTYPES, assert_close, make, to_numpy


LAYOUTS = ["contiguous", "transposed", "sliced"]


# (name, input shape, in-place call, the out-of-place view it must equal, numpy reference)
SHAPE_INPLACE = [
    ("squeeze_", (3, 1, 4), lambda x: x.squeeze_(), lambda x: x.squeeze(), lambda a: a.squeeze()),
    ("squeeze_dim", (3, 1, 4), lambda x: x.squeeze_(1), lambda x: x.squeeze(1), lambda a: a.squeeze(1)),
    ("squeeze_noop", (3, 1, 4), lambda x: x.squeeze_(0), lambda x: x.squeeze(0), lambda a: a),
    ("unsqueeze_", (3, 1, 4), lambda x: x.unsqueeze_(-1), lambda x: x.unsqueeze(-1), lambda a: a[..., None]),
    ("transpose_", (3, 1, 4), lambda x: x.transpose_(0, 2), lambda x: x.transpose(0, 2), lambda a: a.swapaxes(0, 2)),
    ("swapaxes_", (3, 1, 4), lambda x: x.swapaxes_(-1, 0), lambda x: x.swapaxes(-1, 0), lambda a: a.swapaxes(-1, 0)),
    ("swapdims_", (3, 1, 4), lambda x: x.swapdims_(1, 2), lambda x: x.swapdims(1, 2), lambda a: a.swapaxes(1, 2)),
    ("t_", (3, 4), lambda x: x.t_(), lambda x: x.t(), lambda a: a.T),
    ("t_1d", (4,), lambda x: x.t_(), lambda x: x.t(), lambda a: a),
    ("as_strided_", (3, 4), lambda x: x.as_strided_((2, 2), (1, 2), 1), lambda x: x.as_strided((2, 2), (1, 2), 1),
     None),
]
_IDS = [r[0] for r in SHAPE_INPLACE]


@pytest.mark.parametrize("name,shape,inplace,view,ref", SHAPE_INPLACE, ids=_IDS)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_shape_inplace_becomes_the_view(name, shape, inplace, view, ref, layout):
    for dtype in FLOAT_DTYPES:
        x, a = make(shape, dtype, layout, seed=1)
        expected = view(x)
        assert inplace(x) is x
        assert tuple(x.shape) == tuple(expected.shape) and x.stride() == expected.stride(), name
        assert x.storage_offset() == expected.storage_offset()
        np.testing.assert_array_equal(to_numpy(x), to_numpy(expected), err_msg=f"{name} {dtype} {layout}")
        if ref is not None:
            np.testing.assert_array_equal(to_numpy(x), ref(a))
        x.fill_(7.0)           # still the same storage: the out-of-place view sees the write
        assert (to_numpy(expected) == 7.0).all()


@pytest.mark.parametrize("name,shape,inplace,view,ref", SHAPE_INPLACE, ids=_IDS)
def test_shape_inplace_gradient_matches_out_of_place(name, shape, inplace, view, ref):
    for dtype in FLOAT_DTYPES:
        x, _ = make(shape, dtype, "sliced", seed=2, requires_grad=True)
        y = x * 2.0
        inplace(y)
        assert y.grad_fn is not None
        z = view(x * 2.0)
        w = make(tuple(z.shape), dtype, seed=3)[0]
        (y * w).sum().backward()
        g_inplace = to_numpy(x.grad)
        x.grad = None
        (z * w).sum().backward()
        np.testing.assert_array_equal(g_inplace, to_numpy(x.grad), err_msg=f"{name} {dtype}")
        assert np.abs(g_inplace).sum() > 0


def test_toplevel_as_strided_():
    x = tt.arange(6.0)
    assert tt.as_strided_(x, (2, 2), (1, 2), 1) is x
    np.testing.assert_array_equal(x.numpy(), [[1.0, 3.0], [2.0, 4.0]])


def test_shape_inplace_keeps_identity_and_history():
    b = tt.randn(2, 3, requires_grad=True)
    z = b * 1.0
    assert z.t_() is z and z._base is None    # a tensor that was no view stays none
    z.cumsum_(0)                              # (3, 2) running sums down the rows, through the new history
    z.sum().backward()
    assert_close(b.grad, np.array([[3.0, 2.0, 1.0]] * 2), "float32")


@pytest.mark.parametrize("call", [lambda x: x.squeeze_(), lambda x: x.unsqueeze_(0), lambda x: x.t_(),
                                  lambda x: x.transpose_(0, 1), lambda x: x.swapaxes_(0, 1),
                                  lambda x: x.swapdims_(0, 1), lambda x: x.as_strided_((2,), (1,))])
def test_shape_inplace_on_a_leaf_that_requires_grad(call):
    x = tt.randn(2, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        call(x)
    with tt.no_grad():
        assert call(x) is x   # allowed without grad mode, as PyTorch


def test_shape_inplace_bad_input():
    with pytest.raises(RuntimeError, match=r"t_\(\) expects a tensor with <= 2 dimensions, but self is 3D"):
        tt.zeros(2, 3, 4).t_()
    x = tt.zeros(2, 3)
    with pytest.raises(IndexError, match="out of range"):
        x.unsqueeze_(5)
    with pytest.raises(IndexError, match="out of range"):
        x.transpose_(0, 2)
    assert tuple(x.shape) == (2, 3)   # a refused call leaves the tensor as it was
