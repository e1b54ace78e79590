"""torch._foreach_* (tinytorch/_composites/foreach.py): every function against per-tensor float64 numpy
references on every float dtype, with non-contiguous tensors in the list; every operand form PyTorch's
overloads accept (a number, a list of numbers, a list of tensors, a 0-d tensor, a 1-D tensor of numbers);
in-place forms returning None and writing the list's own tensors; autograd through the out-of-place forms
and the per-tensor errors of the in-place ones; PyTorch's errors for mismatched lists and wrong forms."""
import math

import numpy as np
import pytest

import tinytorch as tt
from support.numeric import FLOAT_DTYPES, TOL, assert_close, make, to_numpy
from tinytorch._composites import foreach as fe

SHAPES_LAYOUTS = [((4, 5), "transposed"), ((3,), "contiguous"), ((2, 6), "sliced"), ((), "contiguous")]


def _list(dtype, low=-2.0, high=2.0, seed=0):
    """A list of tensors of several shapes, the first and third non-contiguous, and their float64 values."""
    pairs = [make(s, dtype, layout, low, high, seed=seed + i) for i, (s, layout) in enumerate(SHAPES_LAYOUTS)]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def _check(outs, refs, dtype, what):
    assert isinstance(outs, list) and len(outs) == len(refs)
    for i, (o, r) in enumerate(zip(outs, refs)):
        r = np.asarray(r, dtype=np.float64)
        assert o.dtype.name == dtype and tuple(o.shape) == r.shape, (what, i, o.dtype, o.shape)
        rtol, atol = TOL[dtype]
        assert_close(o, r, dtype, tol=(rtol, atol * max(1.0, float(np.abs(r).max()) if r.size else 1.0)),
                     what=f"{what}[{i}]")


def _check_inplace(name, dtype, args, kwargs, expected, seed=0, low=-2.0, high=2.0):
    """The in-place form returns None, keeps the list's tensors (identity and storage) and gives the
    out-of-place form's values."""
    xs, _ = _list(dtype, low, high, seed)
    ptrs = [x.data_ptr() for x in xs]
    kept = list(xs)
    assert getattr(fe, name + "_")(xs, *args, **kwargs) is None
    assert all(a is b for a, b in zip(xs, kept)) and [x.data_ptr() for x in xs] == ptrs
    for x, e in zip(xs, expected):
        np.testing.assert_array_equal(to_numpy(x), to_numpy(e), err_msg=name + "_")


# ------------------------------------------------------------------ unary
UNARY = {   # name: (numpy reference, input range)
    "neg": (np.negative, (-2.0, 2.0)),
    "abs": (np.abs, (-2.0, 2.0)),
    "sign": (np.sign, (-2.0, 2.0)),
    "sqrt": (np.sqrt, (0.1, 3.0)),
    "exp": (np.exp, (-2.0, 2.0)),
    "reciprocal": (lambda x: 1.0 / x, (0.5, 2.0)),
}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name, dtype):
    ref, (low, high) = UNARY[name]
    xs, rs = _list(dtype, low, high)
    outs = getattr(fe, "_foreach_" + name)(xs)
    _check(outs, [ref(r) for r in rs], dtype, name)
    _check_inplace("_foreach_" + name, dtype, (), {}, outs, low=low, high=high)


# ------------------------------------------------------------------ binary, in every operand form
BINARY = {   # name: (numpy reference, input range, forms; alpha for add and sub)
    "add": (lambda a, b: a + b, (-2.0, 2.0), ("scalar", "scalars", "tensors", "tensor")),
    "sub": (lambda a, b: a - b, (-2.0, 2.0), ("scalar", "scalars", "tensors")),
    "mul": (lambda a, b: a * b, (-2.0, 2.0), ("scalar", "scalars", "tensors", "tensor")),
    "div": (lambda a, b: a / b, (-2.0, 2.0), ("scalar", "scalars", "tensors", "tensor")),
    "maximum": (np.maximum, (-2.0, 2.0), ("scalar", "scalars", "tensors")),
    "minimum": (np.minimum, (-2.0, 2.0), ("scalar", "scalars", "tensors")),
    "clamp_min": (np.maximum, (-2.0, 2.0), ("scalar", "scalars", "tensors")),
    "clamp_max": (np.minimum, (-2.0, 2.0), ("scalar", "scalars", "tensors")),
    "pow": (np.power, (0.5, 2.0), ("scalar", "scalars", "tensors")),
}
SCALARS = [0.5, -1.25, 2.0, 1.5]


