"""tinytorch._C indexing and sorting ops against numpy references."""
import numpy as np
import pytest

from tinytorch import _C

from support.c_helpers import BF16, BOOL, F16, F32, FLOATS, I32, I64, U8, from_array, random_array, to_np

ALL = FLOATS + [I32, I64, U8]
rng = np.random.default_rng(0)
make = from_array


def rand(shape, code):
    return random_array(rng, shape, code)


def idx(arr):
    return _C.from_numpy(np.asarray(arr, dtype=np.int64))


@pytest.mark.parametrize("code", ALL)
def test_index_select(code):
    x, xn = rand((4, 5, 3), code)
    i = np.array([3, -1, 0, 0, 2])
    for dim in range(3):
        ii = i % xn.shape[dim]
        got = to_np(_C.index_select(x, dim, idx(ii)))
        np.testing.assert_array_equal(got, np.take(xn, ii, axis=dim))
    # non-contiguous input (negative indices raise: PyTorch's index_select doesn't wrap them)
    xt = x.transpose(0, 2)
    got = to_np(_C.index_select(xt, 1, idx([4, 1])))
    np.testing.assert_array_equal(got, np.take(xn.transpose(2, 1, 0), [4, 1], axis=1))


@pytest.mark.parametrize("code", ALL)
def test_gather(code):
    x, xn = rand((4, 6), code)
    ind = rng.integers(0, 6, (3, 5))  # negative indices raise (PyTorch): see test_errors
    got = to_np(_C.gather(x, 1, idx(ind)))
    np.testing.assert_array_equal(got, np.take_along_axis(xn[:3], ind, axis=1))
    ind0 = rng.integers(0, 4, (2, 6))
    got = to_np(_C.gather(x, 0, idx(ind0)))
    np.testing.assert_array_equal(got, np.take_along_axis(xn, ind0, axis=0))
    # transposed input
    ind2 = rng.integers(0, 6, (5, 4))
    got = to_np(_C.gather(x.transpose(0, 1), 0, idx(ind2)))
    np.testing.assert_array_equal(got, np.take_along_axis(xn.T[:, :4], ind2, axis=0))


def scatter_ref(base, dim, ind, src, add):
    out = base.astype(np.float64).copy()
    for pos in np.ndindex(*ind.shape):
        tgt = list(pos)
        tgt[dim] = ind[pos] % base.shape[dim]
        if add:
            out[tuple(tgt)] += src[pos]
        else:
            out[tuple(tgt)] = src[pos]
    return out


@pytest.mark.parametrize("code", FLOATS + [I64, I32])
def test_scatter_and_scatter_add(code):
    base, bn = rand((5, 4), code)
    src, sn = rand((3, 4), code)
    # a permutation per column: no duplicates, so plain scatter is well defined
    ind = np.stack([rng.permutation(5)[:3] for _ in range(4)], axis=1)
    got = to_np(_C.scatter(base, 0, idx(ind), src))
    np.testing.assert_array_equal(got, scatter_ref(bn, 0, ind, sn, False))
    np.testing.assert_array_equal(to_np(base), bn)  # out-of-place leaves self alone
    dup = rng.integers(0, 5, (3, 4))
    got = to_np(_C.scatter_add(base, 0, idx(dup), src))
    tol = {F16: 2e-2, BF16: 1e-1}.get(code, 1e-6)
    np.testing.assert_allclose(got, scatter_ref(bn, 0, dup, sn, True), rtol=tol, atol=tol)
    # in place, scalar value, along dim 1
    b2, b2n = rand((5, 4), code)
    ind1 = np.array([[1], [3], [0], [2], [1]])
    _C.scatter_(b2, 1, idx(ind1), 7.0)
    ref = b2n.copy()
    ref[np.arange(5), ind1[:, 0]] = 7
    np.testing.assert_array_equal(to_np(b2), ref)
    _C.scatter_add_(b2, 1, idx(ind1), _C.full([5, 1], 1.0, code, _C.Device("cpu")))
    ref[np.arange(5), ind1[:, 0]] += 1
    np.testing.assert_array_equal(to_np(b2), ref)


@pytest.mark.parametrize("code", ALL + [BOOL])
def test_masked_fill_and_select(code):
    if code == BOOL:
        x, xn = make(rng.integers(0, 2, (3, 4)), BOOL)
    else:
        x, xn = rand((3, 4), code)
    mask = rng.random((4,)) > 0.5  # broadcast over rows
    got = to_np(_C.masked_fill(x, _C.from_numpy(mask), 1.0))
    ref = xn.copy()
    ref[:, mask] = 1
    np.testing.assert_array_equal(got, ref)
    sel = to_np(_C.masked_select(x, _C.from_numpy(mask)))
    np.testing.assert_array_equal(sel, xn[np.broadcast_to(mask, xn.shape)])
    # in place on a transposed view writes through to the base
    xt = x.transpose(0, 1)
    m2 = rng.random((4, 3)) > 0.5
    _C.masked_fill_(xt, _C.from_numpy(m2), 0.0)
    ref2 = xn.copy()
    ref2[m2.T] = 0
    np.testing.assert_array_equal(to_np(x), ref2)


