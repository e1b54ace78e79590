"""Indexing, joining, reordering and sorting (the Python-level ops) against numpy: every float
dtype and some int dtypes, non-contiguous inputs, negative dims, PyTorch indexing rules, errors."""
import numpy as np
import pytest

import tinytorch as tt
from support.numeric import FLOAT_DTYPES, assert_close, to_numpy

DTYPES = FLOAT_DTYPES + ["int64", "int32", "uint8"]
LAYOUTS = ["contiguous", "transposed", "sliced"]


def src(shape, dtype, layout="contiguous", seed=0):
    """Exact small-integer values (representable in every dtype) with the given layout;
    returns (tensor, numpy reference)."""
    rng = np.random.default_rng(seed)
    shape = tuple(shape)
    if layout == "transposed":
        base = rng.integers(0, 50, shape[:-2] + (shape[-1], shape[-2]))
        t = tt.tensor(base, dtype=getattr(tt, dtype)).transpose(-1, -2)
        ref = np.swapaxes(base, -1, -2)
    elif layout == "sliced":
        base = rng.integers(0, 50, shape[:-1] + (shape[-1] * 2,))
        t = tt._ops.shape.slice(tt.tensor(base, dtype=getattr(tt, dtype)), -1, 1, None, 2)
        ref = base[..., 1::2]
    else:
        ref = rng.integers(0, 50, shape)
        t = tt.tensor(ref, dtype=getattr(tt, dtype))
    assert tuple(t.shape) == shape
    return t, ref.astype(np.float64)


def eq(t, expected, dtype=None):
    assert dtype is None or t.dtype.name == dtype, (t.dtype, dtype)
    got = to_numpy(t)
    assert got.shape == np.shape(expected), (got.shape, np.shape(expected))
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_index_select_gather(dtype, layout):
    x, r = src((3, 4), dtype, layout)
    idx = np.array([3, 0, 3, -1 + 4])
    eq(x.index_select(1, tt.tensor(idx)), r[:, idx], dtype)
    eq(x.index_select(-2, tt.tensor([2, 0])), r[[2, 0]], dtype)
    eq(tt.index_select(x, 0, tt.tensor([], dtype=tt.int64)), r[[]], dtype)
    gi = np.array([[0, 3], [2, 2], [1, 0]])
    eq(x.gather(1, tt.tensor(gi)), np.take_along_axis(r, gi, 1), dtype)
    gi0 = np.array([[2, 0, 1, 1]])
    eq(x.gather(-2, tt.tensor(gi0)), np.take_along_axis(r, gi0, 0), dtype)
    eq(x.index_select(1, tt.tensor(idx, dtype=tt.int32)), r[:, idx], dtype)   # int32 indices work too


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter_scatter_add(dtype, layout):
    x, r = src((3, 4), dtype, layout, seed=1)
    s, sr = src((2, 4), dtype, seed=2)
    idx = np.array([[2, 0, 1, 2], [0, 1, 2, 1]])
    out = x.scatter(0, tt.tensor(idx), s)
    exp = r.copy()
    for i in range(2):
        for j in range(4):
            exp[idx[i, j], j] = sr[i, j]
    eq(out, exp, dtype)
    eq(x, r)                                         # out of place
    dup = np.array([[0, 0, 1, 1], [0, 2, 1, 1]])
    exp = r.copy()
    for i in range(2):
        for j in range(4):
            exp[dup[i, j], j] += sr[i, j]
    eq(x.scatter_add(0, tt.tensor(dup), s), exp if dtype != "uint8" else exp % 256, dtype)
    exp = r.copy()
    exp[[0, 1], [1, 3]] = 7
    eq(x.scatter(1, tt.tensor([[1], [3]]), 7), exp, dtype)
    y = x.clone()
    y.scatter_add_(0, tt.tensor(dup), s)
    eq(y, exp2 := _scatter_add_ref(r, dup, sr) if dtype != "uint8" else _scatter_add_ref(r, dup, sr) % 256, dtype)
    eq(x.scatter(0, tt.tensor(dup), s, reduce="add"), exp2, dtype)      # the deprecated reduce= form
    ones = _scatter_add_ref(r, dup, np.full((2, 4), 2.0))
    eq(x.scatter(0, tt.tensor(dup), value=2, reduce="add"), ones if dtype != "uint8" else ones % 256, dtype)
    with pytest.raises(NotImplementedError, match="reduce='multiply'"):
        x.scatter(0, tt.tensor(dup), s, reduce="multiply")


