"""batch_norm's fused CPU kernels (forward, running statistics, gradients, create_graph) against
float64 numpy references, over dtypes, layouts and odd shapes."""
import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn.functional as F
from tinytorch import _C
from support.numeric import FLOAT_DTYPES, GRAD_TOL, TOL, assert_close, make, to_numpy

from support.batch_norm_cases import LAYOUTS, SHAPES, bn_ref, check_batch_norm


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_batch_norm_forward_backward(dtype, layout, shape, training):
    if layout == "expanded" and training and np.prod(shape[2:], dtype=int) == 1:
        pytest.skip("every channel constant (equal rows, one element each): zero variance")
    check_batch_norm("cpu", dtype, layout, shape, training)


@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_no_affine_and_partial_grads(affine):
    x, xn = make((6, 4, 3, 5), "float64", "transposed", seed=7, requires_grad=True)
    w, wn = make((4,), "float64", seed=8, requires_grad=True) if affine else (None, np.ones(4))
    g, gn = make((6, 4, 3, 5), "float64", seed=9)
    y = F.batch_norm(x, None, None, w, None, True)
    yr, gxr, gwr, _, _, _ = bn_ref(xn, wn, np.zeros(4), gn, True)
    assert_close(y, yr)
    gx, = tt.autograd.grad(y, (x,), g, retain_graph=True)  # only the input's gradient
    assert_close(gx, gxr, tol=GRAD_TOL["float64"])
    if affine:
        gw, = tt.autograd.grad(y, (w,), g)
        assert_close(gw, gwr, tol=GRAD_TOL["float64"])


@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_batch_norm_double_backward(training):
    # create_graph: the composite gradient formula, differentiated again (finite differences).
    x, xn = make((4, 3, 2, 3), "float64", seed=10, requires_grad=True)
    w, wn = make((3,), "float64", low=0.5, high=1.5, seed=11, requires_grad=True)
    b, _ = make((3,), "float64", seed=12, requires_grad=True)
    g, gn = make((4, 3, 2, 3), "float64", seed=13)
    v, vn = make((4, 3, 2, 3), "float64", seed=14)
    rm, rv = tt.zeros(3, dtype=tt.float64), tt.ones(3, dtype=tt.float64) * 1.5

    def first(xv, wv):  # <grad_x(xv, wv), v> in numpy
        return float((bn_ref(xv, wv, np.zeros(3), gn, training, to_numpy(rm), to_numpy(rv))[1] * vn).sum())

    def fd(a, f):  # central differences of f over the entries of a
        out = np.zeros_like(a)
        for i in np.ndindex(a.shape):
            d = np.zeros_like(a)
            d[i] = 1e-6
            out[i] = (f(a + d) - f(a - d)) / 2e-6
        return out

    y = F.batch_norm(x, rm.clone(), rv.clone(), w, b, training, 0.0)
    gx, = tt.autograd.grad(y, (x,), g, create_graph=True)
    assert_close(gx, bn_ref(xn, wn, np.zeros(3), gn, training, to_numpy(rm), to_numpy(rv))[1],
                 tol=GRAD_TOL["float64"])
    ggx, ggw = tt.autograd.grad(gx, (x, w), v, allow_unused=True)
    assert_close(ggw, fd(wn, lambda a: first(xn, a)), tol=(1e-5, 1e-7))
    if training:
        assert_close(ggx, fd(xn, lambda a: first(a, wn)), tol=(1e-5, 1e-7))
    else:  # evaluation: grad_x = w * invstd * g does not depend on x
        assert ggx is None


def test_batch_norm_errors():
    x = tt.randn(4, 3, 5)
    with pytest.raises(RuntimeError, match="weight .* must have 3 elements"):
        F.batch_norm(x, None, None, tt.ones(4), None, True)
    with pytest.raises(RuntimeError, match="running_mean and running_var must be defined"):
        _C.batch_norm(x._impl, None, None, None, None, False, 1e-5)
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        F.batch_norm(tt.randn(1, 3), None, None, training=True)
    with pytest.raises(TypeError, match="floating point"):
        _C.batch_norm(tt.ones(2, 3, dtype=tt.int64)._impl, None, None, None, None, True, 1e-5)
