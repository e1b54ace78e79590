"""PyTorch functions real programs use, composed from existing ops (tinytorch/_composites/pointwise.py,
tinytorch/_composites/indexing.py, erfinv): forward against float64 numpy on every float dtype with
non-contiguous and broadcast inputs, gradients by gradcheck, PyTorch's errors. The unary and
binary ones with a numpy `ref` also run in the op table (tests/cpu/test_op_table.py)."""
import math

import numpy as np
import pytest

import tinytorch as tt
from conftest import FLOAT_DTYPES, TOL, assert_close, make, to_numpy

gradcheck = tt.autograd.gradcheck


def _f64(*shapes, seed=0, low=-2.0, high=2.0, layout="transposed"):
    return [make(s, "float64", layout if len(s) == 2 else "contiguous", low, high, seed=seed + i,
                 requires_grad=True)[0] for i, s in enumerate(shapes)]


def _tol(dtype, expected):
    rtol, atol = TOL[dtype]
    return rtol, atol * max(1.0, float(np.abs(expected).max()) if np.size(expected) else 1.0)


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
    assert_close(out, expected, dtype, tol=_tol(dtype, expected), what=name)


@pytest.mark.parametrize("name", sorted(TERNARY))
def test_ternary_gradcheck(name):
    call, _ = TERNARY[name]
    a, b = _f64((3, 4), (4,))
    c, = _f64((3, 1), seed=5, low=0.5, high=2.0)
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
    a, b = _f64((3, 4), (4,), low=0.5, high=2.0)
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


# ------------------------------------------------------------------ indexing
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_index_add(dtype):
    x, xr = make((5, 3), dtype, "transposed", seed=1)
    src, sr = make((4, 3), dtype, seed=2)
    idx = tt.tensor([0, 4, 0, 2])
    out = tt.index_add(x, 0, idx, src, alpha=2.0)
    expected = xr.copy()
    np.add.at(expected, idx.numpy(), 2.0 * sr)
    assert_close(out, expected, dtype, tol=_tol(dtype, expected))
    y = x.clone()
    assert y.index_add_(1, tt.tensor([2, 2, 0]), tt.ones(5, 3, dtype=x.dtype)) is y
    e2 = xr.copy()
    np.add.at(e2.T, [2, 2, 0], 1.0)
    assert_close(y, e2, dtype, tol=_tol(dtype, e2))


def test_index_add_gradcheck_and_errors():
    x, src = _f64((5, 3), (4, 3))
    idx = tt.tensor([0, 4, 0, 2])
    assert gradcheck(lambda a, s: tt.index_add(a, 0, idx, s, alpha=3.0), (x, src))
    with pytest.raises(IndexError, match="Index is supposed to be a vector"):
        tt.index_add(x, 0, idx.reshape(2, 2), src)
    with pytest.raises(RuntimeError, match="same scalar type"):
        tt.index_add(x, 0, idx, src.float())
    with pytest.raises(RuntimeError, match="must match self"):
        tt.index_add(x, 0, idx[:3], src)


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["sum", "mean", "amax", "amin", "prod"])
def test_scatter_reduce_forward(reduce, include_self):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 5))
    src = rng.normal(size=(3, 5))
    index = rng.integers(0, 4, (3, 5))
    expected = x.copy()
    counts = np.zeros_like(x)
    np.add.at(counts, (index, np.arange(5)[None, :].repeat(3, 0)), 1)
    touched = counts > 0
    init = {"sum": 0.0, "mean": 0.0, "amax": -np.inf, "amin": np.inf, "prod": 1.0}[reduce]
    if not include_self:
        expected[touched] = init
    ufunc = {"sum": np.add, "mean": np.add, "amax": np.maximum, "amin": np.minimum, "prod": np.multiply}[reduce]
    ufunc.at(expected, (index, np.arange(5)[None, :].repeat(3, 0)), src)
    if reduce == "mean":
        expected = np.where(touched, expected / np.maximum(counts + include_self, 1), x)
    out = tt.scatter_reduce(tt.tensor(x), 0, tt.tensor(index), tt.tensor(src), reduce, include_self=include_self)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)


@pytest.mark.parametrize("reduce", ["sum", "mean", "amax", "amin"])
def test_scatter_reduce_gradcheck(reduce):
    x, src = _f64((4, 5), (3, 5))
    index = tt.tensor(np.random.default_rng(1).integers(0, 4, (3, 5)))
    assert gradcheck(lambda a, s: tt.scatter_reduce(a, 0, index, s, reduce), (x, src))
    assert gradcheck(lambda a, s: a.scatter_reduce(0, index, s, reduce, include_self=False), (x, src))


def test_scatter_reduce_ties_split_gradient_and_errors():
    x = tt.tensor([1.0, 5.0], requires_grad=True)
    src = tt.tensor([5.0, 2.0, 5.0], requires_grad=True)
    out = tt.scatter_reduce(x, 0, tt.tensor([1, 0, 1]), src, "amax")
    assert out.tolist() == [2.0, 5.0]
    out.sum().backward()
    assert x.grad.tolist() == pytest.approx([0.0, 1 / 3]) and src.grad.tolist() == pytest.approx([1 / 3, 1.0, 1 / 3])
    with pytest.raises(RuntimeError, match="reduce argument must be"):
        tt.scatter_reduce(x, 0, tt.tensor([0]), src[:1], "max")
    with pytest.raises(NotImplementedError, match="prod"):
        tt.scatter_reduce(x, 0, tt.tensor([0]), src[:1], "prod")