@pytest.mark.parametrize("code", [F32, BF16, I64, BOOL])
def test_nonzero(code):
    arr = rng.integers(0, 3, (4, 3, 5)) * (rng.random((4, 3, 5)) > 0.5)
    x, xn = make(arr, code)
    got = _C.nonzero(x).numpy()
    np.testing.assert_array_equal(got, np.argwhere(xn))
    got_t = _C.nonzero(x.transpose(0, 2)).numpy()
    np.testing.assert_array_equal(got_t, np.argwhere(xn.transpose(2, 1, 0)))
    assert _C.nonzero(_C.from_numpy(np.zeros((2, 2)))).shape == (0, 2)


@pytest.mark.parametrize("code", ALL)
def test_advanced_index(code):
    x, xn = rand((5, 6, 7, 3), code)
    a = rng.integers(-5, 5, (2, 3))
    b = rng.integers(0, 6, (3,))
    c = rng.integers(0, 7, (2, 1))
    cases = [
        ([a], (a,)),
        ([None, b], (slice(None), b)),
        ([a, b], (a, b)),                                    # broadcast (2,3) with (3,)
        ([None, b, c], (slice(None), b, c)),                 # adjacent: dims stay in place
        ([a, None, c], (a, slice(None), c)),                 # separated: indexed dims go first
        ([None, b, None, idx_np := rng.integers(0, 3, (3,))], (slice(None), b, slice(None), idx_np)),
    ]
    for ind, npind in cases:
        got = to_np(_C.index(x, [None if i is None else idx(i) for i in ind]))
        np.testing.assert_array_equal(got, xn[npind])
    # non-contiguous source
    xp = x.permute([2, 0, 3, 1])
    got = to_np(_C.index(xp, [None, idx(a)]))
    np.testing.assert_array_equal(got, xn.transpose(2, 0, 3, 1)[:, a])
    # bool mask over two dims, and int32 indices
    m = rng.random((5, 6)) > 0.5
    np.testing.assert_array_equal(to_np(_C.index(x, [_C.from_numpy(m)])), xn[m])
    np.testing.assert_array_equal(to_np(_C.index(x, [None, None, _C.from_numpy(np.array([1, 0], np.int32))])),
                                  xn[:, :, [1, 0]])


@pytest.mark.parametrize("code", FLOATS + [I64])
def test_index_put(code):
    x, xn = rand((4, 5), code)
    rows = np.array([0, 2, 2, 3, 0])
    cols = np.array([1, 4, 4, -1, 1])
    v, vn = rand((5,), code)
    y = x.clone()
    _C.index_put_(y, [idx(rows), idx(cols)], v, True)
    ref = xn.astype(np.float64).copy()
    np.add.at(ref, (rows, cols), vn)
    tol = {F16: 2e-2, BF16: 1e-1}.get(code, 1e-6)
    np.testing.assert_allclose(to_np(y), ref, rtol=tol, atol=tol)
    # same seedless input twice -> identical bits (deterministic accumulate)
    y2 = x.clone()
    _C.index_put_(y2, [idx(rows), idx(cols)], v, True)
    np.testing.assert_array_equal(to_np(y2), to_np(y))
    # non-accumulate with a broadcast value into a column slice of a transposed view
    z = x.clone()
    zt = z.transpose(0, 1)  # (5, 4)
    val, valn = rand((4,), code)
    _C.index_put_(zt, [idx([1, 3])], val, False)
    ref = xn.copy()
    ref[:, [1, 3]] = valn[:, None]
    np.testing.assert_array_equal(to_np(z), ref)
    # bool mask
    w = x.clone()
    m = rng.random((4, 5)) > 0.5
    _C.index_put_(w, [_C.from_numpy(m)], _C.full([], 3.0, code, _C.Device("cpu")), False)
    ref = xn.copy()
    ref[m] = 3
    np.testing.assert_array_equal(to_np(w), ref)


