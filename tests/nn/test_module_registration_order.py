"""Registration order of submodules, parameters and buffers, as PyTorch's.

Each scenario runs on an `nn`-like namespace and returns the names of `_modules`,
`_parameters`, `_buffers` (in order) and `state_dict()`'s keys. The expected results were
taken from torch 2.13; `test_matches_torch` re-runs them against torch when it is installed."""
import pytest

import tinytorch
from tinytorch import nn


def _orders(m):
    return (list(m._modules), list(m._parameters), list(m._buffers), list(m.state_dict()))


def reassign_module(t):
    m = t.nn.Module()
    m.a = t.nn.Linear(2, 2)
    m.b = t.nn.ReLU()
    m.c = t.nn.Linear(2, 2)
    m.a = t.nn.Linear(2, 3)             # keeps its place
    return _orders(m)


def reassign_parameter(t):
    m = t.nn.Linear(2, 3)
    m.weight = t.nn.Parameter(t.zeros(3, 2))   # keeps its place before bias
    return _orders(m)


def reassign_buffer(t):
    m = t.nn.Module()
    m.register_buffer("x", t.zeros(1))
    m.register_buffer("y", t.zeros(1), persistent=False)
    m.register_buffer("z", t.zeros(1))
    m.x = t.ones(2)
    m.y = t.ones(2)                     # stays non-persistent
    m.register_buffer("z", t.ones(3))
    return _orders(m)


def delete_and_readd(t):
    m = t.nn.Module()
    m.a = t.nn.ReLU()
    m.b = t.nn.ReLU()
    m.p = t.nn.Parameter(t.zeros(1))
    m.q = t.nn.Parameter(t.zeros(1))
    del m.a
    del m.p
    m.a = t.nn.Tanh()                   # re-added after deletion: goes last
    m.p = t.nn.Parameter(t.ones(1))
    return _orders(m)


def module_to_none_and_back(t):
    m = t.nn.Module()
    m.a = t.nn.ReLU()
    m.b = t.nn.ReLU()
    m.a = None
    m.a = t.nn.Tanh()
    m.weight = t.nn.Parameter(t.zeros(1))
    m.bias = t.nn.Parameter(t.zeros(1))
    m.weight = None
    m.weight = t.nn.Parameter(t.ones(1))
    return _orders(m) + (m.a.__class__.__name__,)


def change_kind(t):
    m = t.nn.Module()
    m.a = t.nn.ReLU()
    m.b = t.nn.ReLU()
    m.register_buffer("c", t.zeros(1))
    m.register_buffer("d", t.zeros(1))
    m.a = t.nn.Parameter(t.zeros(1))    # a module replaced by a parameter leaves _modules
    m.c = t.nn.Parameter(t.zeros(1))    # so does a buffer
    return _orders(m)


def add_module_again(t):
    m = t.nn.Sequential(t.nn.Linear(2, 2), t.nn.ReLU(), t.nn.Linear(2, 2))
    m.add_module("0", t.nn.Linear(2, 4))
    m.register_module("1", t.nn.Tanh())
    kids = [type(c).__name__ for c in m.children()]
    head = t.nn.Sequential(*list(m.children())[:-1])
    return _orders(m) + (kids, [type(c).__name__ for c in head])


def buffer_class_reassign(t):
    m = t.nn.Module()
    m.register_buffer("a", t.zeros(1))
    m.register_buffer("b", t.zeros(1))
    m.a = t.nn.Buffer(t.ones(1), persistent=False)
    return _orders(m)


SCENARIOS = {
    reassign_module: (["a", "b", "c"], [], [], ["a.weight", "a.bias", "c.weight", "c.bias"]),
    reassign_parameter: ([], ["weight", "bias"], [], ["weight", "bias"]),
    reassign_buffer: ([], [], ["x", "y", "z"], ["x", "z"]),
    delete_and_readd: (["b", "a"], ["q", "p"], [], ["q", "p"]),
    module_to_none_and_back: (["a", "b"], ["weight", "bias"], [], ["weight", "bias"], "Tanh"),
    change_kind: (["b"], ["a", "c"], ["d"], ["a", "c", "d"]),
    add_module_again: (["0", "1", "2"], [], [], ["0.weight", "0.bias", "2.weight", "2.bias"],
                       ["Linear", "Tanh", "Linear"], ["Linear", "Tanh"]),
    buffer_class_reassign: ([], [], ["a", "b"], ["b"]),
}


@pytest.mark.parametrize("scenario", list(SCENARIOS), ids=lambda f: f.__name__)
def test_registration_order(scenario):
    assert scenario(tinytorch) == SCENARIOS[scenario]


@pytest.mark.parametrize("scenario", list(SCENARIOS), ids=lambda f: f.__name__)
def test_matches_torch(scenario):
    torch = pytest.importorskip("torch")
    assert scenario(tinytorch) == scenario(torch)


def test_reassigned_parameter_keeps_optimizer_order():
    m = nn.Linear(2, 3)
    m.weight = nn.Parameter(tinytorch.zeros(3, 2))
    assert [p.shape for p in m.parameters()] == [(3, 2), (3,)]


@pytest.mark.parametrize("register", ["register_parameter", "register_buffer", "add_module"])
def test_register_existing_attribute_raises_key_error(register):
    m = nn.Module()
    m.plain = 1
    with pytest.raises(KeyError, match="attribute 'plain' already exists"):
        getattr(m, register)("plain", None)
    with pytest.raises(KeyError, match="contain"):
        getattr(m, register)("a.b", None)
    with pytest.raises(KeyError, match="empty"):
        getattr(m, register)("", None)


def test_register_name_taken_by_another_store_raises():
    m = nn.Module()
    m.p = nn.Parameter(tinytorch.zeros(1))
    with pytest.raises(KeyError, match="already exists"):
        m.register_buffer("p", tinytorch.zeros(1))
    with pytest.raises(KeyError, match="already exists"):
        m.add_module("p", nn.ReLU())


def test_assigning_wrong_kind_raises_type_error():
    m = nn.Module()
    m.a = nn.ReLU()
    m.p = nn.Parameter(tinytorch.zeros(1))
    with pytest.raises(TypeError, match="as parameter 'p'"):
        m.p = nn.ReLU()
    with pytest.raises(TypeError, match="child module 'a'"):
        m.a = 3
    with pytest.raises(TypeError, match="as buffer"):
        m.register_buffer("b", tinytorch.zeros(1))
        m.b = 3
