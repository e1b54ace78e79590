"""nn.utils.clip_grad_norm_'s multi-tensor CUDA kernels against float64 numpy (cases in
tests/support/grad_clip_cases.py), and inside a captured CUDA graph."""
import numpy as np
import pytest

import tinytorch as tt
from support.grad_clip_cases import check_clip_grad_norm
from support.numeric import FLOAT_DTYPES, assert_close

pytestmark = pytest.mark.cuda


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_one_dtype(dtype):
    check_clip_grad_norm("cuda", [dtype])


def test_mixed_dtypes_and_a_noncontiguous_gradient():
    check_clip_grad_norm("cuda", ["float32", "bfloat16", "float16"])
    check_clip_grad_norm("cuda", ["float32", "float64"], noncontiguous=True)


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