def _operand(form, dtype, xs):
    """(operand, its float64 values per tensor of the list)."""
    if form == "scalar":
        return 1.5, [1.5] * len(xs)
    if form == "scalars":
        return SCALARS, SCALARS
    if form == "tensor":
        t = tt.tensor(0.75, dtype=getattr(tt, dtype))
        return t, [0.75] * len(xs)
    others, refs = _list(dtype, 0.5, 2.0, seed=10)   # positive: divisors and exponents
    return others, refs


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name,form", [(n, f) for n in sorted(BINARY) for f in BINARY[n][2]])
def test_binary(name, form, dtype):
    ref, (low, high), _ = BINARY[name]
    xs, rs = _list(dtype, low, high)
    other, other_refs = _operand(form, dtype, xs)
    outs = getattr(fe, "_foreach_" + name)(xs, other)
    _check(outs, [ref(r, o) for r, o in zip(rs, other_refs)], dtype, f"{name}/{form}")
    _check_inplace("_foreach_" + name, dtype, (other,), {}, outs, low=low, high=high)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name,sign", [("add", 1.0), ("sub", -1.0)])
def test_add_sub_alpha(name, sign, dtype):
    xs, rs = _list(dtype)
    others, ors = _list(dtype, seed=7)
    outs = getattr(fe, "_foreach_" + name)(xs, others, alpha=-0.5)
    _check(outs, [r + sign * -0.5 * o for r, o in zip(rs, ors)], dtype, name)
    _check_inplace("_foreach_" + name, dtype, (others,), {"alpha": -0.5}, outs)
    zero_d = tt.tensor(2.0, dtype=getattr(tt, dtype))
    if name == "add":   # add.Tensor takes alpha too
        _check(fe._foreach_add(xs, zero_d, alpha=3), [r + 6.0 for r in rs], dtype, "add/tensor/alpha")


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_pow_scalar_base(dtype):
    xs, rs = _list(dtype, -1.0, 2.0)
    _check(fe._foreach_pow(2.0, xs), [np.power(2.0, r) for r in rs], dtype, "pow(2, x)")
    _check(fe._foreach_pow(1.5, exponent=xs), [np.power(1.5, r) for r in rs], dtype, "pow(1.5, x)")


# ------------------------------------------------------------------ addcmul, addcdiv, lerp
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name", ["addcmul", "addcdiv"])
@pytest.mark.parametrize("form", ["default", "scalar", "scalars", "tensor"])
def test_addcmul_addcdiv(name, form, dtype):
    xs, rs = _list(dtype)
    t1, r1 = _list(dtype, seed=4)
    t2, r2 = _list(dtype, 0.5, 2.0, seed=8)
    value, values = {"default": (None, [1.0] * 4), "scalar": (-0.5, [-0.5] * 4), "scalars": (SCALARS, SCALARS),
                     "tensor": (tt.tensor(SCALARS), SCALARS)}[form]
    args = (t1, t2) if value is None else (t1, t2, value)
    outs = getattr(fe, "_foreach_" + name)(xs, *args)
    op = np.multiply if name == "addcmul" else np.divide
    _check(outs, [r + v * op(a, b) for r, a, b, v in zip(rs, r1, r2, values)], dtype, f"{name}/{form}")
    _check_inplace("_foreach_" + name, dtype, args, {}, outs)
    if value is not None:   # value by keyword
        _check(getattr(fe, "_foreach_" + name)(xs, t1, t2, value=value), [to_numpy(o) for o in outs], dtype, name)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("form", ["scalar", "scalars", "tensors"])
def test_lerp(form, dtype):
    xs, rs = _list(dtype)
    ends, es = _list(dtype, seed=5)
    if form == "tensors":
        weight, ws = _list(dtype, 0.0, 1.0, seed=9)
    else:
        weight, ws = (0.25, [0.25] * 4) if form == "scalar" else (SCALARS, SCALARS)
    outs = fe._foreach_lerp(xs, ends, weight)
    _check(outs, [r + w * (e - r) for r, e, w in zip(rs, es, ws)], dtype, f"lerp/{form}")
    _check_inplace("_foreach_lerp", dtype, (ends, weight), {}, outs)


