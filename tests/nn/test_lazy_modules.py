"""Lazy modules (LazyLinear, LazyConv*, LazyConvTranspose*, LazyBatchNorm*, LazyInstanceNorm*) and
the UninitializedParameter / UninitializedBuffer placeholders, as PyTorch's: materialized by the
first forward with the module's dtype and device, then turned into the eager class; state_dict
loading into an uninitialized module; an optimizer built before the first forward; errors."""
import copy
import math

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
from tinytorch.nn.parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from support.numeric import assert_close, make


def test_lazy_linear_materializes_and_becomes_linear():
    tt.manual_seed(0)
    m = nn.LazyLinear(3, dtype=tt.float64)
    assert repr(m) == "LazyLinear(in_features=0, out_features=3, bias=True)"
    assert is_lazy(m.weight) and is_lazy(m.bias) and m.has_uninitialized_params()
    x, xr = make((2, 5, 4), "float64", "transposed", seed=1)
    y = m(x)
    assert type(m) is nn.Linear and not is_lazy(m.weight) and type(m.weight) is nn.Parameter
    assert repr(m) == "Linear(in_features=4, out_features=3, bias=True)"
    assert tuple(m.weight.shape) == (3, 4) and m.weight.dtype == tt.float64
    bound = 1 / math.sqrt(4)
    assert float(m.weight.abs().max()) <= bound and float(m.bias.abs().max()) <= bound
    assert_close(y, xr @ m.weight.detach().numpy().T + m.bias.detach().numpy(), "float64")
    assert list(m._forward_pre_hooks) == []        # the hook is gone


def test_lazy_parameters_keep_the_module_dtype_not_the_input_dtype():
    """As PyTorch: the placeholders carry the constructor's (or .to()'s) dtype."""
    m = nn.LazyLinear(3)
    with pytest.raises(RuntimeError):
        m(tt.randn(2, 4, dtype=tt.float64))
    m = nn.LazyLinear(3).double()
    m(tt.randn(2, 4, dtype=tt.float64))
    assert m.weight.dtype == tt.float64


def test_optimizer_built_before_materialization():
    tt.manual_seed(0)
    m = nn.LazyLinear(2)
    opt = tt.optim.SGD(m.parameters(), lr=0.5)
    x = tt.randn(3, 4)
    m(x).sum().backward()
    w0, g = m.weight.detach().numpy().copy(), m.weight.grad.numpy().copy()
    opt.step()
    assert opt.param_groups[0]["params"][0] is m.weight
    np.testing.assert_allclose(m.weight.detach().numpy(), w0 - 0.5 * g, rtol=1e-6)
    np.testing.assert_allclose(g, np.tile(x.numpy().sum(0), (2, 1)), rtol=1e-5)


def test_state_dict_of_a_lazy_module_and_loading():
    lazy = nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.LazyLinear(2))
    sd = lazy.state_dict()
    assert list(sd) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert isinstance(sd["2.weight"], UninitializedParameter) and repr(sd["2.weight"]) == "<UninitializedParameter>"
    eager = nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 2))
    lazy.load_state_dict(eager.state_dict())           # materializes from the checkpoint's shapes
    assert tuple(lazy[2].weight.shape) == (2, 5) and not lazy[2].has_uninitialized_params()
    x = tt.randn(3, 4)
    assert_close(lazy(x), eager(x).detach().numpy(), "float32")
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter"):
        nn.Linear(4, 3).load_state_dict(nn.LazyLinear(3).state_dict())
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "bias"'):
        nn.LazyLinear(3).load_state_dict({"weight": tt.randn(3, 5)})


def test_placeholders_refuse_ops():
    p = UninitializedParameter(dtype=tt.float64)
    assert repr(p) == "<UninitializedParameter>" and p.requires_grad and p.dtype == tt.float64
    with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter in"):
        p + 1
    with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter in"):
        p.numel()
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized parameter or buffer"):
        p.shape
    q = p.float()                                      # casting a placeholder gives a placeholder
    assert isinstance(q, UninitializedParameter) and q.dtype == tt.float32
    p.materialize((2, 3))
    assert type(p) is nn.Parameter and tuple(p.shape) == (2, 3) and p.dtype == tt.float64
    b = UninitializedBuffer()
    assert repr(b) == "<UninitializedBuffer>" and not b.requires_grad
    b.materialize(4)
    assert type(b) is tt.Tensor and tuple(b.shape) == (4,)
    c = copy.deepcopy(nn.LazyConv2d(3, 2))
    assert is_lazy(c.weight) and c(tt.randn(1, 2, 4, 4)).shape == (1, 3, 3, 3)


CONVS = [  # (lazy class, eager class, kwargs, input shape, expected weight shape)
    (nn.LazyConv1d, nn.Conv1d, dict(out_channels=4, kernel_size=3, groups=2), (2, 6, 9), (4, 3, 3)),
    (nn.LazyConv2d, nn.Conv2d, dict(out_channels=4, kernel_size=(2, 3), padding=1), (5, 7, 6), (4, 5, 2, 3)),
    (nn.LazyConv3d, nn.Conv3d, dict(out_channels=2, kernel_size=2, bias=False), (1, 3, 4, 4, 4), (2, 3, 2, 2, 2)),
    (nn.LazyConvTranspose1d, nn.ConvTranspose1d, dict(out_channels=4, kernel_size=3, stride=2), (2, 6, 5),
     (6, 4, 3)),
    (nn.LazyConvTranspose2d, nn.ConvTranspose2d, dict(out_channels=4, kernel_size=3, groups=2), (4, 6, 6),
     (4, 2, 3, 3)),
    (nn.LazyConvTranspose3d, nn.ConvTranspose3d, dict(out_channels=2, kernel_size=2, stride=2, output_padding=1),
     (1, 3, 2, 2, 2), (3, 2, 2, 2, 2)),
]


