"""Tensor subclasses keep their type through ops (the __torch_function__ protocol, minimal version),
may override __torch_function__, and as_subclass shares data and autograd history."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
from support.numeric import GRAD_TOL, assert_close, make
from tinytorch._ops import elementwise as _E


class Tagged(tt.Tensor):
    pass


class MoreTagged(Tagged):
    pass


class Other(tt.Tensor):
    pass


def test_ops_on_subclass_instances_return_the_subclass():
    t, ref = make((3, 4), "float32", "transposed")
    s = t.as_subclass(Tagged)
    results = {
        "operator": s * 2 + 1, "reflected": 1 - s, "method": s.exp(), "reduction": s.sum(dim=0),
        "index": s[1:, 0], "view": s.reshape(12), "cast": s.double(), "matmul": s @ s.t(),
        "function": tt.add(s, 1), "cat": tt.cat([s, t]), "where": tt.where(s > 0, s, t),
    }
    for name, r in results.items():
        assert type(r) is Tagged, name
    assert all(type(c) is Tagged for c in s.split(2, dim=0))  # tuples of tensors
    assert type(s.max(dim=1)[0]) is Tagged
    assert_close(results["operator"], ref * 2 + 1, dtype="float32")
    assert_close(results["matmul"], ref @ ref.T, dtype="float32")
    assert isinstance(s.tolist(), list) and type(s.shape) is tt.Size  # non-ops unchanged


def test_plain_tensor_and_parameter_paths_are_untouched():
    assert tt.Tensor.__add__ is _E.add  # no dispatch wrapper on Tensor itself: no cost
    p = nn.Parameter(tt.ones(2))
    assert type(p * 2) is tt.Tensor and type(p.exp()) is tt.Tensor  # as PyTorch's Parameter
    assert type(tt.ones(2) * tt.ones(2).as_subclass(Tagged)) is Tagged  # the subclass's reflected op runs first


def test_gradients_through_subclass_ops_and_as_subclass():
    x, ref = make((2, 3), "float64", "sliced", requires_grad=True)
    s = x.as_subclass(Tagged)  # a leaf seen through a view: gradients reach x
    assert s.data_ptr() == x.data_ptr() and s.requires_grad and not s.is_leaf
    out = (s.sin() * s).sum()
    assert type(out) is Tagged
    out.backward()
    assert_close(x.grad, np.cos(ref) * ref + np.sin(ref), tol=GRAD_TOL["float64"])
    y = (x * 3).as_subclass(Tagged)  # a non-leaf keeps its history
    assert y.grad_fn is not None
    plain = tt.ones(3).as_subclass(Tagged)
    assert not plain.requires_grad and plain.is_leaf
    with pytest.raises(TypeError, match="subclass of Tensor"):
        tt.ones(1).as_subclass(int)


def test_overriding_torch_function_intercepts_ops():
    calls = []

    class Logged(tt.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            calls.append(func.__name__)
            if func.__name__ == "neg":
                return "intercepted"
            return super().__torch_function__(func, types, args, kwargs)

    s = tt.arange(3.0).as_subclass(Logged)
    assert -s == "intercepted"
    r = s.mul(2)
    assert calls == ["neg", "mul"]  # nested ops inside an op don't dispatch again
    assert type(r) is Logged and r.tolist() == [0.0, 2.0, 4.0]
    calls.clear()
    with tt._tensor.torch_function.DisableTorchFunctionSubclass():
        assert (s + 1).tolist() == [1.0, 2.0, 3.0] and calls == []  # no dispatch inside


def test_dispatch_order_and_unrelated_subclasses():
    a = tt.ones(2).as_subclass(Tagged)
    b = tt.ones(2).as_subclass(MoreTagged)
    assert type(a + b) is MoreTagged and type(b + a) is MoreTagged  # the subclass first
    o = tt.ones(2).as_subclass(Other)
    with pytest.raises(TypeError, match="no implementation found"):
        a + o  # neither class is a subclass of the other: both return NotImplemented
