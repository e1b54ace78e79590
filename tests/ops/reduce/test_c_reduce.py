"""tinytorch._C reductions, scans, softmax and normalization vs float64 numpy references."""
import numpy as np
import pytest

from tinytorch import _C

BOOL, UINT8, INT32, INT64, F16, BF16, F32, F64 = range(8)
FLOATS = [F32, F16, BF16, F64]
TOL = {F64: 1e-10, F32: 1e-5, F16: 2e-3, BF16: 1.6e-2}
NP = {BOOL: np.bool_, UINT8: np.uint8, INT32: np.int32, INT64: np.int64, F16: np.float16, F32: np.float32, F64: np.float64}

rng = np.random.default_rng(0)


def tt(a, code=None):
    """numpy array -> TensorImpl of dtype `code` (bfloat16 via a float32 round trip)."""
    a = np.asarray(a)
    if code is None:
        return _C.from_numpy(a)
    if code == BF16:
        return _C.from_numpy(a.astype(np.float32)).to_dtype(BF16)
    return _C.from_numpy(a.astype(NP[code]))


def to_np(t):
    if t.dtype_code == BF16:
        t = t.to_dtype(F32)
    return t.numpy()


def rounded(a, code):
    """The float64 values a tensor of dtype `code` actually holds."""
    return to_np(tt(a, code)).astype(np.float64)


def close(got, want, code, scale=1.0):
    got = to_np(got).astype(np.float64)
    tol = TOL[code] * scale
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def ndims(d):
    return None if d is None else tuple(d)


DIMS = [None, [], [0], [-1], [0, 2], [1, 2], [2, 0, 1]]


def variants(a, code):
    """(tensor, float64 reference) pairs: contiguous, transposed, sliced."""
    base = tt(a, code)
    ref = rounded(a, code)
    yield base, ref
    yield base.transpose(0, 2), np.swapaxes(ref, 0, 2)
    yield base.slice(1, 0, None, 2), ref[:, ::2]


@pytest.mark.parametrize("code", FLOATS)
@pytest.mark.parametrize("dims", DIMS)
@pytest.mark.parametrize("keepdim", [False, True])
def test_float_reductions(code, dims, keepdim):
    a = rng.standard_normal((3, 4, 5))
    for t, r in variants(a, code):
        ax = None if not dims else tuple(dims)
        if ax is not None and max(ax) >= r.ndim:
            continue
        nd = lambda f, **kw: f(r, axis=ax, keepdims=keepdim, **kw)
        close(_C.sum(t, dims, keepdim), nd(np.sum), code)
        close(_C.mean(t, dims, keepdim), nd(np.mean), code)
        close(_C.amax(t, dims, keepdim), nd(np.max), code)
        close(_C.amin(t, dims, keepdim), nd(np.min), code)
        close(_C.var(t, dims, 1.0, keepdim), nd(np.var, ddof=1), code, 2)
        close(_C.std(t, dims, 0.0, keepdim), nd(np.std), code, 2)
        m = nd(np.max)
        mk = np.max(r, axis=ax, keepdims=True)
        lse = np.log(np.sum(np.exp(r - mk), axis=ax, keepdims=keepdim)) + m
        close(_C.logsumexp(t, dims, keepdim), lse, code, 2)
        close(_C.norm(t, 2.0, dims, keepdim), np.sqrt(np.sum(r * r, axis=ax, keepdims=keepdim)), code, 2)
        assert _C.sum(t, dims, keepdim).dtype_code == code


@pytest.mark.parametrize("code", FLOATS)
def test_prod_and_norms(code):
    a = rng.uniform(0.5, 1.5, (4, 6))
    r = rounded(a, code)
    t = tt(a, code)
    close(_C.prod(t, [1]), r.prod(1), code, 4)
    close(_C.prod(t.transpose(0, 1), [0]), r.prod(1), code, 4)
    b = rng.standard_normal((4, 6))
    b[0, :3] = 0
    rb, tb = rounded(b, code), tt(b, code)
    for p, want in [(1.0, np.abs(rb).sum(1)), (np.inf, np.abs(rb).max(1)), (-np.inf, np.abs(rb).min(1)),
                    (0.0, (rb != 0).sum(1).astype(float)), (3.0, (np.abs(rb) ** 3).sum(1) ** (1 / 3)),
                    (0.5, (np.abs(rb) ** 0.5).sum(1) ** 2)]:
        close(_C.norm(tb, p, [1]), want, code, 4)
    close(_C.norm(tb), np.sqrt((rb * rb).sum()), code, 2)


