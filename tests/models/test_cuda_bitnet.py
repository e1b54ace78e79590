"""BitNet b1.58 packed inference on the GPU (cuda/src/bitnet.cu) against the CPU kernel: both sum
int8 × ternary exactly in int32 and scale once, so the results are bitwise equal. Rows of K4 % 4 == 0
bytes take the uint32 path, others (and a misaligned packed buffer) the byte path; token counts
cover the 4/2/1-token launches and the unpack + GEMM path above 32 tokens."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
from tinytorch import _C
from tinytorch.nn.modules.bitlinear import pack_ternary
from support.numeric import TOL, assert_close

pytestmark = pytest.mark.cuda


def _np(t):
    return np.asarray(t.detach().cpu().double())


def _operands(m, k, n, seed):
    rng = np.random.default_rng(seed)
    q = rng.integers(-128, 128, (m, k)).astype(np.float32)
    ternary = rng.integers(-1, 2, (n, k)).astype(np.float32)
    mult = rng.uniform(0.001, 0.1, m).astype(np.float32)
    return q, ternary, mult


@pytest.mark.parametrize("m", [1, 2, 3, 4, 5, 9, 33])
@pytest.mark.parametrize("k,n", [(16, 5), (37, 9), (64, 33), (130, 17), (2048, 19)])
def test_kernel_equals_cpu_kernel(m, k, n):
    q, ternary, mult = _operands(m, k, n, seed=m * 1000 + k)
    packed = pack_ternary(tt.tensor(ternary))
    cpu = _C.bitnet_matmul(tt.tensor(q)._impl, packed._impl, tt.tensor(mult)._impl)
    gpu = _C.bitnet_matmul(tt.tensor(q).cuda()._impl, packed.cuda()._impl, tt.tensor(mult).cuda()._impl)
    gpu = tt._core.tensor_base._wrap(gpu)
    assert gpu.device.type == "cuda" and tuple(gpu.shape) == (m, n)
    np.testing.assert_array_equal(_np(gpu), _np(tt._core.tensor_base._wrap(cpu)))
    # and the exact integer sums against numpy
    expect = (q.astype(np.int64) @ ternary.astype(np.int64).T).astype(np.float32) * mult[:, None]
    np.testing.assert_array_equal(_np(gpu), expect)


def test_misaligned_packed_buffer_takes_the_byte_path():
    q, ternary, mult = _operands(3, 64, 11, seed=5)
    packed = pack_ternary(tt.tensor(ternary)).cuda()  # (11, 16): K4 % 4 == 0
    buf = tt.zeros(11 * 16 + 1, dtype=tt.uint8, device="cuda")
    buf[1:].copy_(packed.reshape(-1))
    shifted = buf[1:].reshape(11, 16)  # one byte past the allocation's alignment
    out = tt._core.tensor_base._wrap(_C.bitnet_matmul(tt.tensor(q).cuda()._impl, shifted._impl, tt.tensor(mult).cuda()._impl))
    expect = (q.astype(np.int64) @ ternary.astype(np.int64).T).astype(np.float32) * mult[:, None]
    np.testing.assert_array_equal(_np(out), expect)


@pytest.mark.parametrize("shape", [(1, 96), (2, 3, 96), (40, 96), (1, 1, 2050)])
@pytest.mark.parametrize("input_norm", [False, True])
def test_packed_module_on_cuda_equals_cpu(shape, input_norm):
    tt.manual_seed(4)
    layer = nn.BitLinear(shape[-1], 24, input_norm=input_norm)
    packed = layer.pack()
    x = tt.randn(*shape) * 3
    y_cpu = packed(x)
    packed_gpu = layer.cuda().pack()
    y_gpu = packed_gpu(x.cuda())
    assert y_gpu.device.type == "cuda"
    # the same exact integer sums; only the input norm and quantizer run in float32 on each device
    assert_close(y_gpu, _np(y_cpu), tol=TOL["float32"])
    packed_gpu.use_kernel = False  # the unpack + GEMM path: the same exact sums
    assert_close(packed_gpu(x.cuda()), _np(y_gpu), tol=TOL["float32"])


def test_device_mismatch_raises():
    q, w, m = tt.zeros(2, 8), tt.zeros(3, 2, dtype=tt.uint8), tt.ones(2)
    with pytest.raises(Exception, match="bitnet_matmul"):
        _C.bitnet_matmul(q.cuda()._impl, w._impl, m.cuda()._impl)
