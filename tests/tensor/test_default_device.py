"""The factory functions' default device, as PyTorch's: ``with tinytorch.device(...)`` blocks (the
innermost wins, restored on exit, exceptions included) over ``set_default_device``, over cpu. An
explicit ``device=`` always wins; ``*_like`` and ``from_numpy`` keep their input's device."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn

FACTORIES = {
    "empty": lambda: tt.empty(2, 3), "zeros": lambda: tt.zeros(2), "ones": lambda: tt.ones(2),
    "full": lambda: tt.full((2,), 1.5), "arange": lambda: tt.arange(4), "linspace": lambda: tt.linspace(0, 1, 5),
    "logspace": lambda: tt.logspace(0, 1, 3), "eye": lambda: tt.eye(2), "tensor": lambda: tt.tensor([1.0, 2.0]),
    "as_tensor": lambda: tt.as_tensor(np.ones(3, np.float32)), "asarray": lambda: tt.asarray([1, 2]),
    "scalar_tensor": lambda: tt.scalar_tensor(2.0), "rand": lambda: tt.rand(2), "randn": lambda: tt.randn(2),
    "randint": lambda: tt.randint(0, 5, (3,)), "randperm": lambda: tt.randperm(4),
    "empty_strided": lambda: tt.empty_strided((2, 2), (1, 2)),
}


@pytest.fixture(autouse=True)
def _restore_default():
    yield
    tt.set_default_device(None)


def test_device_is_a_context_manager():
    d = tt.device("cpu")
    with d as entered:
        assert entered is d
        assert tt.get_default_device() == tt.device("cpu")
        assert all(f().device == tt.device("cpu") for f in FACTORIES.values())
    with pytest.raises(ZeroDivisionError):
        with tt.device("cpu"):
            1 / 0
    assert tt.get_default_device() == tt.device("cpu")


def test_set_default_device_accepts_devices_and_rejects_unknown_ones():
    tt.set_default_device(tt.device("cpu"))
    assert tt.get_default_device() == tt.device("cpu")
    with pytest.raises(RuntimeError, match="device type"):
        tt.set_default_device("tpu")
    assert tt.get_default_device() == tt.device("cpu")


@pytest.mark.skipif(tt.cuda.is_available(), reason="the case of a build or machine without CUDA")
def test_a_cuda_default_without_cuda_fails_at_allocation_naming_the_device():
    tt.set_default_device("cuda")
    assert tt.get_default_device().type == "cuda"
    with pytest.raises(RuntimeError, match="cuda:0"):
        tt.zeros(2)
    assert tt.zeros(2, device="cpu").device.type == "cpu"     # an explicit device still wins
    tt.set_default_device(None)
    assert tt.zeros(2).device.type == "cpu"


@pytest.mark.cuda
@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_factories_follow_the_innermost_block(name):
    with tt.device("cuda"):
        assert FACTORIES[name]().device == tt.device("cuda:0"), name
        with tt.device("cpu"):
            assert FACTORIES[name]().device == tt.device("cpu"), name
        assert FACTORIES[name]().device.type == "cuda", name
    assert FACTORIES[name]().device == tt.device("cpu"), name


@pytest.mark.cuda
def test_modules_built_under_a_device_block_and_the_global_default():
    with tt.device("cuda"):
        lin = nn.Linear(3, 4)
        assert lin.weight.device.type == "cuda" and lin.bias.device.type == "cuda"
        x = tt.zeros(2, 3, device="cpu")
        assert x.device.type == "cpu"                                     # explicit wins
        assert tt.zeros_like(x).device.type == "cpu"                      # *_like keep the input's
        assert tt.from_numpy(np.ones(2, np.float32)).device.type == "cpu"
        y = lin(tt.randn(2, 3))
        assert y.device.type == "cuda"
    tt.set_default_device("cuda")
    assert tt.randn(2).device.type == "cuda"
    with tt.device("cpu"):                   # a block takes precedence over the global default
        assert tt.randn(2).device.type == "cpu"
    assert tt.get_default_device().type == "cuda"
