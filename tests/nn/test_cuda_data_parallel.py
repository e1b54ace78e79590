"""nn.DataParallel on GPUs: one device moves the module and the inputs there; several raise
NotImplementedError pointing at DistributedDataParallel."""
import pytest

import tinytorch as tt
import tinytorch.nn as nn

pytestmark = pytest.mark.cuda


def test_data_parallel_one_device():
    dp = nn.DataParallel(nn.Linear(3, 2), device_ids=[0])
    assert dp.module.weight.device.type == "cuda"
    out = dp(tt.randn(4, 3))                     # the CPU input is moved to the device
    assert out.device.type == "cuda" and tuple(out.shape) == (4, 2)
    dp.module.cpu()
    with pytest.raises(RuntimeError, match="module must have its parameters and buffers on device cuda:0"):
        dp(tt.randn(4, 3))


def test_data_parallel_several_devices_points_at_ddp():
    if tt.cuda.device_count() < 2:
        with pytest.raises(NotImplementedError, match="DistributedDataParallel"):
            nn.DataParallel(nn.Linear(3, 2), device_ids=[0, 1])
        return
    with pytest.raises(NotImplementedError, match="DistributedDataParallel"):
        nn.DataParallel(nn.Linear(3, 2))