@pytest.mark.parametrize("case", range(len(CONVS)))
def test_lazy_convs(case):
    lazy_cls, eager_cls, kw, xs, wshape = CONVS[case]
    tt.manual_seed(case)
    m = lazy_cls(**kw, dtype=tt.float64)
    assert repr(m).startswith(f"{lazy_cls.__name__}(0, {kw['out_channels']}, kernel_size=")
    x, _ = make(xs, "float64", "transposed", seed=case)
    y = m(x)
    assert type(m) is eager_cls and tuple(m.weight.shape) == wshape
    assert repr(m).startswith(f"{eager_cls.__name__}({m.in_channels}, {kw['out_channels']}, kernel_size=")
    fan_in = wshape[1] * int(np.prod(wshape[2:]))
    assert 0 < float(m.weight.abs().max()) <= 1 / math.sqrt(fan_in)
    eager = eager_cls(m.in_channels, **kw, dtype=tt.float64)
    eager.load_state_dict(m.state_dict())
    assert_close(y, eager(x).detach().numpy(), "float64")


def test_lazy_conv_errors():
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.LazyConv2d(4, 3, groups=2)(tt.randn(1, 3, 5, 5))
    with pytest.raises(RuntimeError, match="Expected 3D \\(unbatched\\) or 4D \\(batched\\) input to LazyConv2d"):
        nn.LazyConv2d(4, 3)(tt.randn(3, 5))


@pytest.mark.parametrize("cls, eager, xs", [(nn.LazyBatchNorm1d, nn.BatchNorm1d, (6, 3)),
                                            (nn.LazyBatchNorm2d, nn.BatchNorm2d, (4, 3, 2, 5)),
                                            (nn.LazyBatchNorm3d, nn.BatchNorm3d, (2, 3, 2, 2, 3))])
def test_lazy_batch_norm(cls, eager, xs):
    m = cls(momentum=0.2, dtype=tt.float64)
    assert repr(m) == (f"{cls.__name__}(0, eps=1e-05, momentum=0.2, affine=True, bias=True, "
                       f"track_running_stats=True)")
    assert list(m.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    x, xr = make(xs, "float64", "transposed", seed=3)
    y = m(x)
    assert type(m) is eager and m.num_features == 3 and int(m.num_batches_tracked) == 1
    axes = tuple(i for i in range(len(xs)) if i != 1)
    mean, var = xr.mean(axes), xr.var(axes)
    shape = [1, 3] + [1] * (len(xs) - 2)
    assert_close(y, (xr - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + 1e-5), "float64")
    n = xr.size / 3
    assert_close(m.running_mean, 0.2 * mean, "float64")
    assert_close(m.running_var, 0.8 + 0.2 * var * n / (n - 1), "float64")


@pytest.mark.parametrize("cls, eager, xs", [(nn.LazyInstanceNorm1d, nn.InstanceNorm1d, (3, 5)),
                                            (nn.LazyInstanceNorm2d, nn.InstanceNorm2d, (2, 3, 4, 4)),
                                            (nn.LazyInstanceNorm3d, nn.InstanceNorm3d, (3, 2, 3, 2))])
def test_lazy_instance_norm(cls, eager, xs):
    m = cls(dtype=tt.float64)                           # PyTorch's lazy defaults: affine, running stats
    assert m.affine and m.track_running_stats
    x, xr = make(xs, "float64", seed=4)
    y = m(x)
    assert type(m) is eager and m.num_features == 3 and tuple(m.weight.shape) == (3,)
    batched = len(xs) == m._spatial + 2
    spatial = tuple(range(2 if batched else 1, len(xs)))
    mean, var = xr.mean(spatial, keepdims=True), xr.var(spatial, keepdims=True)
    assert_close(y, (xr - mean) / np.sqrt(var + 1e-5), "float64")
    plain = cls(affine=False, track_running_stats=False)
    assert list(plain.state_dict()) == []
    plain(tt.randn(*xs))
    assert type(plain) is eager


def test_lazy_module_paths():
    from tinytorch.nn.modules.batchnorm import LazyBatchNorm2d
    from tinytorch.nn.modules.conv import LazyConv3d, LazyConvTranspose1d
    from tinytorch.nn.modules.instancenorm import LazyInstanceNorm3d
    from tinytorch.nn.modules.lazy import LazyModuleMixin
    from tinytorch.nn.modules.linear import LazyLinear
    assert LazyConv3d is nn.LazyConv3d and LazyConvTranspose1d is nn.LazyConvTranspose1d
    assert LazyLinear is nn.LazyLinear and LazyBatchNorm2d is nn.LazyBatchNorm2d
    assert LazyInstanceNorm3d is nn.LazyInstanceNorm3d and issubclass(nn.LazyLinear, LazyModuleMixin)
    with pytest.raises(RuntimeError, match="can't be used with `DataParallel`"):
        nn.LazyLinear(2)._replicate_for_data_parallel()
