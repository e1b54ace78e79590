"""Pointwise ops composed from existing ones (tinytorch/_composites/pointwise.py, erfinv): lerp,
addcmul, addcdiv, the special values of the composed functions, copysign/fmod gradients, frac and
deg2rad of integers, isclose/allclose/equal, isin, erfinv, gcd/lcm, ldexp, dist/logit/fmax/fmin.
Forward against float64 numpy on every float dtype with non-contiguous and broadcast inputs,
gradients by gradcheck, PyTorch's errors."""
import math

import numpy as np
import pytest

import tinytorch as tt
from support.numeric import FLOAT_DTYPES, GRAD_TOL, TOL, assert_close, f64_leaves, make, scaled_tol, to_numpy


gradcheck = tt.autograd.gradcheck


# ------------------------------------------------------------------ ternary elementwise
TERNARY = {   # name: (tinytorch call, numpy reference)
    "lerp": (lambda a, b, w: tt.lerp(a, b, w), lambda a, b, w: a + w * (b - a)),
    "addcmul": (lambda a, b, c: tt.addcmul(a, b, c, value=0.5), lambda a, b, c: a + 0.5 * b * c),
    "addcdiv": (lambda a, b, c: tt.addcdiv(a, b, c, value=-2), lambda a, b, c: a - 2 * b / c),
}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name", sorted(TERNARY))
def test_ternary_forward(name, dtype):
    call, ref = TERNARY[name]
    a, ar = make((4, 5), dtype, "transposed", seed=1)
    b, br = make((5,), dtype, seed=2)
    c, cr = make((4, 1), dtype, seed=3, low=0.5, high=2.0)
    out = call(a, b, c)
    expected = ref(ar, br, cr)
    assert out.dtype.name == dtype and tuple(out.shape) == expected.shape
    assert_close(out, expected, dtype, tol=scaled_tol(dtype, expected), what=name)


@pytest.mark.parametrize("name", sorted(TERNARY))
def test_ternary_gradcheck(name):
    call, _ = TERNARY[name]
    a, b = f64_leaves((3, 4), (4,))
    c, = f64_leaves((3, 1), seed=5, low=0.5, high=2.0)
    assert gradcheck(call, (a, b, c))


def test_lerp_scalar_weight_inplace_and_dtype_error():
    a, b = tt.zeros(3), tt.tensor([2.0, 4.0, 6.0])
    assert tt.lerp(a, b, 0.25).tolist() == [0.5, 1.0, 1.5]
    a.lerp_(b, 0.5)
    assert a.tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(RuntimeError, match="expected dtype tinytorch.float32 for `end`"):
        tt.lerp(tt.zeros(2), tt.zeros(2, dtype=tt.float64), 0.5)
    with pytest.raises(RuntimeError, match="Integer division with addcdiv"):
        tt.addcdiv(tt.zeros(2), tt.ones(2, dtype=tt.int64), tt.ones(2, dtype=tt.int64))


# ------------------------------------------------------------------ unary/binary extras
def test_elementwise_special_values():
    x = tt.tensor([0.0, -0.0, 1.5, -2.25, math.inf, -math.inf, math.nan])
    np.testing.assert_array_equal(tt.signbit(x).numpy(), np.signbit(x.numpy()))
    np.testing.assert_array_equal(tt.isposinf(x).numpy(), np.isposinf(x.numpy()))
    np.testing.assert_array_equal(tt.isneginf(x).numpy(), np.isneginf(x.numpy()))
    np.testing.assert_array_equal(tt.copysign(tt.ones(7), x)[:6].numpy(), np.copysign(1.0, x.numpy())[:6])
    np.testing.assert_array_equal(tt.nan_to_num(x).numpy(), np.nan_to_num(x.numpy()))
    np.testing.assert_array_equal(tt.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-3.0).numpy(),
                                  np.nan_to_num(x.numpy(), nan=1.0, posinf=2.0, neginf=-3.0))
    h = tt.nan_to_num(x.half())
    assert h[4].item() == 65504.0 and h[5].item() == -65504.0
    assert tt.sinc(tt.tensor([0.0])).item() == 1.0
    assert tt.hypot(tt.tensor([3e30, 0.0]), tt.tensor([4e30, 0.0])).tolist() == pytest.approx([5e30, 0.0], rel=1e-6)
    np.testing.assert_array_equal(tt.fmod(tt.tensor([-7, 7, -7]), tt.tensor([3, -3, -3])).numpy(),
                                  np.fmod([-7, 7, -7], [3, -3, -3]))
    np.testing.assert_allclose(tt.fmod(tt.tensor([-7.5, 7.5]), 2.0).numpy(), np.fmod([-7.5, 7.5], 2.0))
    assert tt.xlogy(tt.tensor([0.0, 2.0]), tt.tensor([0.0, math.e])).tolist() == pytest.approx([0.0, 2.0], rel=1e-6)
    assert tt.float_power(tt.tensor([2]), 0.5).dtype == tt.float64
    assert tt.heaviside(tt.tensor([-1.0, 0.0, 2.0]), tt.tensor(0.5)).tolist() == [0.0, 0.5, 1.0]


