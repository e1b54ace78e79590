"""batch_norm's fused CUDA kernels against float64 numpy (cases in tests/support/batch_norm_cases.py), and
the fused node recorded on CUDA."""
import numpy as np
import pytest

import tinytorch as tt
from support.batch_norm_cases import LAYOUTS, SHAPES, check_batch_norm
from support.numeric import FLOAT_DTYPES

pytestmark = pytest.mark.cuda


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", SHAPES + [(64, 8, 33, 31)], ids=str)
@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_batch_norm_forward_backward(dtype, layout, shape, training):
    if layout == "expanded" and training and np.prod(shape[2:], dtype=int) == 1:
        pytest.skip("every channel constant (equal rows, one element each): zero variance")
    check_batch_norm("cuda", dtype, layout, shape, training)


def test_batch_norm_2d_module_records_the_fused_node():
    bn = tt.nn.BatchNorm2d(4).cuda()
    y = bn(tt.randn(8, 4, 5, 5, device="cuda", requires_grad=True))
    assert y.grad_fn.name() == "NativeBatchNormBackward0"
