"""Matrix functions composed from existing ops: matrix_exp, the Cholesky methods, cholesky_solve /
cholesky_inverse, vander and linalg.vander, linalg.tensorinv / tensorsolve against float64 numpy,
with gradients and PyTorch's errors."""
import numpy as np
import pytest

import tinytorch as tt
from support.numeric import FLOAT_DTYPES, GRAD_TOL, TOL, assert_close, make, to_numpy


def test_vander():
    x = tt.tensor([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(tt.vander(x).numpy(), np.vander(x.numpy()))
    np.testing.assert_array_equal(tt.vander(x, N=4, increasing=True).numpy(), np.vander(x.numpy(), 4, True))


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_and_inverse(upper):
    rng = np.random.default_rng(0)
    m = rng.normal(size=(2, 4, 4))
    a = m @ np.swapaxes(m, -1, -2) + 4 * np.eye(4)
    b = rng.normal(size=(2, 4, 3))
    factor = np.linalg.cholesky(a)
    factor = np.swapaxes(factor, -1, -2) if upper else factor
    for dtype in ("float32", "float64"):
        L = tt.tensor(factor, dtype=getattr(tt, dtype))
        B = tt.tensor(np.swapaxes(b, -1, -2).copy(), dtype=getattr(tt, dtype)).mT   # non-contiguous B
        tol = tuple(100 * t for t in TOL[dtype])   # a triangular solve pair, condition number ~10
        assert_close(tt.cholesky_solve(B, L, upper), np.linalg.solve(a, b), dtype, tol=tol)
        assert_close(tt.cholesky_inverse(L[0], upper), np.linalg.inv(a[0]), dtype, tol=tol)
    L = tt.tensor(factor[0], requires_grad=True)
    tt.cholesky_solve(tt.tensor(b[0]), L, upper).sum().backward()
    assert L.grad is not None and np.isfinite(to_numpy(L.grad)).all()


def test_linalg_vander_tensorinv_tensorsolve():
    for dtype in FLOAT_DTYPES:
        x, a = make((2, 4), dtype, "sliced", low=-1.5, high=1.5)
        assert_close(tt.linalg.vander(x), np.stack([np.vander(r, increasing=True) for r in a]), dtype)
        assert_close(tt.linalg.vander(x, N=6), np.stack([np.vander(r, 6, increasing=True) for r in a]), dtype,
                     tol=tuple(4 * t for t in TOL[dtype]))
    rng = np.random.default_rng(0)
    a = rng.normal(size=(6, 6)) + 6 * np.eye(6)
    for dtype in ("float32", "float64"):
        tol = tuple(100 * t for t in TOL[dtype])   # an LU solve of a well-conditioned 6x6 system
        A = tt.tensor(a.reshape(6, 2, 3), dtype=getattr(tt, dtype))
        assert_close(tt.linalg.tensorinv(A, 1), np.linalg.tensorinv(a.reshape(6, 2, 3), 1), dtype, tol=tol)
        A2 = tt.tensor(a.reshape(2, 3, 6), dtype=getattr(tt, dtype))
        b = rng.normal(size=(2, 3))
        B = tt.tensor(b, dtype=getattr(tt, dtype))
        assert_close(tt.linalg.tensorsolve(A2, B), np.linalg.tensorsolve(a.reshape(2, 3, 6), b), dtype, tol=tol)
        A3 = A2.permute(2, 0, 1)
        assert_close(tt.linalg.tensorsolve(A3, B, dims=(0,)),
                     np.linalg.tensorsolve(to_numpy(A3), b, axes=(0,)), dtype, tol=tol)
    x = tt.tensor([0.0, 2.0], dtype=tt.float64, requires_grad=True)
    tt.linalg.vander(x, N=4).sum().backward()   # d/dx (1 + x + x^2 + x^3) = 1 + 2x + 3x^2
    assert_close(x.grad, [1.0, 17.0], "float64")
    with pytest.raises(RuntimeError, match="greater than 1"):
        tt.linalg.vander(x, N=1)
    with pytest.raises(RuntimeError, match="prod"):
        tt.linalg.tensorinv(tt.ones(2, 3), 1)
    with pytest.raises(ValueError, match="positive"):
        tt.linalg.tensorinv(tt.ones(2, 2), 0)
    with pytest.raises(RuntimeError, match="prod"):
        tt.linalg.tensorsolve(tt.ones(2, 3), tt.ones(2))


def _np_expm(a):
    """exp of each matrix in a float64 batch, from its eigendecomposition (distinct eigenvalues)."""
    w, v = np.linalg.eig(a)
    return np.real(v @ (np.exp(w)[..., None] * np.linalg.inv(v)))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("scale", [0.2, 3.0])   # no squaring, and several squarings
def test_matrix_exp_matches_numpy(dtype, layout, scale):
    x, a = make((2, 4, 4), dtype, layout, seed=6)
    for out in (tt.matrix_exp(x * scale), tt.linalg.matrix_exp(x * scale), (x * scale).matrix_exp()):
        assert out.dtype == x.dtype and tuple(out.shape) == (2, 4, 4)
        ref = _np_expm(to_numpy(x * scale))
        rtol, atol = TOL[dtype]
        assert_close(out, ref, dtype, (rtol * 4, atol * float(np.abs(ref).max())))   # relative to exp's scale


def test_matrix_exp_gradient():
    x = tt.tensor(np.random.default_rng(7).uniform(-1.5, 1.5, (2, 3, 3)), dtype=tt.float64, requires_grad=True)
    assert tt.autograd.gradcheck(tt.linalg.matrix_exp, (x,))
    w = np.random.default_rng(8).uniform(-1, 1, (2, 3, 3))
    (tt.matrix_exp(x) * tt.tensor(w)).sum().backward()
    g64 = x.grad.numpy()
    for dtype in ("float32", "float16", "bfloat16"):
        xl = x.detach().to(getattr(tt, dtype)).requires_grad_(True)
        (tt.matrix_exp(xl) * tt.tensor(w, dtype=getattr(tt, dtype))).sum().backward()
        rtol, atol = GRAD_TOL[dtype]
        assert_close(xl.grad, g64, dtype, (rtol, atol * float(np.abs(g64).max())))


def test_matrix_exp_bad_input_and_edges():
    with pytest.raises(RuntimeError, match="square matrices, but they are 2 by 3"):
        tt.matrix_exp(tt.zeros(2, 3))
    with pytest.raises(RuntimeError, match="Expected a floating point"):
        tt.linalg.matrix_exp(tt.zeros(2, 2, dtype=tt.int64))
    assert_close(tt.matrix_exp(tt.zeros(3, 3)), np.eye(3), "float32")
    assert tuple(tt.linalg.matrix_exp(tt.zeros(0, 2, 2)).shape) == (0, 2, 2)


def test_cholesky_methods():
    a = np.random.default_rng(9).uniform(-1, 1, (3, 3))
    spd = a @ a.T + 3 * np.eye(3)
    L = tt.tensor(np.linalg.cholesky(spd))
    b = tt.tensor(np.random.default_rng(10).uniform(-1, 1, (3, 2)))
    assert_close(b.cholesky_solve(L), np.linalg.solve(spd, b.numpy()), "float64")
    assert_close(L.cholesky_inverse(), np.linalg.inv(spd), "float64")