def test_copysign_and_fmod_gradients():
    a, b = f64_leaves((3, 4), (4,), low=0.5, high=2.0)
    assert gradcheck(lambda x: tt.copysign(x, b.detach() - 1.2), (a,))
    sign = -(b.detach() - 1.2)
    assert gradcheck(lambda x, y: tt.fmod(x * sign, y), (a, b))     # mixed signs: the adjusted branch


def test_frac_and_deg2rad_integers():
    with pytest.raises(RuntimeError, match="frac"):
        tt.frac(tt.tensor([1, 2]))
    assert tt.deg2rad(tt.tensor([180])).dtype == tt.float32
    with pytest.raises(RuntimeError, match="can't be cast"):
        tt.tensor([180]).deg2rad_()
    with pytest.raises(RuntimeError, match="derivative for 'heaviside' is not implemented"):
        tt.heaviside(tt.zeros(2, requires_grad=True), tt.tensor(0.5))


# ------------------------------------------------------------------ comparisons
def test_isclose_allclose_equal():
    a = tt.tensor([1.0, 2.0, math.nan, math.inf, 1e-9])
    b = tt.tensor([1.0 + 1e-6, 2.1, math.nan, math.inf, 0.0])
    np.testing.assert_array_equal(tt.isclose(a, b).numpy(), np.isclose(a.numpy(), b.numpy()))
    np.testing.assert_array_equal(tt.isclose(a, b, equal_nan=True).numpy(),
                                  np.isclose(a.numpy(), b.numpy(), equal_nan=True))
    np.testing.assert_array_equal(a.isclose(b, rtol=0.1).numpy(), np.isclose(a.numpy(), b.numpy(), rtol=0.1))
    assert tt.allclose(a[:2], b[:2], rtol=0.1) is True and tt.allclose(a, b) is False
    assert tt.isclose(tt.tensor([1, 2]), tt.tensor([1, 3])).tolist() == [True, False]
    with pytest.raises(RuntimeError, match="did not match"):
        tt.isclose(tt.zeros(2), tt.zeros(2, dtype=tt.float64))
    assert tt.equal(tt.ones(2, 3), tt.ones(2, 3)) is True
    assert tt.equal(tt.ones(2, 3), tt.ones(3, 2)) is False
    assert tt.ones(2).equal(tt.tensor([1.0, 0.0])) is False
    assert tt.equal(tt.ones(2), tt.ones(2, dtype=tt.float64)) is True


def test_isin():
    x = tt.tensor([[1, 5, 3], [7, 3, 0]])
    t = tt.tensor([3, 0, 9, 3])
    np.testing.assert_array_equal(tt.isin(x, t).numpy(), np.isin(x.numpy(), t.numpy()))
    np.testing.assert_array_equal(tt.isin(x, t, invert=True).numpy(), np.isin(x.numpy(), t.numpy(), invert=True))
    assert tt.isin(tt.tensor([1.5, 2.0]), tt.tensor([2])).tolist() == [False, True]
    assert tt.isin(x, tt.tensor([], dtype=tt.int64)).sum().item() == 0
    big = tt.arange(1000) * 3
    np.testing.assert_array_equal(tt.isin(tt.arange(3000), big).numpy(), np.isin(np.arange(3000), big.numpy()))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_erfinv_roundtrip_and_edges(dtype):
    x, xr = make((6, 7), dtype, "transposed", seed=8, low=-0.999, high=0.999)
    y = tt.erfinv(x)
    back = np.vectorize(math.erf)(to_numpy(y))
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(back, to_numpy(x), rtol=rtol * 10, atol=atol * 10)
    edges = tt.tensor([-1.0, 1.0, 1.5, math.nan, 0.0], dtype=getattr(tt, dtype)).erfinv().float().tolist()
    assert edges[0] == -math.inf and edges[1] == math.inf and math.isnan(edges[2]) and math.isnan(edges[3])
    assert edges[4] == 0.0


