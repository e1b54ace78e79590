"""RNNCellBase (the cells' base, PyTorch's constructor and repr), the deprecated nn.Container and
nn.DataParallel on a machine without GPUs (it runs the module)."""
import math
import warnings

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
from support.numeric import assert_close, make


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
        pytest.skip("CPU behaviour (test_cuda_data_parallel.py covers the GPU)")
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


def cross_map_lrn_ref(x, size, alpha, beta, k):
    """PyTorch's running-sum kernel, written out: scale_0 sums the first pre_pad squares, each next
    channel adds the square entering the window and removes (from the second one on) the leaving one."""
    sq = x * x
    c = x.shape[1]
    pre = int((size - 1) / 2 + 1)
    scale = np.zeros_like(x)
    scale[:, 0] = sq[:, :min(pre, c)].sum(1)
    for ch in range(1, c):
        scale[:, ch] = scale[:, ch - 1]
        if ch < c - pre + 1:
            scale[:, ch] += sq[:, ch + pre - 1]
        if ch > pre:
            scale[:, ch] -= sq[:, ch - pre]
    return x * (scale * alpha / size + k) ** -beta


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 9])
def test_cross_map_lrn2d(size):
    x, xr = make((2, 7, 4, 5), "float64", "transposed", seed=size)
    m = nn.CrossMapLRN2d(size, 0.1, 0.75, 2.0)
    assert_close(m(x), cross_map_lrn_ref(xr, size, 0.1, 0.75, 2.0), "float64")
    g, _ = make((1, 5, 2, 3), "float64", seed=1, requires_grad=True)
    from tinytorch.autograd import gradcheck
    assert gradcheck(lambda t: m(t), (g,))
    assert repr(nn.CrossMapLRN2d(3)) == "CrossMapLRN2d(3, alpha=0.0001, beta=0.75, k=1)"
    with pytest.raises(ValueError, match="CrossMapLRN2d: Expected input to be 4D, got 3D instead."):
        m(tt.randn(2, 3, 4))


def test_functional_override_helpers():
    F = nn.functional

    class Logged(tt.Tensor):
        calls = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            cls.calls.append(getattr(func, "__name__", func))
            return super().__torch_function__(func, types, args, kwargs)

    plain = tt.randn(3)
    sub = tt.randn(3).as_subclass(Logged)
    assert not F.has_torch_function((plain, nn.Parameter(tt.randn(2))))
    assert F.has_torch_function((plain, sub)) and F.has_torch_function_unary(sub)
    assert F.has_torch_function_variadic(plain, sub) and not F.has_torch_function_variadic(plain, 1)

    def my_relu(t):
        if F.has_torch_function_unary(t):
            return F.handle_torch_function(my_relu, (t,), t)
        return t.clamp(min=0)

    out = my_relu(sub)
    assert type(out) is Logged and "my_relu" in Logged.calls
    np.testing.assert_array_equal(out.numpy(), np.maximum(sub.numpy(), 0))

    def yes(x, flag=False):
        """doc"""
        return "yes"

    def no(x, flag=False):
        return "no"

    pick = F.boolean_dispatch("flag", 1, False, yes, no, "mymod", "pick")
    assert (pick(0), pick(0, True), pick(0, flag=True)) == ("no", "yes", "yes")
    assert pick.__name__ == "pick" and pick.__module__ == "mymod" and pick.__doc__ == "doc"
    F.assert_int_or_pair((1, 2), "kernel_size", "{} must be int or pair")
    with pytest.raises(AssertionError, match="kernel_size must be int or pair"):
        F.assert_int_or_pair((1, 2, 3), "kernel_size", "{} must be int or pair")


def test_pytorch_module_paths_of_the_new_layers():
    import importlib
    paths = [("conv", "Conv3d"), ("conv", "ConvTranspose3d"), ("conv", "LazyConv2d"), ("sparse", "EmbeddingBag"),
             ("linear", "LazyLinear"), ("batchnorm", "LazyBatchNorm1d"), ("batchnorm", "SyncBatchNorm"),
             ("instancenorm", "LazyInstanceNorm2d"), ("pooling", "MaxUnpool3d"), ("pooling", "LPPool3d"),
             ("pooling", "FractionalMaxPool3d"), ("adaptive", "AdaptiveLogSoftmaxWithLoss"), ("rnn", "RNNCellBase"),
             ("container", "Container"), ("normalization", "CrossMapLRN2d"), ("loss", "LinearCrossEntropyLoss"),
             ("linear_cross_entropy_options", "LinearCrossEntropyOptions")]
    for mod, name in paths:
        assert getattr(importlib.import_module(f"tinytorch.nn.modules.{mod}"), name) is getattr(nn, name), name
    from tinytorch.nn.parallel.data_parallel import DataParallel
    assert DataParallel is nn.DataParallel
