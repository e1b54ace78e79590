"""nn.utils.clip_grad_norm_ through the multi-tensor kernels (_C.multi_sum_squares, multi_scale_)."""
import numpy as np
import pytest

import tinytorch as tt
from support.grad_clip_cases import check_clip_grad_norm
from support.numeric import FLOAT_DTYPES, assert_close
from tinytorch import _C


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_one_dtype(dtype):
    check_clip_grad_norm("cpu", [dtype])


def test_mixed_dtypes_and_a_noncontiguous_gradient():
    check_clip_grad_norm("cpu", ["float32", "bfloat16", "float16"])
    check_clip_grad_norm("cpu", ["float32", "float64"], noncontiguous=True)


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