def test_var_correction_and_var_mean():
    a = rng.standard_normal((5, 7))
    t = tt(a)
    for c in [0.0, 1.0, 2.0]:
        np.testing.assert_allclose(_C.var(t, [1], c).numpy(), a.var(1, ddof=c), rtol=1e-12)
    v, m = _C.var_mean(t, [0], 1.0, True)
    np.testing.assert_allclose(v.numpy(), a.var(0, ddof=1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(m.numpy(), a.mean(0, keepdims=True), rtol=1e-12)
    # correction >= n: division by zero -> inf, as PyTorch
    assert np.isinf(_C.var(tt(np.array([1.0, 2.0])), None, 2.0).item())


def test_broadcast_input():
    a = rng.standard_normal((1, 5))
    t = tt(a).expand([4, 5])
    full = np.broadcast_to(a, (4, 5))
    np.testing.assert_allclose(_C.sum(t, [0]).numpy(), full.sum(0), rtol=1e-12)
    np.testing.assert_allclose(_C.softmax(t, 0).numpy(), np.full((4, 5), 0.25), rtol=1e-12)
    np.testing.assert_allclose(_C.cumsum(t, 0).numpy(), np.cumsum(full, 0), rtol=1e-12)


def test_large_float32_sum_accuracy_and_threads():
    a = rng.standard_normal(3_000_001).astype(np.float32) + 1.0
    t = tt(a)
    want = a.astype(np.float64).sum()
    for nt in (1, 2):
        _C.set_num_threads(nt)
        got = _C.sum(t).item()
        assert abs(got - want) <= 1e-6 * abs(want)
    _C.set_num_threads(2)
    b = rng.standard_normal((3, 400_000)).astype(np.float32)
    np.testing.assert_allclose(_C.sum(tt(b), [1]).numpy(), b.astype(np.float64).sum(1), rtol=1e-5)
    np.testing.assert_allclose(_C.var(tt(b), [1]).numpy(), b.astype(np.float64).var(1, ddof=1), rtol=1e-5)
    np.testing.assert_allclose(_C.amax(tt(b), [1]).numpy(), b.max(1))


@pytest.mark.parametrize("code", [BOOL, UINT8, INT32, INT64])
def test_integer_reductions(code):
    a = rng.integers(0, 5, (4, 6)).astype(NP[code])
    t = tt(a)
    s = _C.sum(t, [1])
    assert s.dtype_code == INT64
    np.testing.assert_array_equal(s.numpy(), a.astype(np.int64).sum(1))
    p = _C.prod(t, [0])
    assert p.dtype_code == INT64
    np.testing.assert_array_equal(p.numpy(), a.astype(np.int64).prod(0))
    mx = _C.amax(t, [0])
    assert mx.dtype_code == code
    np.testing.assert_array_equal(mx.numpy(), a.max(0))
    np.testing.assert_array_equal(_C.amin(t.transpose(0, 1), [1]).numpy(), a.min(0))
    al, an = _C.all(t, [1]), _C.any(t, None)
    logical = UINT8 if code == UINT8 else BOOL          # PyTorch's legacy rule: uint8 in, uint8 out
    assert al.dtype_code == logical and an.dtype_code == logical
    np.testing.assert_array_equal(al.numpy(), a.astype(bool).all(1))
    assert an.item() == bool(a.astype(bool).any())
    c = _C.cumsum(t, 1)
    assert c.dtype_code == INT64
    np.testing.assert_array_equal(c.numpy(), np.cumsum(a.astype(np.int64), 1))
    # sum with an explicit dtype
    s32 = _C.sum(t, [1], False, F64)
    assert s32.dtype_code == F64
    np.testing.assert_allclose(s32.numpy(), a.astype(np.float64).sum(1))
    lse = _C.logsumexp(t, [1])
    assert lse.dtype_code == F32
    np.testing.assert_allclose(lse.numpy(), np.log(np.exp(a.astype(np.float64)).sum(1)), rtol=1e-5)


def test_all_any_floats():
    a = np.array([[0.0, 1.0, np.nan], [2.0, 3.0, 4.0], [0.0, 0.0, 0.0]])
    np.testing.assert_array_equal(_C.all(tt(a), [1]).numpy(), [False, True, False])
    np.testing.assert_array_equal(_C.any(tt(a), [1]).numpy(), [True, True, False])
    np.testing.assert_array_equal(_C.any(tt(a, F16), [0], True).numpy(), [[True, True, True]])


def test_empty_reductions():
    e = tt(np.zeros((0, 3)))
    np.testing.assert_array_equal(_C.sum(e, [0]).numpy(), np.zeros(3))
    np.testing.assert_array_equal(_C.prod(e, [0]).numpy(), np.ones(3))
    assert np.isnan(_C.mean(e, [0]).numpy()).all()
    assert _C.all(e, None).item() is True and _C.any(e, None).item() is False
    assert _C.amax(e, [1]).shape == (0,)
    assert _C.logsumexp(e, [0]).numpy().tolist() == [-np.inf] * 3
    with pytest.raises(IndexError, match="amax"):
        _C.amax(e, [0])
    with pytest.raises(IndexError, match="amin"):
        _C.amin(e, None)
    with pytest.raises(IndexError, match="max"):
        _C.max_all(e)
    with pytest.raises(IndexError, match="max"):
        _C.max_dim(e, 0)
    with pytest.raises(IndexError, match="argmax"):
        _C.argmax(e)


def test_zero_dim():
    s = tt(np.array(3.5))
    assert _C.sum(s).item() == 3.5 and _C.sum(s).shape == ()
    assert _C.amax(s, [0]).item() == 3.5
    v, i = _C.max_dim(s, 0)
    assert v.item() == 3.5 and i.item() == 0
    assert _C.softmax(s, 0).item() == 1.0
    assert _C.cumsum(s, -1).item() == 3.5


@pytest.mark.parametrize("code", FLOATS + [INT32, INT64])
def test_max_min_dim(code):
    a = rng.integers(-3, 4, (5, 7)).astype(np.float64)  # many ties
    t = tt(a, code)
    for dim in [0, 1, -1]:
        for keepdim in [False, True]:
            v, i = _C.max_dim(t, dim, keepdim)
            assert i.dtype_code == INT64 and v.dtype_code == code
            np.testing.assert_array_equal(i.numpy(), np.argmax(a, dim, keepdims=keepdim))  # numpy: first index
            np.testing.assert_array_equal(to_np(v), np.max(a, dim, keepdims=keepdim))
            v, i = _C.min_dim(t.transpose(0, 1), dim, keepdim)
            np.testing.assert_array_equal(i.numpy(), np.argmin(a.T, dim, keepdims=keepdim))
            np.testing.assert_array_equal(to_np(v), np.min(a.T, dim, keepdims=keepdim))
    assert _C.argmax(t).item() == np.argmax(a)
    assert _C.argmin(t).item() == np.argmin(a)
    assert _C.argmax(t, None, True).shape == (1, 1)
    np.testing.assert_array_equal(_C.argmax(t, 1).numpy(), np.argmax(a, 1))
    assert to_np(_C.max_all(t)) == a.max() and to_np(_C.min_all(t)) == a.min()


def test_nan_propagation():
    a = np.array([[1.0, np.nan, 3.0, np.nan], [1.0, 5.0, 5.0, 2.0]])
    for code in [F32, F64, F16]:
        t = tt(a, code)
        mx = to_np(_C.amax(t, [1]))
        assert np.isnan(mx[0]) and mx[1] == 5
        assert np.isnan(to_np(_C.amin(t, [1]))[0])
        v, i = _C.max_dim(t, 1)
        assert np.isnan(to_np(v)[0]) and i.numpy().tolist() == [1, 1]
        v, i = _C.min_dim(t, 1)
        assert i.numpy().tolist() == [1, 0]
        assert np.isnan(_C.max_all(t).item())
        assert _C.argmax(t).item() == 1
    big = np.ones(100_000, dtype=np.float32)
    big[77_777] = np.nan
    assert np.isnan(_C.amax(tt(big)).item()) and np.isnan(_C.amin(tt(big)).item())


@pytest.mark.parametrize("code", FLOATS)
def test_cumsum_cumprod(code):
    a = rng.uniform(0.5, 1.5, (3, 4, 5))
    r = rounded(a, code)
    t = tt(a, code)
    for dim in range(-3, 3):
        close(_C.cumsum(t, dim), np.cumsum(r, dim), code, 4)
        close(_C.cumprod(t, dim), np.cumprod(r, dim), code, 4)
        close(_C.cumsum(t.transpose(0, 2), dim), np.cumsum(np.swapaxes(r, 0, 2), dim), code, 4)
    assert _C.cumsum(t, 0).dtype_code == code
    assert _C.cumsum(t, 0, F64).dtype_code == F64


def softmax_ref(r, dim):
    e = np.exp(r - r.max(dim, keepdims=True))
    return e / e.sum(dim, keepdims=True)


@pytest.mark.parametrize("code", FLOATS)
def test_softmax(code):
    a = rng.standard_normal((3, 4, 37)) * 3
    for t, r in variants(a, code):
        for dim in range(-3, 3):
            sm = softmax_ref(r, dim)
            close(_C.softmax(t, dim), sm, code)
            close(_C.log_softmax(t, dim), np.log(sm), code, 4)
            assert _C.softmax(t, dim).dtype_code == code


def test_softmax_stability_and_masks():
    a = np.array([[1000.0, 1001.0, 1002.0], [-np.inf, 0.0, -np.inf], [-1e4, 0.0, 50.0]], dtype=np.float32)
    for code in [F32, F64, BF16]:
        for dim, arr in [(1, a), (0, a.T.copy())]:
            got = to_np(_C.softmax(tt(arr, code), dim)).astype(np.float64)
            got = got if dim == 1 else got.T
            assert np.isfinite(got).all()
            assert got[1].tolist() == [0.0, 1.0, 0.0]
            r0 = rounded(a[0], code)  # bfloat16 rounds 1001 to 1000
            np.testing.assert_allclose(got[0], softmax_ref(r0, 0), rtol=TOL[code] * 2)
            ls = to_np(_C.log_softmax(tt(arr, code), dim)).astype(np.float64)
            ls = ls if dim == 1 else ls.T
            np.testing.assert_allclose(ls[0], np.log(softmax_ref(r0, 0)), rtol=TOL[code] * 4,
                                       atol=TOL[code] * 4)
    n = np.array([[1.0, np.nan, 2.0]], dtype=np.float32)
    assert np.isnan(_C.softmax(tt(n), 1).numpy()).all()
    # integer input with dtype=
    i = np.array([[1, 2, 3]], dtype=np.int64)
    np.testing.assert_allclose(_C.softmax(tt(i), 1, F32).numpy(), softmax_ref(i.astype(float), 1), rtol=1e-6)


def test_softmax_large_rows_threads():
    a = rng.standard_normal((64, 4096)).astype(np.float32)
    want = softmax_ref(a.astype(np.float64), 1)
    for nt in (1, 2):
        _C.set_num_threads(nt)
        np.testing.assert_allclose(_C.softmax(tt(a), 1).numpy(), want, rtol=1e-5, atol=1e-9)
        np.testing.assert_allclose(_C.softmax(tt(a.T.copy()), 0).numpy(), want.T, rtol=1e-5, atol=1e-9)
    _C.set_num_threads(2)


@pytest.mark.parametrize("code", FLOATS)
def test_softmax_backward(code):
    a = rng.standard_normal((4, 5, 6))
    g = rng.standard_normal((4, 5, 6))
    for dim in [0, 1, -1]:
        out = _C.softmax(tt(a, code), dim)
        o = to_np(out).astype(np.float64)
        gr = rounded(g, code)
        want = o * (gr - (gr * o).sum(dim, keepdims=True))
        close(_C.softmax_backward(tt(g, code), out, dim), want, code, 4)
        lout = _C.log_softmax(tt(a, code), dim)
        lo = to_np(lout).astype(np.float64)
        want = gr - np.exp(lo) * gr.sum(dim, keepdims=True)
        close(_C.log_softmax_backward(tt(g, code), lout, dim), want, code, 4)
    # non-contiguous grad
    out = _C.softmax(tt(a, code), 2)
    gt = tt(np.ascontiguousarray(g.transpose(0, 2, 1)), code).transpose(1, 2)
    o = to_np(out).astype(np.float64)
    gr = rounded(g, code)
    close(_C.softmax_backward(gt, out, 2), o * (gr - (gr * o).sum(2, keepdims=True)), code, 4)


def ln_ref(x, w, b, eps, k):
    ax = tuple(range(x.ndim - k, x.ndim))
    mu = x.mean(ax, keepdims=True)
    rstd = 1 / np.sqrt(((x - mu) ** 2).mean(ax, keepdims=True) + eps)
    y = (x - mu) * rstd
    if w is not None:
        y = y * w
    if b is not None:
        y = y + b
    return y, mu, rstd


def ln_backward_ref(g, x, mu, rstd, w, k):
    ax = tuple(range(x.ndim - k, x.ndim))
    xhat = (x - mu) * rstd
    gh = g * w if w is not None else g
    gx = rstd * (gh - gh.mean(ax, keepdims=True) - xhat * (gh * xhat).mean(ax, keepdims=True))
    lead = tuple(range(x.ndim - k))
    return gx, (g * xhat).sum(lead), g.sum(lead)


@pytest.mark.parametrize("code", FLOATS)
@pytest.mark.parametrize("affine", [False, True])
def test_layer_norm(code, affine):
    x = rng.standard_normal((3, 4, 8)) * 2 + 1
    w = rng.standard_normal((4, 8)) if affine else None
    b = rng.standard_normal((4, 8)) if affine else None
    xr = rounded(x, code)
    wr = rounded(w, code) if affine else None
    br = rounded(b, code) if affine else None
    y, mu, rs = _C.layer_norm(tt(x, code), [4, 8], tt(w, code) if affine else None, tt(b, code) if affine else None, 1e-5)
    ry, rmu, rrs = ln_ref(xr, wr, br, 1e-5, 2)
    close(y, ry, code, 4)
    assert mu.shape == (3, 1, 1) and rs.shape == (3, 1, 1)
    assert mu.dtype_code == (F64 if code == F64 else F32)
    close(mu, rmu, code, 2)
    close(rs, rrs, code, 2)
    # normalized_shape as an int, non-contiguous x
    xt = tt(np.ascontiguousarray(x.transpose(1, 0, 2)), code).transpose(0, 1)
    y2, _, _ = _C.layer_norm(xt, 1, None, None, 1e-5)
    close(y2, ln_ref(xr, None, None, 1e-5, 1)[0], code, 4)
    # backward
    g = rng.standard_normal(x.shape)
    gr = rounded(g, code)
    gx, gw, gb = _C.layer_norm_backward(tt(g, code), tt(x, code), mu, rs, tt(w, code) if affine else None)
    rgx, rgw, rgb = ln_backward_ref(gr, xr, rmu, rrs, wr, 2)
    close(gx, rgx, code, 8)
    if affine:
        close(gw, rgw, code, 8)
        close(gb, rgb, code, 8)
    else:
        assert gw is None and gb is None


def test_layer_norm_backward_finite_difference():
    x = rng.standard_normal((2, 5))
    w, b = rng.standard_normal(5), rng.standard_normal(5)
    g = rng.standard_normal((2, 5))
    loss = lambda xx, ww, bb: (ln_ref(xx, ww, bb, 1e-5, 1)[0] * g).sum()
    _, mu, rs = _C.layer_norm(tt(x), 1, tt(w), tt(b), 1e-5)
    gx, gw, gb = _C.layer_norm_backward(tt(g), tt(x), mu, rs, tt(w))
    h = 1e-6
    for arr, got in [(x, gx), (w, gw), (b, gb)]:
        num = np.zeros_like(arr)
        for idx in np.ndindex(arr.shape):
            arr[idx] += h
            up = loss(x, w, b)
            arr[idx] -= 2 * h
            dn = loss(x, w, b)
            arr[idx] += h
            num[idx] = (up - dn) / (2 * h)
        np.testing.assert_allclose(got.numpy(), num, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("code", FLOATS)
def test_rms_norm(code):
    x = rng.standard_normal((6, 16))
    w = rng.standard_normal(16)
    xr, wr = rounded(x, code), rounded(w, code)
    y, rs = _C.rms_norm(tt(x, code), [16], tt(w, code), 1e-6)
    rrs = 1 / np.sqrt((xr * xr).mean(1, keepdims=True) + 1e-6)
    close(y, xr * rrs * wr, code, 4)
    close(rs, rrs, code, 2)
    assert rs.shape == (6, 1)
    g = rng.standard_normal(x.shape)
    gr = rounded(g, code)
    gx, gw = _C.rms_norm_backward(tt(g, code), tt(x, code), rs, tt(w, code))
    xhat = xr * rrs
    gh = gr * wr
    close(gx, rrs * (gh - xhat * (gh * xhat).mean(1, keepdims=True)), code, 8)
    close(gw, (gr * xhat).sum(0), code, 8)
    y2, _ = _C.rms_norm(tt(x, code), 1)
    close(y2, xr * rrs, code, 4)
    gx2, gw2 = _C.rms_norm_backward(tt(g, code), tt(x, code), rs)
    assert gw2 is None
    close(gx2, rrs * (gr - xhat * (gr * xhat).mean(1, keepdims=True)), code, 8)


# ------------------------------------------------------------------ bad inputs

def test_mean_of_integers_is_type_error():
    with pytest.raises(TypeError, match="int64"):
        _C.mean(tt(np.arange(4)))
    np.testing.assert_allclose(_C.mean(tt(np.arange(4)), None, False, F32).item(), 1.5)


def test_float_only_ops_reject_integers():
    i = tt(np.arange(6).reshape(2, 3))
    for f in [lambda: _C.var(i), lambda: _C.std(i), lambda: _C.norm(i), lambda: _C.softmax(i, 0),
              lambda: _C.log_softmax(i, 1), lambda: _C.layer_norm(i, 1)]:
        with pytest.raises(TypeError):
            f()


def test_bad_dims():
    t = tt(np.zeros((2, 3)))
    with pytest.raises(IndexError, match="out of range"):
        _C.sum(t, [2])
    with pytest.raises(IndexError):
        _C.softmax(t, -3)
    with pytest.raises(IndexError):
        _C.max_dim(t, 5)
    with pytest.raises(IndexError):
        _C.cumsum(t, 2)
    with pytest.raises(RuntimeError, match="multiple times"):
        _C.sum(t, [0, -2])


def test_bad_norm_arguments():
    x = tt(np.zeros((2, 3)))
    with pytest.raises(RuntimeError, match="normalized_shape"):
        _C.layer_norm(x, [4])
    with pytest.raises(RuntimeError, match="weight"):
        _C.layer_norm(x, [3], tt(np.ones(4)))
    with pytest.raises(ValueError):
        _C.rms_norm(x, 3)
    with pytest.raises(RuntimeError, match="same shape"):
        _C.softmax_backward(tt(np.zeros((2, 3))), tt(np.zeros((3, 2))), 0)
    with pytest.raises(TypeError):
        _C.softmax_backward(tt(np.zeros((2, 3))), tt(np.zeros((2, 3), np.float32)), 0)
    with pytest.raises(RuntimeError, match="same shape"):
        _C.layer_norm_backward(tt(np.zeros((2, 2))), x, tt(np.zeros(2)), tt(np.zeros(2)))