def test_take_along_dim_and_repeat_interleave():
    x, xr = make((3, 4), "float64", "transposed", seed=3)
    idx = x.argsort(dim=1)
    np.testing.assert_array_equal(tt.take_along_dim(x, idx, dim=1).numpy(),
                                  np.take_along_axis(xr, idx.numpy(), 1))
    np.testing.assert_array_equal(tt.take_along_dim(x, tt.tensor([0, 5])).numpy(), xr.reshape(-1)[[0, 5]])
    np.testing.assert_array_equal(x.take_along_dim(tt.tensor([[1], [0], [2]]), 1).numpy(),
                                  np.take_along_axis(xr, np.array([[1], [0], [2]]), 1))
    np.testing.assert_array_equal(tt.repeat_interleave(x, 2).numpy(), np.repeat(xr, 2))
    np.testing.assert_array_equal(x.repeat_interleave(tt.tensor([1, 0, 3]), dim=0).numpy(),
                                  np.repeat(xr, [1, 0, 3], axis=0))
    np.testing.assert_array_equal(x.repeat_interleave(3, dim=1).numpy(), np.repeat(xr, 3, axis=1))
    assert tt.repeat_interleave(tt.tensor([2, 1])).tolist() == [0, 0, 1]
    a, = _f64((3, 4))
    assert gradcheck(lambda t: t.repeat_interleave(tt.tensor([2, 0, 1, 3]), dim=1), (a,))
    with pytest.raises(RuntimeError, match="repeats must have the same size"):
        x.repeat_interleave(tt.tensor([1, 2]), dim=0)


def test_diag_trace():
    v, vr = make((3,), "float64", seed=1)
    for k in (0, 1, -2):
        np.testing.assert_array_equal(tt.diag(v, k).numpy(), np.diag(vr, k))
    m, mr = make((4, 5), "float64", "transposed", seed=2)
    for k in (0, 2, -1):
        np.testing.assert_array_equal(m.diag(k).numpy(), np.diag(mr, k))
    assert tt.trace(m).item() == pytest.approx(np.trace(mr))
    assert tt.trace(tt.arange(6).view(2, 3)).dtype == tt.int64
    a, = _f64((3,))
    assert gradcheck(lambda t: tt.diag(t, 1), (a,))
    with pytest.raises(RuntimeError, match="Supports 1D or 2D"):
        tt.diag(tt.zeros(2, 2, 2))


