"""The op table (tests/support/op_table.py, from codegen/ops.py) on the GPU against the CPU: forward
values and input gradients of every elementwise row, every float dtype, strided inputs."""
import pytest

import tinytorch as tt
from support.numeric import FLOAT_DTYPES, GRAD_TOL, TOL, assert_close, make, to_numpy
from support.op_table import ROWS

pytestmark = pytest.mark.cuda


def _pair(row, dtype, seed):
    """Leaves on CPU and the same values on the GPU (transposed, so strided there too)."""
    shapes = [(3, 4), (4,)] if row.binary else [(5, 6)]
    lo, hi = row.domain
    cpu = [make(s, dtype, "transposed" if len(s) == 2 else "contiguous", lo, hi, seed=seed + i,
                requires_grad=row.differentiable)[0] for i, s in enumerate(shapes)]
    gpu = [x.detach().to("cuda").requires_grad_(row.differentiable) for x in cpu]
    return cpu, gpu


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name", sorted(ROWS))
def test_gpu_matches_cpu(name, dtype):
    row = ROWS[name]
    cpu, gpu = _pair(row, dtype, seed=len(name))
    y_cpu, y_gpu = row.call(*cpu), row.call(*gpu)
    assert y_gpu.device.type == "cuda" and y_gpu.dtype == y_cpu.dtype
    assert_close(y_gpu, to_numpy(y_cpu), dtype, tol=TOL[dtype], what=f"{name} forward")
    if row.differentiable:
        g = tt.ones(*y_cpu.shape, dtype=y_cpu.dtype)
        g_cpu = tt.autograd.grad(y_cpu, cpu, g, allow_unused=True)
        g_gpu = tt.autograd.grad(y_gpu, gpu, g.to("cuda"), allow_unused=True)
        for a, b in zip(g_cpu, g_gpu):
            if a is not None:
                assert_close(b, to_numpy(a), dtype, tol=GRAD_TOL[dtype], what=f"{name} gradient")