def sort_ref(a, axis, descending):
    # numpy sorts NaN last (as the largest value); a stable descending sort = reversed ascending of
    # the negated order -- build it with lexsort on (index, key) to keep ties in input order.
    a = np.moveaxis(a, axis, -1)
    idx_out = np.empty(a.shape, np.int64)
    for pos in np.ndindex(*a.shape[:-1]):
        row = a[pos]
        n = len(row)
        nan = np.isnan(row) if row.dtype.kind == "f" else np.zeros(n, bool)
        key = np.where(nan, 0, row).astype(np.float64)
        if descending:
            order = np.lexsort((np.arange(n), -key, ~nan))
        else:
            order = np.lexsort((np.arange(n), key, nan))
        idx_out[pos] = order
    vals = np.take_along_axis(a, idx_out, -1)
    return np.moveaxis(vals, -1, axis), np.moveaxis(idx_out, -1, axis)


@pytest.mark.parametrize("code", ALL)
@pytest.mark.parametrize("descending", [False, True])
def test_sort(code, descending):
    arr = rng.integers(0, 6, (4, 7, 5)).astype(np.float64)  # many ties
    if code in FLOATS:
        arr[rng.random(arr.shape) < 0.1] = np.nan
    x, xn = make(arr, code)
    for dim in (0, 1, -1):
        vals, inds = _C.sort(x, dim, descending, True)
        rv, ri = sort_ref(xn, dim, descending)
        np.testing.assert_array_equal(to_np(vals), rv)
        np.testing.assert_array_equal(inds.numpy(), ri)
        np.testing.assert_array_equal(_C.argsort(x, dim, descending, True).numpy(), ri)
    vals, inds = _C.sort(x.transpose(0, 2), 1, descending, False)
    rv, ri = sort_ref(xn.transpose(2, 1, 0), 1, descending)
    np.testing.assert_array_equal(inds.numpy(), ri)


@pytest.mark.parametrize("code", ALL)
@pytest.mark.parametrize("largest", [True, False])
def test_topk(code, largest):
    arr = rng.permutation(60).reshape(3, 20).astype(np.float64)
    if code in (F16, BF16, U8):
        arr = arr % 50
    if code in FLOATS:
        arr[0, 3] = np.nan
    x, xn = make(arr, code)
    vals, inds = _C.topk(x, 4, 1, largest, True)
    rv, ri = sort_ref(xn, 1, largest)
    np.testing.assert_array_equal(to_np(vals), rv[:, :4])
    np.testing.assert_array_equal(inds.numpy(), ri[:, :4])
    vals, inds = _C.topk(x.transpose(0, 1), 2, 0, largest, True)
    np.testing.assert_array_equal(to_np(vals), rv[:, :2].T)


def test_errors():
    x = _C.from_numpy(np.zeros((3, 4), np.float32))
    with pytest.raises(IndexError, match=r"index 3 is out of bounds for dimension 0 with size 3"):
        _C.index(x, [idx([0, 3])])
    with pytest.raises(IndexError, match=r"index -5 is out of bounds for dimension 1 with size 4"):
        _C.index_select(x, 1, idx([-5]))
    # gather/scatter: RuntimeError, and no wrapping of negative indices (PyTorch)
    with pytest.raises(RuntimeError, match="index 4 is out of bounds for dimension 1 with size 4"):
        _C.gather(x, 1, idx([[4]]))
    with pytest.raises(RuntimeError, match="index -1 is out of bounds for dimension 1 with size 4"):
        _C.gather(x, 1, idx([[-1]]))
    with pytest.raises(RuntimeError, match="out of bounds"):
        _C.scatter_(x, 0, idx([[9]]), 1.0)
    with pytest.raises(RuntimeError, match="index -1 is out of bounds"):
        _C.scatter_(x, 0, idx([[-1]]), 1.0)
    with pytest.raises(IndexError, match="too many indices"):
        _C.index(x, [idx([0]), idx([0]), idx([0])])
    with pytest.raises(IndexError, match="shape mismatch"):
        _C.index(x, [idx([0, 1]), idx([0, 1, 2])])
    with pytest.raises(IndexError, match="mask"):
        _C.index(x, [_C.from_numpy(np.ones(4, bool))])
    with pytest.raises(IndexError, match="Dimension out of range"):
        _C.index_select(x, 2, idx([0]))
    with pytest.raises(TypeError, match="long, int, byte or bool"):
        _C.index(x, [_C.from_numpy(np.zeros(2, np.float32))])
    with pytest.raises(RuntimeError, match="int64"):
        _C.gather(x, 0, _C.from_numpy(np.zeros((1, 1), np.int32)))
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        _C.gather(x, 0, idx([0]))
    with pytest.raises(RuntimeError, match="boolean"):
        _C.masked_fill(x, _C.from_numpy(np.ones(4, np.int64)), 0.0)
    with pytest.raises(RuntimeError, match="cannot be broadcast"):
        _C.index_put_(x, [idx([0, 1])], _C.from_numpy(np.ones(3, np.float32)), False)
    with pytest.raises(RuntimeError, match="k out of range"):
        _C.topk(x, 5, 1, True, True)