def _scatter_add_ref(r, idx, sr):
    out = r.copy()
    for i in range(idx.shape[0]):
        for j in range(idx.shape[1]):
            out[idx[i, j], j] += sr[i, j]
    return out


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_masked_fill_select(dtype, layout):
    x, r = src((3, 4), dtype, layout, seed=3)
    m = np.array([[True, False, False, True], [False, False, False, False], [True, True, True, True]])
    eq(x.masked_fill(tt.tensor(m), 5), np.where(m, 5, r), dtype)
    row = np.array([False, True, False, True])
    eq(x.masked_fill(tt.tensor(row), 9), np.where(row, 9, r), dtype)            # broadcast mask
    eq(x.masked_fill(tt.tensor(m), tt.tensor(2.0)), np.where(m, 2, r), dtype)   # 0-dim tensor value
    eq(x.masked_select(tt.tensor(m)), r[m], dtype)
    eq(x.masked_select(tt.tensor(row)), np.broadcast_to(r, (3, 4))[np.broadcast_to(row, (3, 4))], dtype)
    y = x.clone()
    y.masked_fill_(tt.tensor(m), 1)
    eq(y, np.where(m, 1, r))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_getitem(dtype, layout):
    x, r = src((4, 3, 6), dtype, layout, seed=4)
    i = np.array([3, 0, -1])
    cases = [
        (1, 1), (-1, -1), (slice(None, None, 2), slice(None, None, 2)), ((1, slice(1, None), 4), (1, slice(1, None), 4)),
        ((Ellipsis, 2), (Ellipsis, 2)), ((None, 1, None), (None, 1, None)),
        ((slice(1, 3), Ellipsis, slice(None, None, 3)), (slice(1, 3), Ellipsis, slice(None, None, 3))),
        (tt.tensor(i), i), ([0, 2, 2], [0, 2, 2]),
        ((tt.tensor([1, 0]), tt.tensor([2, 2])), ([1, 0], [2, 2])),
        # broadcasting index tensors
        ((tt.tensor([[0], [3]]), slice(None), tt.tensor([1, 5, 0])), (np.array([[0], [3]]), slice(None), [1, 5, 0])),
        # adjacent advanced indices after a slice stay in place
        ((slice(None), tt.tensor([2, 0]), tt.tensor([1, 1])), (slice(None), [2, 0], [1, 1])),
        # advanced indices separated by a slice: the advanced dims go first (numpy / PyTorch)
        ((tt.tensor([1, 2]), slice(None), tt.tensor([0, 5])), ([1, 2], slice(None), [0, 5])),
        ((tt.tensor([1, 2]), slice(0, 2), 4), ([1, 2], slice(0, 2), 4)),
        # an int is a basic index (select) in PyTorch, unlike numpy where it joins the advanced
        # indices: x[1, :, t] == x[1][:, t]
        ((1, slice(None), tt.tensor([0, 5, 5])), "select-first"),
        # bool masks
        (tt.tensor([True, False, True, True]), np.array([True, False, True, True])),
        ((slice(None), tt.tensor([False, True, True])), (slice(None), np.array([False, True, True]))),
        (tt.tensor(r[:, :, 0] > 25), r[:, :, 0] > 25),
        ((Ellipsis, tt.tensor(np.arange(6) % 2 == 0)), (Ellipsis, np.arange(6) % 2 == 0)),
        ((tt.tensor([True, True, False, False]), 1, tt.tensor([0, 5])), (np.array([True, True, False, False]), 1, [0, 5])),
        (True, True), (False, False),
    ]
    for key, nkey in cases:
        got = x[key]
        exp = r[1][:, [0, 5, 5]] if isinstance(nkey, str) else r[nkey]
        assert tuple(got.shape) == exp.shape, (key, got.shape, exp.shape)
        eq(got, exp, dtype)
    # basic indexing returns a view, advanced indexing a copy
    assert x[1:, 0].data_ptr() != 0 and x[1]._impl.storage_ptr == x._impl.storage_ptr
    assert x[tt.tensor([1])]._impl.storage_ptr != x._impl.storage_ptr


