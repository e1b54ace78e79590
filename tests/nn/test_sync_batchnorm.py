"""SyncBatchNorm without a process group (BatchNorm over (N, C, *) against numpy), eval mode,
convert_sync_batchnorm, errors. The all-reduced statistics across processes are tested in
tests/distributed/test_distributed_sync_batchnorm.py."""
import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
from support.numeric import FLOAT_DTYPES, GRAD_TOL, assert_close, make


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape", [(5, 3), (4, 3, 6), (2, 3, 4, 5), (2, 3, 2, 3, 2)])
def test_sync_batchnorm_without_process_group_is_batchnorm(shape, dtype):
    m = nn.SyncBatchNorm(3, momentum=0.25, dtype=getattr(tt, dtype))
    with tt.no_grad():
        m.weight.copy_(tt.tensor([1.5, -0.5, 2.0], dtype=tt.float64))
        m.bias.copy_(tt.tensor([0.1, 0.2, -0.3], dtype=tt.float64))
    x, xr = make(shape, dtype, "transposed", seed=len(shape))
    y = m(x)
    axes = tuple(i for i in range(len(shape)) if i != 1)
    bshape = [1, 3] + [1] * (len(shape) - 2)
    mean, var = xr.mean(axes), xr.var(axes)
    ref = (xr - mean.reshape(bshape)) / np.sqrt(var.reshape(bshape) + 1e-5) * np.array([1.5, -0.5, 2.0]).reshape(
        bshape) + np.array([0.1, 0.2, -0.3]).reshape(bshape)
    tol = None if dtype in ("float32", "float64") else GRAD_TOL[dtype]   # statistics rounded to the dtype
    assert_close(y, ref, dtype, tol=tol)
    n = xr.size / 3
    assert_close(m.running_mean, 0.25 * mean, dtype, tol=tol)
    assert_close(m.running_var, 0.75 + 0.25 * var * n / (n - 1), dtype, tol=tol)
    assert int(m.num_batches_tracked) == 1
    m.eval()
    assert_close(m(x), (xr - 0.25 * mean.reshape(bshape)) / np.sqrt(
        0.75 + 0.25 * var.reshape(bshape) * n / (n - 1) + 1e-5) * np.array([1.5, -0.5, 2.0]).reshape(bshape)
        + np.array([0.1, 0.2, -0.3]).reshape(bshape), dtype, tol=tol)


def test_convert_sync_batchnorm_shares_parameters_and_buffers():
    net = nn.Sequential(nn.Conv2d(3, 4, 1), nn.BatchNorm2d(4),
                        nn.Sequential(nn.BatchNorm1d(4, affine=False, momentum=None)), nn.InstanceNorm2d(4))
    net[1].train(False)
    out = nn.SyncBatchNorm.convert_sync_batchnorm(net, process_group=None)
    assert out is net and type(net[1]) is nn.SyncBatchNorm and type(net[2][0]) is nn.SyncBatchNorm
    assert type(net[3]) is nn.InstanceNorm2d
    assert net[1].weight is not None and not net[1].training and net[2][0].momentum is None
    assert repr(net[2][0]) == ("SyncBatchNorm(4, eps=1e-05, momentum=None, affine=False, bias=False, "
                               "track_running_stats=True)")
    bn = nn.BatchNorm3d(2)
    sbn = nn.SyncBatchNorm.convert_sync_batchnorm(bn)
    assert sbn is not bn and sbn.weight is bn.weight and sbn.running_mean is bn.running_mean
    assert list(sbn.state_dict()) == list(bn.state_dict())
    from tinytorch.nn.modules.batchnorm import SyncBatchNorm
    assert SyncBatchNorm is nn.SyncBatchNorm


def test_sync_batchnorm_errors():
    with pytest.raises(ValueError, match="expected at least 2D input \\(got 1D input\\)"):
        nn.SyncBatchNorm(3)(tt.randn(4))
    with pytest.raises(ValueError, match="SyncBatchNorm number of input channels should be non-zero"):
        nn.SyncBatchNorm(3)(tt.randn(4, 0, 2))
