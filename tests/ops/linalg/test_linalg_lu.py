"""linalg.lu (P, L, U), lu_unpack and the differentiable lu_factor: values against scipy's getrf
(float64 reference), for square, wide and tall batched matrices in float32 and float64; gradients
by gradcheck (PyTorch's LU derivative)."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.linalg as LA
from tinytorch.autograd import gradcheck
from support.numeric import assert_close, make

sla = pytest.importorskip("scipy.linalg")
SHAPES = [(4, 4), (2, 3, 5), (2, 5, 3), (3, 1, 1)]


def _ref(A):
    """scipy's P, L, U of each matrix (A = P L U, partial pivoting as getrf)."""
    flat = A.reshape(-1, *A.shape[-2:])
    parts = [sla.lu(a) for a in flat]
    return [np.stack([p[i] for p in parts]).reshape(*A.shape[:-2], *parts[0][i].shape) for i in range(3)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lu_matches_getrf(shape, dtype):
    A, Ar = make(shape, dtype, "transposed" if len(shape) > 2 else "contiguous", seed=3)
    P, L, U = LA.lu(A)
    Pr, Lr, Ur = _ref(Ar)
    np.testing.assert_array_equal(P.numpy(), Pr)
    assert_close(L, Lr, dtype)
    assert_close(U, Ur, dtype)
    assert_close(P.double() @ L.double() @ U.double(), Ar, dtype)
    LU, piv = LA.lu_factor(A)
    P2, L2, U2 = tt.lu_unpack(LU, piv)
    np.testing.assert_array_equal(P2.numpy(), Pr)
    assert_close(L2, Lr, dtype)
    assert_close(U2, Ur, dtype)
    if shape[-2] == shape[-1]:
        np.testing.assert_array_equal(piv.numpy().reshape(-1, shape[-1]) - 1,
                                      np.stack([sla.lu_factor(a)[1] for a in Ar.reshape(-1, *shape[-2:])]))


@pytest.mark.parametrize("shape", SHAPES)
def test_lu_gradients(shape):
    A = tt.tensor(np.random.default_rng(4).standard_normal(shape)).requires_grad_()
    assert gradcheck(lambda a: LA.lu(a).L, (A,))
    assert gradcheck(lambda a: LA.lu(a).U, (A,))
    assert gradcheck(lambda a: LA.lu_factor(a).LU, (A,))
    # a loss through both factors, as users write it
    assert gradcheck(lambda a: (LA.lu(a).L.sum(-1) ** 2).sum() + LA.lu(a).U.abs().sum(), (A,))


def test_lu_grad_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    for shape in [(3, 3), (3, 5), (5, 3)]:
        A = rng.standard_normal(shape)
        x = torch.tensor(A, requires_grad=True)
        _, L, U = torch.linalg.lu(x)
        (L.sum() + (U ** 2).sum()).backward()
        y = tt.tensor(A).requires_grad_()
        _, L, U = LA.lu(y)
        (L.sum() + (U ** 2).sum()).backward()
        assert_close(y.grad, x.grad.numpy(), "float64")


def test_lu_unpack_flags_and_errors():
    LU, piv = LA.lu_factor(tt.tensor(np.random.default_rng(6).standard_normal((3, 3))))
    P, L, U = tt.lu_unpack(LU, piv, unpack_data=False)
    assert L.numel() == 0 and U.numel() == 0 and list(P.shape) == [3, 3]
    P, L, U = tt.lu_unpack(LU, piv, unpack_pivots=False)
    assert P.numel() == 0
    with pytest.raises(RuntimeError, match="LU_pivots"):
        tt.lu_unpack(LU, piv[:2])
    with pytest.raises(NotImplementedError, match="without pivoting"):
        LA.lu(LU, pivot=False)