def test_getitem_scalar_and_zero_dim_index():
    x = tt.arange(12.0).view(3, 4)
    assert x[1, 2].item() == 6.0 and x[1, 2].dim() == 0
    eq(x[tt.tensor(2)], [8, 9, 10, 11])        # 0-dim int tensor: an advanced index of rank 0
    eq(x[tt.tensor(1), tt.tensor(3)], 7)
    eq(x[..., None].squeeze(-1), np.arange(12.0).reshape(3, 4))


@pytest.mark.parametrize("dtype", DTYPES)
def test_setitem(dtype):
    x, r = src((4, 3, 5), dtype, "transposed" if dtype != "uint8" else "contiguous", seed=5)
    r = r.copy()
    x = x.clone() if not x.is_contiguous() else x

    def do(key, value, nkey=None, nvalue=None):
        x[key] = value
        r[key if nkey is None else nkey] = value if nvalue is None else nvalue
        eq(x, r)

    do((1, slice(None), 2), 7)
    do(slice(None, None, 2), tt.tensor([1, 2, 3, 4, 5], dtype=getattr(tt, dtype)), nvalue=[1, 2, 3, 4, 5])   # broadcast
    do((Ellipsis, 0), tt.tensor([[9], [8], [7], [6]], dtype=getattr(tt, dtype)), nvalue=[[9], [8], [7], [6]])
    do(tt.tensor([0, 3]), 11, [0, 3])
    do((tt.tensor([1, 2]), slice(None), tt.tensor([4, 0])), tt.tensor([3, 4], dtype=getattr(tt, dtype)).view(2, 1),
       ([1, 2], slice(None), [4, 0]), np.array([[3], [4]]))
    m = r > 30
    do(tt.tensor(m), 0, m)
    do((slice(None), tt.tensor([True, False, True])), tt.tensor([1, 2, 3, 4, 5], dtype=getattr(tt, dtype)),
       (slice(None), [True, False, True]), [1, 2, 3, 4, 5])
    do((2, 1), tt.tensor(42, dtype=getattr(tt, dtype)), nvalue=42)


def test_setitem_bumps_version_and_writes_through_views():
    base = tt.zeros(3, 4)
    v = base.t()
    v0 = base._version
    v[1:, 0] = 5.0
    assert base._version > v0
    eq(base, np.array([[0, 5, 5, 5], [0, 0, 0, 0], [0, 0, 0, 0]]))
    v[tt.tensor([0]), tt.tensor([2])] = 1.0
    assert base[2, 0].item() == 1.0


