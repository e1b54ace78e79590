"""RNNCellBase (the cells' base, PyTorch's constructor and repr), the deprecated nn.Container and
nn.DataParallel on a machine without GPUs (it runs the module)."""
import math
import warnings

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
from conftest import assert_close, make


def test_cells_derive_from_rnn_cell_base():
    for cls, chunks in ((nn.RNNCell, 1), (nn.LSTMCell, 4), (nn.GRUCell, 3)):
        cell = cls(5, 7, dtype=tt.float64)
        assert isinstance(cell, nn.RNNCellBase)
        assert tuple(cell.weight_ih.shape) == (chunks * 7, 5) and tuple(cell.weight_hh.shape) == (chunks * 7, 7)
        assert list(cell.state_dict()) == ["weight_ih", "weight_hh", "bias_ih", "bias_hh"]
        assert max(float(p.abs().max()) for p in cell.parameters()) <= 1 / math.sqrt(7)
    assert repr(nn.RNNCell(4, 8, nonlinearity="relu")) == "RNNCell(4, 8, nonlinearity=relu)"
    assert repr(nn.LSTMCell(4, 8, bias=False)) == "LSTMCell(4, 8, bias=False)"
    assert repr(nn.GRUCell(3, 2)) == "GRUCell(3, 2)"
    base = nn.RNNCellBase(3, 4, False, 2)
    assert tuple(base.weight_ih.shape) == (8, 3) and base.bias_ih is None and base.bias_hh is None


def test_rnn_cell_base_subclass_works_like_pytorch():
    class MinimalCell(nn.RNNCellBase):
        def __init__(self, input_size, hidden_size):
            super().__init__(input_size, hidden_size, bias=True, num_chunks=1)

        def forward(self, x, h):
            return tt.tanh(x @ self.weight_ih.T + self.bias_ih + h @ self.weight_hh.T + self.bias_hh)

    tt.manual_seed(0)
    cell = MinimalCell(3, 2).double()
    x, xr = make((4, 3), "float64", seed=1)
    h, hr = make((4, 2), "float64", seed=2)
    w = {n: p.detach().numpy() for n, p in cell.named_parameters()}
    assert_close(cell(x, h), np.tanh(xr @ w["weight_ih"].T + w["bias_ih"] + hr @ w["weight_hh"].T + w["bias_hh"]),
                 "float64")


def test_container_is_deprecated_but_works():
    with pytest.warns(FutureWarning, match="`nn.Container` is deprecated"):
        c = nn.Container(a=nn.Linear(2, 3), b=nn.ReLU())
    assert list(dict(c.named_children())) == ["a", "b"]
    assert list(c.state_dict()) == ["a.weight", "a.bias"]


def test_data_parallel_without_gpu_runs_the_module():
    if tt.cuda.is_available():
        pytest.skip("CPU behaviour (tests/cuda covers the GPU)")
    tt.manual_seed(0)
    inner = nn.Linear(3, 2)
    dp = nn.DataParallel(inner)
    assert dp.module is inner and dp.device_ids == []
    assert list(dp.state_dict()) == ["module.weight", "module.bias"]
    x = tt.randn(4, 3)
    assert_close(dp(x), inner(x).detach().numpy(), "float32")
    from tinytorch.nn.parallel import DataParallel
    from tinytorch.nn.parallel.data_parallel import DataParallel as DP2
    assert DataParallel is nn.DataParallel is DP2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dp(x).sum().backward()
    assert inner.weight.grad is not None
