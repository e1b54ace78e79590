"""nn.utils.clip_grad_norm_ through the multi-tensor kernels (_C.multi_sum_squares, multi_scale_) on every
device against float64 numpy (cases in tests/support/grad_clip_cases.py), and inside a captured CUDA graph."""
import numpy as np
import pytest

import tinytorch as tt
from support.grad_clip_cases import check_clip_grad_norm
from support.numeric import DEVICES, FLOAT_DTYPES, assert_close
from tinytorch import _C


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_one_dtype(device, dtype):
    check_clip_grad_norm(device, [dtype])


@pytest.mark.parametrize("device", DEVICES)
def test_mixed_dtypes_and_a_noncontiguous_gradient(device):
    check_clip_grad_norm(device, ["float32", "bfloat16", "float16"])
    check_clip_grad_norm(device, ["float32", "float64"], noncontiguous=True)


@pytest.mark.cuda
def test_captured_in_a_graph():
    p = tt.nn.Parameter(tt.zeros(1000, device="cuda"))
    p.grad = tt.full((1000,), 3.0, device="cuda")
    tt.nn.utils.clip_grad_norm_([p], 1.0)  # warm-up outside the capture
    g = tt.cuda.CUDAGraph()
    with tt.cuda.graph(g):
        total = tt.nn.utils.clip_grad_norm_([p], 1.0)
    p.grad.fill_(4.0)
    g.replay()
    tt.cuda.synchronize()
    expected = np.sqrt(1000) * 4.0
    assert_close(total, expected, dtype="float32")
    assert_close(p.grad, np.full(1000, 4.0 / (expected + 1e-6)), dtype="float32")


def test_kernels_directly():
    xs = [tt.arange(10, dtype=tt.bfloat16), tt.full((3, 3), -2.0, dtype=tt.bfloat16)]
    sums = tt._core.tensor_base._wrap(_C.multi_sum_squares([x._impl for x in xs]))
    assert sums.dtype == tt.float32
    assert_close(sums, [285.0, 36.0], tol=(0, 0))
    _C.multi_scale_([x._impl for x in xs], tt.tensor(0.5)._impl)
    assert_close(xs[1], np.full((3, 3), -1.0), tol=(0, 0))


def test_errors():
    with pytest.raises(RuntimeError, match="non-empty"):
        _C.multi_sum_squares([])
    with pytest.raises(TypeError, match="one dtype"):
        _C.multi_sum_squares([tt.zeros(2)._impl, tt.zeros(2, dtype=tt.float64)._impl])
    with pytest.raises(TypeError, match="floating"):
        _C.multi_sum_squares([tt.zeros(2, dtype=tt.int64)._impl])
    with pytest.raises(RuntimeError, match="contiguous"):
        _C.multi_scale_([tt.zeros(2, 3).t()._impl], tt.tensor(1.0)._impl)
    with pytest.raises(RuntimeError, match="one-element"):
        _C.multi_scale_([tt.zeros(2)._impl], tt.zeros(2)._impl)
