"""Pickling and copying: tensors (every dtype, views, requires_grad, subclasses), Parameters,
Modules and Optimizers through pickle and copy.deepcopy; copy.copy of tensors as PyTorch's."""
from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
from support.numeric import FLOAT_DTYPES, make, to_numpy

ALL_DTYPES = FLOAT_DTYPES + ["int64", "int32", "uint8", "bool"]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced", "expanded"])
def test_tensor_pickle_roundtrip_is_exact(dtype, layout):
    t, _ = make((3, 4), "float64", layout)
    t = (t * 10).to(getattr(tt, dtype)) if dtype != "bool" else t > 0
    if layout != "contiguous":
        t = {"transposed": t.t().t(), "sliced": t[:, ::2], "expanded": t[:1].expand(3, 4)}[layout]
    for protocol in (2, pickle.HIGHEST_PROTOCOL):
        back = pickle.loads(pickle.dumps(t, protocol=protocol))
        assert type(back) is tt.Tensor and back.dtype is t.dtype and back.shape == t.shape
        np.testing.assert_array_equal(to_numpy(back), to_numpy(t))
        assert back.is_contiguous() and back.data_ptr() != t.data_ptr()


def test_views_unpickle_as_independent_tensors():
    base = tt.arange(6.0)
    view = base[2:4]
    b2, v2 = pickle.loads(pickle.dumps([base, view]))
    v2.mul_(10)  # no aliasing surprises: the view came back as its own data
    assert b2.tolist() == [0, 1, 2, 3, 4, 5] and v2.tolist() == [20, 30]
    same = pickle.loads(pickle.dumps([base, base]))
    assert same[0] is same[1]  # one object pickled twice stays one object


def test_requires_grad_parameters_and_subclasses_survive():
    x = tt.tensor([1.0, 2.0], requires_grad=True)
    y = pickle.loads(pickle.dumps(x * 2))
    assert y.requires_grad and y.is_leaf and y.tolist() == [2.0, 4.0]
    p = nn.Parameter(tt.ones(2), requires_grad=False)
    p2 = pickle.loads(pickle.dumps(p))
    assert type(p2) is nn.Parameter and not p2.requires_grad

    class Tagged(tt.Tensor):
        pass
    global _Tagged
    _Tagged = Tagged
    Tagged.__qualname__ = "_Tagged"
    s = tt.ones(2).as_subclass(Tagged)
    s.tag = "hello"
    s2 = pickle.loads(pickle.dumps(s))
    assert type(s2) is Tagged and s2.tag == "hello"


_Tagged = None


def test_module_and_optimizer_pickle_and_deepcopy_train_identically():
    tt.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    opt = tt.optim.Adam(model.parameters(), lr=1e-2)
    x, y = tt.randn(16, 4), tt.randn(16, 2)

    def step(m, o):
        o.zero_grad()
        loss = ((m(x) - y) ** 2).mean()
        loss.backward()
        o.step()
        return loss.item()

    step(model, opt)
    clones = [pickle.loads(pickle.dumps((model, opt))), copy.deepcopy((model, opt))]
    for m2, o2 in clones:
        assert o2.param_groups[0]["params"][0] is next(iter(m2.parameters()))  # optimizer points at its model
        assert all(type(p) is nn.Parameter and p.requires_grad for p in m2.parameters())
    losses = [step(model, opt) for _ in range(3)]
    for m2, o2 in clones:
        assert [step(m2, o2) for _ in range(3)] == losses  # same state: bit-identical training
        assert m2[0].weight.data_ptr() != model[0].weight.data_ptr()


def test_copy_copy_shares_storage_as_pytorch():
    x = tt.arange(4.0)[1:]
    c = copy.copy(x)
    assert c is not x and c.data_ptr() == x.data_ptr() and c.stride() == x.stride()
    leaf = tt.ones(3, requires_grad=True)
    c2 = copy.copy(leaf * 2)
    assert c2.requires_grad and c2.is_leaf and c2.grad_fn is None
    p = nn.Parameter(tt.ones(2))
    assert type(copy.copy(p)) is nn.Parameter