# ------------------------------------------------------------------ copy_, zero_, norm
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_copy_and_zero(dtype):
    xs, _ = _list(dtype)
    srcs, ss = _list(dtype, seed=3)
    kept = list(xs)
    assert fe._foreach_copy_(xs, srcs) is None
    assert all(a is b for a, b in zip(xs, kept))
    for x, s in zip(xs, ss):
        np.testing.assert_array_equal(to_numpy(x), s)
    assert fe._foreach_copy_(xs, [s.double() for s in srcs], non_blocking=True) is None   # casts, as copy_
    assert all(x.dtype.name == dtype for x in xs)
    assert fe._foreach_zero_(xs) is None
    assert all(not to_numpy(x).any() for x in xs)
    assert not hasattr(fe, "_foreach_copy") and not hasattr(fe, "_foreach_zero")   # in place only, as torch


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("ord", [2, 1, math.inf, 3.0])
@pytest.mark.parametrize("layout", ["contiguous", "mixed"])
def test_norm(ord, layout, dtype):
    if layout == "mixed":
        xs, rs = _list(dtype)
    else:   # the multi-tensor kernel's case for ord 2: contiguous tensors of one dtype
        shapes = [(4, 5), (3,), (7, 1, 2), ()] + ([] if ord == math.inf else [(0,)])   # inf: no identity
        pairs = [make(s, dtype, seed=i) for i, s in enumerate(shapes)]
        xs, rs = [p[0] for p in pairs], [p[1] for p in pairs]
    norms = fe._foreach_norm(xs, ord)
    refs = [np.linalg.norm(r.ravel(), ord) if r.size else 0.0 for r in rs]
    assert all(n.dim() == 0 for n in norms)
    _check(norms, refs, dtype, f"norm/{ord}")


def test_norm_dtype_and_mixed_lists():
    bf, bref = make((64, 33), "bfloat16", seed=1)
    f32, fref = make((5, 6), "float32", "transposed", seed=2)
    f64, dref = make((9,), "float64", seed=3)
    norms = fe._foreach_norm([bf, f32, f64])
    assert [n.dtype for n in norms] == [tt.bfloat16, tt.float32, tt.float64]
    for n, r in zip(norms, [bref, fref, dref]):
        assert_close(n, np.linalg.norm(r.ravel()), n.dtype.name)
    wide = fe._foreach_norm([bf, f32], dtype=tt.float32)   # computed in float32, as torch's dtype=
    assert [n.dtype for n in wide] == [tt.float32, tt.float32]
    assert_close(wide[0], np.linalg.norm(bref.ravel()), "float32")
    assert_close(fe._foreach_norm([bf], ord=2.0)[0], np.linalg.norm(bref.ravel()), "bfloat16")


def test_norm_uses_the_multi_tensor_kernel_where_it_applies(monkeypatch):
    calls = []
    kernel = fe._C.multi_sum_squares
    monkeypatch.setattr(fe._C, "multi_sum_squares", lambda ts: calls.append(len(ts)) or kernel(ts))
    xs = [make(s, dt, seed=i)[0] for i, (s, dt) in enumerate([((4, 5), "float32"), ((3,), "bfloat16"),
                                                               ((6,), "float32"), ((2, 2), "bfloat16")])]
    strided = make((3, 4), "float32", "transposed", seed=9)[0]
    norms = fe._foreach_norm(xs + [strided])
    assert sorted(calls) == [2, 2]   # one call per dtype; the strided tensor by the per-tensor norm
    for n, x in zip(norms, xs + [strided]):
        assert_close(n, np.linalg.norm(to_numpy(x).ravel()), x.dtype.name)
    calls.clear()
    fe._foreach_norm(xs, 1)
    fe._foreach_norm([x.clone().requires_grad_(True) for x in xs])   # autograd: per tensor
    assert calls == []


def test_norm_is_differentiable():
    xs = [make(s, "float64", seed=i, requires_grad=True)[0] for i, s in enumerate([(3, 4), (5,)])]
    norms = fe._foreach_norm(xs)
    (norms[0] + 2 * norms[1]).backward()
    for x, w, n in zip(xs, (1.0, 2.0), norms):
        assert_close(x.grad, w * to_numpy(x) / float(n), "float64")
    assert tt.autograd.gradcheck(lambda a, b: tuple(fe._foreach_norm([a, b], 3.0)), tuple(xs))