@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "int64", "int32"])
def test_index_put(dtype, accumulate):
    x, r = src((3, 4), dtype, seed=6)
    r = r.copy()
    rows, cols = np.array([0, 2, 0]), np.array([1, 3, 1])
    vals = np.array([5, 6, 7])
    out = x.index_put((tt.tensor(rows), tt.tensor(cols)), tt.tensor(vals, dtype=getattr(tt, dtype)), accumulate=accumulate)
    if accumulate:
        np.add.at(r, (rows, cols), vals)
    else:
        r[rows[1:], cols[1:]] = vals[1:]         # duplicates: the last write wins on CPU
    eq(out, r, dtype)
    y = x.clone()
    y.index_put_((tt.tensor([1]),), tt.tensor(3, dtype=getattr(tt, dtype)), accumulate=accumulate)
    exp = to_numpy(x).copy()
    exp[1] = exp[1] + 3 if accumulate else 3
    eq(y, exp)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_cat_stack(dtype, layout):
    a, ar = src((2, 3), dtype, layout, seed=1)
    b, br = src((1, 3), dtype, seed=2)
    c, cr = src((2, 2), dtype, layout, seed=3)
    eq(tt.cat([a, b]), np.concatenate([ar, br]), dtype)
    eq(tt.cat([a, c], -1), np.concatenate([ar, cr], 1), dtype)
    eq(tt.cat((a,)), ar, dtype)
    eq(tt.stack([a, a * 1], 1), np.stack([ar, ar], 1), dtype) if dtype != "uint8" else None
    eq(tt.stack([a, a], -1), np.stack([ar, ar], -1), dtype)
    eq(tt.stack([a, a]), np.stack([ar, ar]), dtype)
    eq(tt.cat([a, tt.zeros(0, 3, dtype=getattr(tt, dtype))]), ar, dtype)   # empty pieces are fine


def test_cat_promotes_dtypes():
    out = tt.cat([tt.tensor([1, 2]), tt.tensor([0.5])])
    assert out.dtype == tt.float32
    eq(out, [1, 2, 0.5])


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_flip_roll_repeat_tril_triu(dtype, layout):
    x, r = src((3, 4), dtype, layout, seed=8)
    eq(x.flip(0), r[::-1], dtype)
    eq(x.flip([0, -1]), r[::-1, ::-1], dtype)
    eq(x.roll(1, 1), np.roll(r, 1, 1), dtype)
    eq(x.roll((-1, 2), (0, 1)), np.roll(r, (-1, 2), (0, 1)), dtype)
    eq(x.roll(5), np.roll(r, 5), dtype)                     # no dims: flattened roll
    eq(x.repeat(2, 1), np.tile(r, (2, 1)), dtype)
    eq(x.repeat(2, 1, 3), np.tile(r, (2, 1, 3)), dtype)
    for k in (-1, 0, 2):
        eq(x.tril(k), np.tril(r, k), dtype)
        eq(x.triu(k), np.triu(r, k), dtype)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_sort_argsort_topk(dtype, layout):
    x, r = src((3, 6), dtype, layout, seed=9)
    for dim in (0, 1, -1):
        v, i = x.sort(dim)
        eq(v, np.sort(r, dim), dtype)
        eq(x.gather(dim, i), np.sort(r, dim))              # indices point at the values
        eq(x.sort(dim, descending=True).values, -np.sort(-r, dim), dtype)
        eq(x.argsort(dim, stable=True), np.argsort(r, dim, kind="stable"))
    # stable sort keeps the order of equal elements, ascending and descending
    d = tt.tensor([[2, 1, 2, 1, 0, 2]], dtype=getattr(tt, dtype))
    v, i = d.sort(1, stable=True)
    eq(i, [[4, 1, 3, 0, 2, 5]])
    v, i = d.sort(1, descending=True, stable=True)
    eq(v, [[2, 2, 2, 1, 1, 0]])
    eq(i, [[0, 2, 5, 1, 3, 4]])
    v, i = x.topk(2, 1)
    eq(v, -np.sort(-r, 1)[:, :2], dtype)
    eq(x.gather(1, i), to_numpy(v))
    v, i = x.topk(2, 0, largest=False)
    eq(v, np.sort(r, 0)[:2], dtype)
    assert i.dtype == tt.int64