# ------------------------------------------------------------------ reductions and scans
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_median(dtype):
    x, xr = make((5, 6), dtype, "transposed", seed=4)
    r = xr if dtype != "bfloat16" else to_numpy(x)
    assert x.median().item() == pytest.approx(np.sort(r.reshape(-1))[(r.size - 1) // 2], rel=1e-3)
    values, indices = tt.median(x, dim=1, keepdim=True)
    lower = np.sort(r, axis=1)[:, (6 - 1) // 2][:, None]
    np.testing.assert_array_equal(to_numpy(values), lower)
    np.testing.assert_array_equal(np.take_along_axis(r, indices.numpy(), 1), lower)
    out = x.median(0)
    assert out.values.shape == (6,) and out.indices.dtype == tt.int64


def test_median_nan_gradient_and_int():
    values, indices = tt.median(tt.tensor([[1.0, math.nan, 2.0, math.nan]]), 1)
    assert math.isnan(values.item()) and indices.item() == 1
    assert tt.median(tt.tensor([3, 1, 2, 4])).item() == 2
    a, = _f64((4, 5))
    assert gradcheck(lambda t: tt.median(t, 1)[0], (a,))
    assert gradcheck(lambda t: t.median(), (a,))


def test_cummax_cummin():
    x = tt.tensor([1.0, 3.0, 2.0, 3.0, math.nan, 0.0])
    v, i = tt.cummax(x, 0)
    assert v[:4].tolist() == [1.0, 3.0, 3.0, 3.0] and i.tolist() == [0, 1, 1, 3, 4, 4]
    assert math.isnan(v[5].item())
    v, i = x[:4].cummin(0)
    assert v.tolist() == [1.0, 1.0, 1.0, 1.0] and i.tolist() == [0, 0, 0, 0]
    m, mr = make((3, 5), "float64", "transposed", seed=5)
    np.testing.assert_array_equal(tt.cummax(m, 1).values.numpy(), np.maximum.accumulate(mr, 1))
    np.testing.assert_array_equal(tt.cummin(m, 0).values.numpy(), np.minimum.accumulate(mr, 0))
    a, = _f64((3, 4))
    assert gradcheck(lambda t: tt.cummax(t, 1).values, (a,))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_logcumsumexp(dtype):
    x, xr = make((4, 5), dtype, "transposed", seed=6, low=-30, high=30)
    expected = np.logaddexp.accumulate(xr, axis=1)
    assert_close(tt.logcumsumexp(x, 1), expected, dtype, tol=_tol(dtype, expected))
    big = tt.tensor([1000.0, 1000.0])
    assert tt.logcumsumexp(big, 0).tolist() == pytest.approx([1000.0, 1000.0 + math.log(2)])
    wide = tt.tensor([-200.0, 0.0, 200.0], dtype=tt.float64)             # a range exp() can't span
    np.testing.assert_allclose(tt.logcumsumexp(wide, 0).numpy(), np.logaddexp.accumulate(wide.numpy()))
    assert tt.logcumsumexp(tt.tensor([-math.inf, 1.0]), 0).tolist() == [-math.inf, 1.0]
    a, = _f64((3, 4))
    assert gradcheck(lambda t: t.logcumsumexp(0), (a,))


def test_count_nonzero():
    x = tt.tensor([[0, 1, 2], [0, 0, 3]])
    assert tt.count_nonzero(x).item() == 3
    assert tt.count_nonzero(x, dim=0).tolist() == [0, 1, 2]
    assert x.count_nonzero(dim=(0, 1)).item() == 3


# ------------------------------------------------------------------ shapes and products
def test_atleast_and_broadcast_tensors():
    s, v, m = tt.tensor(1.0), tt.ones(3), tt.ones(2, 3)
    assert [t.shape for t in tt.atleast_1d(s, v)] == [(1,), (3,)]
    assert [t.shape for t in tt.atleast_2d((s, v, m))] == [(1, 1), (1, 3), (2, 3)]
    assert [t.shape for t in tt.atleast_3d(s, v, m)] == [(1, 1, 1), (1, 3, 1), (2, 3, 1)]
    assert tt.atleast_2d(v).shape == (1, 3)
    a, b = tt.broadcast_tensors(tt.ones(3, 1), tt.ones(4))
    assert a.shape == b.shape == (3, 4)
    with pytest.raises(RuntimeError, match="cannot be broadcast"):
        tt.broadcast_tensors(tt.ones(3), tt.ones(4))


def test_vander():
    x = tt.tensor([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(tt.vander(x).numpy(), np.vander(x.numpy()))
    np.testing.assert_array_equal(tt.vander(x, N=4, increasing=True).numpy(), np.vander(x.numpy(), 4, True))


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
    assert gradcheck(call, tuple(_f64(*shapes)))


def test_addmm_beta_zero_ignores_nan():
    out = tt.addmm(tt.full((2, 2), math.nan), tt.eye(2), tt.eye(2), beta=0)
    assert out.tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert tt.mv(tt.eye(2), tt.tensor([3.0, 4.0])).tolist() == [3.0, 4.0]


# ------------------------------------------------------------------ random_, erfinv
def test_random_():
    g = tt.Generator().manual_seed(0)
    x = tt.empty(2000).random_(3, 7, generator=g)
    assert set(x.tolist()) == {3.0, 4.0, 5.0, 6.0}
    y = tt.empty(1000, dtype=tt.int64).random_(5)
    assert y.min().item() == 0 and y.max().item() == 4
    z = tt.empty(1000, dtype=tt.float16).random_()
    assert z.min().item() >= 0 and z.max().item() <= 2 ** 11
    assert tt.empty(500, dtype=tt.bool).random_().float().mean().item() == pytest.approx(0.5, abs=0.1)
    with pytest.raises(RuntimeError, match="from=5 >= to=5"):
        tt.empty(2).random_(5, 5)


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


# ------------------------------------------------------------------ compile / jit
def test_compile_and_jit_pass_through():
    lin = tt.nn.Linear(2, 2)
    assert tt.compile(lin) is lin
    assert tt.compile(lin, mode="max-autotune", fullgraph=True, dynamic=False, backend="inductor") is lin

    @tt.compile
    def f(x):
        return x * 2

    @tt.compile(mode="reduce-overhead")
    def g(x):
        return x + 1

    assert f(tt.ones(1)).item() == 2.0 and g(tt.ones(1)).item() == 2.0
    assert lin.compile(mode="default") is None
    assert tt.compiler.is_compiling() is False
    assert tt.jit.script(lin) is lin and tt.jit.trace(f, (tt.ones(1),)) is f
    assert tt.jit.is_scripting() is False and tt.jit.annotate(int, 3) == 3
    assert tt.jit.ignore(f) is f and tt.jit.unused()(f) is f
    with pytest.raises(NotImplementedError, match="TorchScript"):
        tt.jit.save(lin, "m.pt")


def test_clone_diff_histc_bincount_are_functions_and_methods():
    x = tt.tensor([1.0, 4.0, 9.0])
    assert tt.clone(x).tolist() == x.tolist() and tt.clone(x) is not x
    assert x.diff().tolist() == [3.0, 5.0]
    assert x.histc(bins=3, min=0, max=9).tolist() == [1.0, 1.0, 1.0]
    assert tt.tensor([0, 2, 2]).bincount().tolist() == [1, 0, 2]