def test_erfinv_float64_accuracy():
    y = np.linspace(-0.999999, 0.999999, 2001)
    x = tt.erfinv(tt.tensor(y)).numpy()
    np.testing.assert_allclose(np.vectorize(math.erf)(x), y, rtol=0, atol=2e-16 * 8)


LAYOUTS = ["contiguous", "transposed", "sliced"]


INT_DTYPES = ["int32", "int64", "uint8"]


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_gcd_lcm_match_numpy(dtype):
    rng = np.random.default_rng(0)
    low, high = (0, 16) if dtype == "uint8" else (-60, 60)   # uint8: every lcm fits
    a = rng.integers(low, high, (4, 5))
    b = rng.integers(low, high, (5,))
    a[0, :2], b[:2] = 0, 0                          # gcd(0, 0) = 0, lcm(x, 0) = 0
    ta = tt.tensor(a.T.copy(), dtype=getattr(tt, dtype)).t()   # non-contiguous, broadcast against b
    tb = tt.tensor(b, dtype=getattr(tt, dtype))
    np.testing.assert_array_equal(tt.gcd(ta, tb).numpy(), np.gcd(a, b))
    np.testing.assert_array_equal(ta.lcm(tb).numpy(), np.lcm(a, b))
    assert tt.gcd(ta, tb).dtype == getattr(tt, dtype)
    c = ta.clone()
    assert c.gcd_(tb) is c
    np.testing.assert_array_equal(c.numpy(), np.gcd(a, b))
    d = ta.clone()
    assert tt.lcm_(d, tb) is d
    np.testing.assert_array_equal(d.numpy(), np.lcm(a, b))


def test_gcd_lcm_reject_non_integers():
    with pytest.raises(RuntimeError, match='"gcd" not implemented for \'float32\''):
        tt.gcd(tt.ones(2), tt.ones(2, dtype=tt.int64))
    with pytest.raises(RuntimeError, match='"lcm" not implemented for \'bool\''):
        tt.lcm(tt.ones(2, dtype=tt.bool), tt.ones(2, dtype=tt.int64))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_ldexp_matches_numpy(dtype, layout):
    x, a = make((3, 4), dtype, layout)
    e = np.array([1, -2, 0, 3])
    out = tt.ldexp(x, tt.tensor(e))
    assert out.dtype == x.dtype
    assert_close(out, a * 2.0 ** e, dtype)
    y = x.clone()
    assert y.ldexp_(tt.tensor(e)) is y
    assert_close(y, a * 2.0 ** e, dtype)
    xg, _ = make((3, 4), dtype, layout, requires_grad=True)
    tt.ldexp(xg, tt.tensor(e)).sum().backward()
    assert_close(xg.grad, np.broadcast_to(2.0 ** e, (3, 4)), dtype, GRAD_TOL[dtype])


def test_ldexp_integer_operands():
    out = tt.ldexp(tt.tensor([1, 2]), tt.tensor([3, 4]))
    assert out.dtype == tt.float32 and out.tolist() == [8.0, 32.0]
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        tt.tensor([1, 2]).ldexp_(tt.tensor([3, 4]))


def _x(shape=(3, 4), seed=0):
    return make(shape, "float64", "transposed" if len(shape) == 2 else "contiguous", seed=seed)


def test_dist_logit_fmax_fmin():
    a, ar = _x((3,), seed=4)
    b, br = _x((3,), seed=5)
    for p in (1, 2, 3.5, math.inf, 0):
        ref = np.linalg.norm(ar - br, ord=p) if p else np.count_nonzero(ar - br)
        assert tt.dist(a, b, p).item() == pytest.approx(ref)
    assert tt.logit(tt.tensor([0.0, 0.25]), eps=1e-6)[1].item() == pytest.approx(math.log(1 / 3), rel=1e-6)
    x = tt.tensor([1.0, math.nan, math.nan, 4.0])
    y = tt.tensor([math.nan, 2.0, math.nan, 3.0])
    np.testing.assert_array_equal(tt.fmax(x, y).numpy(), np.fmax(x.numpy(), y.numpy()))
    np.testing.assert_array_equal(x.fmin(y).numpy(), np.fmin(x.numpy(), y.numpy()))