def test_sort_nan_goes_last():
    x = tt.tensor([3.0, float("nan"), 1.0, 2.0])
    v, i = x.sort()
    assert np.isnan(v.numpy()[-1]) and i.numpy()[-1] == 1
    eq(v[:3], [1, 2, 3])
    v, i = x.sort(descending=True)
    assert np.isnan(v.numpy()[0])                            # NaN is the largest (PyTorch)
    assert np.isnan(x.topk(1).values.numpy()[0])


def test_nonzero_and_one_hot():
    x = tt.tensor([[0, 2, 0], [3, 0, 4]])
    eq(x.nonzero(), [[0, 1], [1, 0], [1, 2]])
    rows, cols = x.nonzero(as_tuple=True)
    eq(rows, [0, 1, 1]) and eq(cols, [1, 0, 2])
    eq(tt.nonzero(x.t()), np.argwhere(np.array([[0, 2, 0], [3, 0, 4]]).T))
    eq(tt._ops.index.one_hot(tt.tensor([2, 0]), 4), [[0, 0, 1, 0], [1, 0, 0, 0]])


# ------------------------------------------------------------------ bad input, one per class

def test_out_of_range_index_names_it():
    x = tt.zeros(3, 4)
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 3"):
        x[5]
    with pytest.raises(IndexError, match="out of bounds for dimension 1 with size 4"):
        x[:, -5]
    with pytest.raises(IndexError, match="index 7 is out of bounds"):
        x[tt.tensor([0, 7])]
    with pytest.raises(IndexError, match="index -4 is out of bounds"):
        x.index_select(0, tt.tensor([-4]))
    with pytest.raises((IndexError, RuntimeError), match="out of bounds"):
        x.gather(1, tt.tensor([[4]]))
    with pytest.raises((IndexError, RuntimeError), match="out of bounds"):
        x.scatter(0, tt.tensor([[3]]), 1.0)
    with pytest.raises(IndexError, match="out of bounds"):
        x[tt.tensor([5])] = 1.0
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 2"):
        x[0, 0, 0]


def test_wrong_dtype_index():
    x = tt.zeros(3, 4)
    with pytest.raises(IndexError, match="tensors used as indices must be long, int, byte or bool tensors"):
        x[tt.tensor([0.0, 1.0])]
    with pytest.raises(IndexError, match="tensors used as indices must be long"):
        x[[0.5]]
    with pytest.raises((IndexError, RuntimeError, TypeError), match="(?i)index.*(long|int|dtype)"):
        x.index_select(0, tt.tensor([0.0]))
    with pytest.raises(RuntimeError, match=r"gather\(\): Expected dtype int64 for index, but got float32"):
        x.gather(0, tt.tensor([[0.0]]))


def test_bad_bool_mask_shape():
    x = tt.zeros(3, 4)
    with pytest.raises(IndexError, match="(?i)shape of the mask .*does not match"):
        x[tt.tensor([True, False])]


def test_mismatched_cat_shapes_name_the_tensor():
    with pytest.raises(RuntimeError, match="Sizes of tensors must match except in dimension 0.*"
                                           "Expected size 3 but got size 2 for tensor number 2 in the list"):
        tt.cat([tt.zeros(1, 3), tt.zeros(2, 3), tt.zeros(1, 2)])
    with pytest.raises(RuntimeError, match="(?i)stack expects each tensor to be equal size|Sizes of tensors must match"):
        tt.stack([tt.zeros(2), tt.zeros(3)])
    with pytest.raises(RuntimeError, match="(?i)Tensors must have same number of dimensions|dimensions"):
        tt.cat([tt.zeros(2, 2), tt.zeros(2)])
    with pytest.raises(RuntimeError, match="(?i)non-empty"):
        tt.stack([])


def test_bad_dims_in_index_ops():
    x = tt.zeros(3, 4)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.index_select(2, tt.tensor([0]))
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.flip(2)
    with pytest.raises((IndexError, RuntimeError), match="(?i)k|selected index"):
        x.topk(5, 1)
