"""Matrix products composed from existing ops (tinytorch/_composites/contractions.py): addmm,
baddbmm, addmv, addr and addbmm against float64 numpy on every float dtype, gradients by gradcheck;
addmm with beta=0 ignores NaN in its input, as PyTorch's."""
import math

import numpy as np
import pytest

import tinytorch as tt
from support.numeric import FLOAT_DTYPES, TOL, assert_close, f64_leaves, make


gradcheck = tt.autograd.gradcheck


PRODUCTS = {   # name: (shapes, call, numpy reference)
    "addmm": ([(3, 5), (3, 4), (4, 5)], lambda i, a, b: tt.addmm(i, a, b, beta=0.5, alpha=2.0),
              lambda i, a, b: 0.5 * i + 2.0 * a @ b),
    "baddbmm": ([(2, 3, 5), (2, 3, 4), (2, 4, 5)], lambda i, a, b: tt.baddbmm(i, a, b, alpha=-1.0),
                lambda i, a, b: i - a @ b),
    "addmv": ([(3,), (3, 4), (4,)], lambda i, a, b: tt.addmv(i, a, b, beta=2), lambda i, a, b: 2 * i + a @ b),
    "addr": ([(3, 4), (3,), (4,)], lambda i, a, b: tt.addr(i, a, b), lambda i, a, b: i + np.outer(a, b)),
}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name", sorted(PRODUCTS))
def test_matrix_products(name, dtype):
    shapes, call, ref = PRODUCTS[name]
    ins = [make(s, dtype, "transposed" if len(s) == 2 else "contiguous", seed=i) for i, s in enumerate(shapes)]
    out = call(*[t for t, _ in ins])
    expected = ref(*[r for _, r in ins])
    rtol, atol = TOL[dtype]
    assert_close(out, expected, dtype, tol=(rtol * 10, atol * 10 * max(1.0, np.abs(expected).max())), what=name)
    assert gradcheck(call, tuple(f64_leaves(*shapes)))


def test_addmm_beta_zero_ignores_nan():
    out = tt.addmm(tt.full((2, 2), math.nan), tt.eye(2), tt.eye(2), beta=0)
    assert out.tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert tt.mv(tt.eye(2), tt.tensor([3.0, 4.0])).tolist() == [3.0, 4.0]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_addbmm_against_numpy(dtype):
    m, a = make((3, 5), dtype, "transposed", seed=1)
    b1, b1_ref = make((2, 3, 4), dtype, "sliced", seed=2)
    b2, b2_ref = make((2, 4, 5), dtype, "contiguous", seed=3)
    out = tt.addbmm(m, b1, b2, beta=0.5, alpha=2.0)
    tol = tuple(8 * t for t in TOL[dtype])
    assert_close(out, 0.5 * a + 2.0 * np.einsum("bij,bjk->ik", b1_ref, b2_ref), dtype, tol=tol)