# ------------------------------------------------------------------ autograd
GRADCHECK = {   # the out-of-place forms are the per-tensor ops, recorded by autograd
    "add": lambda a, b: fe._foreach_add([a, b], [b, a], alpha=0.5),
    "sub": lambda a, b: fe._foreach_sub([a, b], [0.5, 2.0]),
    "mul": lambda a, b: fe._foreach_mul([a, b], [b, a]),
    "div": lambda a, b: fe._foreach_div([a, b], tt.tensor(3.0, dtype=tt.float64)),
    "addcmul": lambda a, b: fe._foreach_addcmul([a, b], [b, a], [a, a], 0.5),
    "addcdiv": lambda a, b: fe._foreach_addcdiv([a, b], [b, a], [b + 3.0, a + 3.0], [0.5, -1.0]),
    "lerp": lambda a, b: fe._foreach_lerp([a, b], [b, a], 0.3),
    "pow": lambda a, b: fe._foreach_pow([a + 3.0, b + 3.0], [1.5, 2.0]),
    "exp": lambda a, b: fe._foreach_exp([a, b]),
    "sqrt": lambda a, b: fe._foreach_sqrt([a + 3.0, b + 3.0]),
    "reciprocal": lambda a, b: fe._foreach_reciprocal([a + 3.0, b + 3.0]),
    "maximum": lambda a, b: fe._foreach_maximum([a, b], [b, a + 0.25]),
    "clamp_min": lambda a, b: fe._foreach_clamp_min([a, b], 0.1),
    "neg": lambda a, b: fe._foreach_neg([a, b]),
}


@pytest.mark.parametrize("name", sorted(GRADCHECK))
def test_out_of_place_gradcheck(name):
    a, _ = make((3, 4), "float64", "transposed", seed=1, requires_grad=True)
    b, _ = make((3, 4), "float64", seed=2, requires_grad=True)
    assert tt.autograd.gradcheck(lambda a, b: tuple(GRADCHECK[name](a, b)), (a, b))


INPLACE_ON_LEAF = {   # per-tensor in-place op, foreach in-place call
    "add": (lambda w: w.add_(1.0), lambda ws: fe._foreach_add_(ws, 1.0)),
    "mul": (lambda w: w.mul_(2.0), lambda ws: fe._foreach_mul_(ws, [2.0])),
    "exp": (lambda w: w.exp_(), lambda ws: fe._foreach_exp_(ws)),
    "lerp": (lambda w: w.lerp_(w.detach(), 0.5), lambda ws: fe._foreach_lerp_(ws, [w.detach() for w in ws], 0.5)),
    "addcmul": (lambda w: w.addcmul_(w.detach(), w.detach()),
                lambda ws: fe._foreach_addcmul_(ws, [w.detach() for w in ws], [w.detach() for w in ws])),
    "copy": (lambda w: w.copy_(w.detach()), lambda ws: fe._foreach_copy_(ws, [w.detach() for w in ws])),
    "zero": (lambda w: w.zero_(), lambda ws: fe._foreach_zero_(ws)),
    "maximum": (lambda w: w.copy_(tt.maximum(w.detach(), w.detach())),   # torch has no Tensor.maximum_
                lambda ws: fe._foreach_maximum_(ws, [w.detach() for w in ws])),
}


@pytest.mark.parametrize("name", sorted(INPLACE_ON_LEAF))
def test_inplace_on_leaf_requiring_grad(name):
    per_tensor, foreach = INPLACE_ON_LEAF[name]
    w = tt.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError) as expected:
        per_tensor(w)
    with pytest.raises(RuntimeError) as got:
        foreach([w])
    assert str(got.value) == str(expected.value) and "leaf Variable that requires grad" in str(got.value)
    np.testing.assert_array_equal(to_numpy(w), [1.0, 1.0, 1.0])
    with tt.no_grad():   # an optimizer's step
        assert foreach([w]) is None


