"""tinytorch._C matmul / mm / bmm / linear (and its backward) against float64 numpy."""
import numpy as np
import pytest

from tinytorch import _C
from support.c_helpers import make

F16, BF16, F32, F64 = 4, 5, 6, 7
FLOATS = [F32, F16, BF16, F64]
TOL = {F64: 1e-10, F32: 1e-5, F16: 2e-3, BF16: 1.6e-2}


def check(got, want, code, scale=3.0):
    assert tuple(got.shape) == tuple(np.shape(want))
    g = got.to_dtype(F64, True).numpy()
    np.testing.assert_allclose(g, want, rtol=TOL[code] * scale, atol=TOL[code] * scale)


CASES = [
    ("dot", (5,), (5,), None, None),
    ("mv", (3, 5), (5,), None, None),
    ("vm", (5,), (5, 4), None, None),
    ("mm", (3, 5), (5, 4), None, None),
    ("bmm", (2, 3, 5), (2, 5, 4), None, None),
    ("broadcast", (2, 1, 3, 5), (4, 5, 6), None, None),
    ("batched@vec", (2, 3, 5), (5,), None, None),
    ("vec@batched", (5,), (2, 5, 4), None, None),
    ("fold", (2, 3, 5), (5, 4), None, None),
    ("transposed", (5, 3), (4, 5), lambda t: t.transpose(0, 1), lambda t: t.transpose(0, 1)),
    ("sliced", (3, 10), (5, 4), lambda t: t.slice(1, 0, 10, 2), None),
    ("expanded", (1, 3, 5), (4, 5, 2), lambda t: t.expand([4, 3, 5]), None),
    ("batched transposed", (2, 5, 3), (3, 1, 4, 5), lambda t: t.transpose(1, 2), lambda t: t.transpose(2, 3)),
]


@pytest.mark.parametrize("code", FLOATS)
@pytest.mark.parametrize("name,sa,sb,ta,tb", CASES, ids=[c[0] for c in CASES])
def test_matmul(code, name, sa, sb, ta, tb):
    a, an = make(sa, code, 1, ta)
    b, bn = make(sb, code, 2, tb)
    out = _C.matmul(a, b)
    assert out.dtype_code == code
    check(out, np.matmul(an, bn), code)


def test_matmul_ints():
    a = np.arange(6, dtype=np.int64).reshape(2, 3)
    b = np.arange(12, dtype=np.int64).reshape(3, 4)
    out = _C.matmul(_C.from_numpy(a), _C.from_numpy(b))
    np.testing.assert_array_equal(out.numpy(), a @ b)


@pytest.mark.parametrize("code", FLOATS)
def test_linear_mm(code):
    x, xn = make((4, 2, 5), code, 3, lambda t: t.transpose(0, 1))
    w, wn = make((3, 5), code, 4)
    b, bn = make((3,), code, 5)
    check(_C.linear(x, w, b), xn @ wn.T + bn, code)
    check(_C.linear(x, w, None), xn @ wn.T, code)
    check(_C.linear(x.select(0, 0).select(0, 0), w), xn[0, 0] @ wn.T, code)
    m1, m1n = make((4, 5), code, 6)
    m2, m2n = make((3, 5), code, 7, lambda t: t.transpose(0, 1))
    check(_C.mm(m1, m2), m1n @ m2n, code)
    a3, a3n = make((2, 4, 5), code, 8)
    b3, b3n = make((2, 5, 3), code, 9)
    check(_C.bmm(a3, b3), a3n @ b3n, code)


@pytest.mark.parametrize("code", [F32, F64])
@pytest.mark.parametrize("xshape", [(5,), (3, 5), (2, 3, 5)])
def test_linear_backward(code, xshape):
    x, xn = make(xshape, code, 3)
    w, wn = make((4, 5), code, 4)
    g, gn = make(xshape[:-1] + (4,), code, 5)
    gx, gw, gb = _C.linear_backward(g, x, w, (True, True, True))
    check(gx, gn @ wn, code)
    check(gw, gn.reshape(-1, 4).T @ xn.reshape(-1, 5), code)
    check(gb, gn.reshape(-1, 4).sum(0), code)
    assert _C.linear_backward(g, x, w, (False, True, False))[::2] == (None, None)
    assert _C.linear_backward(g, x, w, (True, False, False))[1:] == (None, None)


def test_errors():
    a, _ = make((2, 3), F32, 1)
    b, _ = make((4, 5), F32, 2)
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"):
        _C.matmul(a, b)
    with pytest.raises(RuntimeError, match="same dtype"):
        _C.matmul(a, make((3, 2), F64, 1)[0])
    with pytest.raises(RuntimeError, match="at least 1D"):
        _C.matmul(make((), F32, 1)[0], a)
    with pytest.raises(RuntimeError):
        _C.matmul(make((2, 3, 4), F32, 1)[0], make((3, 4, 5), F32, 1)[0])
    with pytest.raises(TypeError):
        _C.matmul(_C.from_numpy(np.ones((2, 2), bool)), _C.from_numpy(np.ones((2, 2), bool)))
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        _C.linear(make((2, 4), F32, 1)[0], make((3, 5), F32, 1)[0], None)
