"""einsum, tensordot, dot, inner, outer, kron against numpy on every float dtype and memory layout;
gradients by gradcheck."""
import numpy as np
import pytest

import tinytorch as tt
from tinytorch.autograd import gradcheck
from support.numeric import FLOAT_DTYPES, TOL, assert_close, make

EINSUM = [  # (equation, operand shapes)
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),        # attention scores
    ("ij->ji", [(3, 4)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),                                        # trace, implicit output
    ("ij->", [(3, 4)]),
    ("i,j->ij", [(3,), (4,)]),
    ("i,i->", [(5,), (5,)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),       # broadcast ellipsis
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),              # three operands
    ("abc,cd->abd", [(2, 3, 4), (4, 5)]),
    ("bij,bkj", [(2, 3, 4), (2, 5, 4)]),                     # implicit: b i k sorted -> bik
    ("ijk,jil->kl", [(2, 3, 4), (3, 2, 5)]),
    ("i,ij->i", [(3,), (3, 4)]),                             # a summed-out index only in one operand
]


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("eq,shapes", EINSUM)
def test_einsum_matches_numpy(eq, shapes, dtype, layout):
    ops = [make(s, dtype, layout if len(s) >= 2 else "contiguous", seed=i) for i, s in enumerate(shapes)]
    rtol, atol = TOL[dtype]
    ref = np.einsum(eq, *[r for _, r in ops])
    assert_close(tt.einsum(eq, *[t for t, _ in ops]), ref, dtype, (rtol * 8, atol * 8 * max(1.0, np.abs(ref).max())))
    assert_close(tt.einsum(eq, [t for t, _ in ops]), ref, dtype, (rtol * 8, atol * 8 * max(1.0, np.abs(ref).max())))


@pytest.mark.parametrize("eq,shapes", [EINSUM[i] for i in (1, 4, 9, 10, 13)])
def test_einsum_gradients(eq, shapes):
    ops = [make(s, "float64", seed=i, requires_grad=True)[0] for i, s in enumerate(shapes)]
    assert gradcheck(lambda *t: tt.einsum(eq, *t), tuple(ops))


def test_einsum_errors():
    a = tt.zeros(2, 3)
    with pytest.raises(ValueError, match="2 letters for an operand of 3 dims"):
        tt.einsum("ij", tt.zeros(2, 3, 4))
    with pytest.raises(ValueError, match="appears in no operand"):
        tt.einsum("ij->k", a)
    with pytest.raises(RuntimeError, match="size 3 in one operand and 4"):
        tt.einsum("ij,jk->ik", a, tt.zeros(4, 2))
    with pytest.raises(ValueError, match="2 operand subscripts"):
        tt.einsum("ij,jk", a)


def test_tensordot_dot_inner_outer_kron():
    a, ar = make((2, 3, 4), "float64", seed=1)
    b, br = make((3, 4, 5), "float64", seed=2)
    assert_close(tt.tensordot(a, b), np.tensordot(ar, br))
    assert_close(tt.tensordot(a, b, ([1, 2], [0, 1])), np.tensordot(ar, br, ([1, 2], [0, 1])))
    assert_close(tt.tensordot(a, b, ([2], [1])), np.tensordot(ar, br, ([2], [1])))
    v, vr = make((5,), "float64", seed=3)
    w, wr = make((5,), "float64", seed=4)
    assert_close(tt.dot(v, w), np.dot(vr, wr))
    assert_close(v.dot(w), np.dot(vr, wr))
    assert_close(tt.outer(v, w), np.outer(vr, wr))
    c, cr = make((6, 4), "float64", seed=5)
    assert_close(tt.inner(a, c), np.inner(ar, cr))
    m, mr = make((2, 3), "float64", seed=6)
    n, nr = make((3, 2), "float64", seed=7)
    assert_close(tt.kron(m, n), np.kron(mr, nr))
    assert_close(m.kron(v), np.kron(mr, vr))
    with pytest.raises(RuntimeError, match="1-D tensors of the same size"):
        tt.dot(v, w[:4])
    x, _ = make((3, 4), "float64", requires_grad=True)
    y, _ = make((4, 2), "float64", seed=8, requires_grad=True)
    assert gradcheck(lambda p, q: tt.kron(p, q), (x, y))
    assert gradcheck(lambda p, q: tt.tensordot(p, q, 1), (x, y))