def test_inplace_records_autograd_on_non_leaves():
    a = tt.tensor([1.0, 2.0], requires_grad=True)
    b = tt.tensor([3.0], requires_grad=True)
    xs = [a * 1.0, b * 1.0]
    fe._foreach_mul_(xs, [2.0, 3.0])
    fe._foreach_addcmul_(xs, [a, b], [a, b], value=0.5)
    (xs[0].sum() + xs[1].sum()).backward()
    np.testing.assert_allclose(to_numpy(a.grad), 2.0 + to_numpy(a))
    np.testing.assert_allclose(to_numpy(b.grad), 3.0 + to_numpy(b))


# ------------------------------------------------------------------ dtypes and errors
def test_integer_lists_promote_and_refuse_as_per_tensor():
    ints = [tt.tensor([1, 2, 3]), tt.tensor([[4]])]
    outs = fe._foreach_add(ints, 0.5)
    assert [o.dtype for o in outs] == [tt.float32, tt.float32]
    np.testing.assert_allclose(to_numpy(outs[0]), [1.5, 2.5, 3.5])
    assert [o.dtype for o in fe._foreach_mul(ints, 2)] == [tt.int64, tt.int64]
    with pytest.raises(RuntimeError) as expected:
        ints[0].clone().add_(0.5)
    with pytest.raises(RuntimeError) as got:
        fe._foreach_add_([i.clone() for i in ints], 0.5)
    assert str(got.value) == str(expected.value)


def test_mismatched_lists_and_wrong_forms():
    xs = [tt.ones(2), tt.ones(3), tt.ones(1)]
    with pytest.raises(RuntimeError, match=r"_foreach_add: Tensor lists must have the same number of tensors, "
                                           r"got 3 and 2"):
        fe._foreach_add(xs, xs[:2])
    with pytest.raises(RuntimeError, match=r"_foreach_mul_: .*same number of elements as scalar list, got 3 and 2"):
        fe._foreach_mul_(xs, [1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"_foreach_addcmul: .*got 3 and 1"):
        fe._foreach_addcmul(xs, xs, xs[:1])
    with pytest.raises(RuntimeError, match=r"_foreach_addcdiv: .*scalar list, got 3 and 2"):
        fe._foreach_addcdiv(xs, xs, xs, tt.tensor([1.0, 2.0]))
    with pytest.raises(RuntimeError, match=r"_foreach_lerp_: .*got 3 and 4"):
        fe._foreach_lerp_(xs, xs + xs[:1], 0.5)
    with pytest.raises(RuntimeError, match=r"_foreach_copy_: .*got 3 and 2"):
        fe._foreach_copy_(xs, xs[:2])
    with pytest.raises(RuntimeError, match=r"_foreach_norm: Tensor list must have at least one tensor"):
        fe._foreach_norm([])
    with pytest.raises(RuntimeError, match=r"_foreach_mul: scalar tensor `other` expected to be 0 dim but it has "
                                           r"1 dimensions and 2 elements"):
        fe._foreach_mul(xs, tt.ones(2))
    with pytest.raises(TypeError, match=r"_foreach_sub\(\): argument 'other' must be a number or a list of numbers "
                                        r"or a list of Tensors, got a Tensor"):
        fe._foreach_sub(xs, tt.tensor(1.0))
    with pytest.raises(TypeError, match=r"_foreach_lerp\(\): argument 'tensors1' must be a list of Tensors"):
        fe._foreach_lerp(xs, 1.0, 0.5)
    with pytest.raises(TypeError, match=r"_foreach_exp\(\): argument 'self' must be a list or tuple of Tensors"):
        fe._foreach_exp(tt.ones(2))
    with pytest.raises(TypeError, match=r"_foreach_add\(\): missing a required argument: 'other'"):
        fe._foreach_add(xs)


def test_every_function_is_exported_with_a_docstring():
    names = {"add", "sub", "mul", "div", "addcmul", "addcdiv", "lerp", "neg", "sqrt", "abs", "exp", "maximum",
             "minimum", "clamp_min", "clamp_max", "pow", "sign", "reciprocal"}
    expected = {f"_foreach_{n}" for n in names} | {f"_foreach_{n}_" for n in names}
    expected |= {"_foreach_copy_", "_foreach_zero_", "_foreach_norm"}
    assert set(fe.__all__) == expected
    for name in expected:
        fn = getattr(fe, name)
        assert fn.__name__ == name and fn.__doc__ and "Args:" in fn.__doc__
