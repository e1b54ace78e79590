"""Shape helpers composed from existing ops (tinytorch/_composites/reshaping.py): atleast_*d,
broadcast_tensors, tile, ravel, the flips, rot90, the stacks and the splits (split_with_sizes,
unsafe_split, unsafe_chunk, ...) against numpy."""
import numpy as np
import pytest

import tinytorch as tt
from support.numeric import assert_close, make


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


def test_splits():
    x, a = make((6, 4), "float32", "transposed")
    for parts in (tt.split_with_sizes(x, [1, 2, 3]), tt.unsafe_split_with_sizes(x, [1, 2, 3])):
        for got, ref in zip(parts, np.split(a, [1, 3])):
            assert_close(got, ref, "float32")
    assert [p.shape[1] for p in tt.unsafe_split(x, 3, 1)] == [3, 1]
    assert [p.shape[0] for p in tt.unsafe_chunk(x, 4)] == [2, 2, 2]


gradcheck = tt.autograd.gradcheck


def _x(shape=(3, 4), seed=0):
    return make(shape, "float64", "transposed" if len(shape) == 2 else "contiguous", seed=seed)


def test_tile_ravel_flips_rot90():
    x, xr = _x()
    np.testing.assert_array_equal(tt.tile(x, (2,)).numpy(), np.tile(xr, (1, 2)))
    np.testing.assert_array_equal(x.tile((2, 1, 3)).numpy(), np.tile(xr, (2, 1, 3)))
    np.testing.assert_array_equal(tt.ravel(x).numpy(), xr.ravel())
    np.testing.assert_array_equal(tt.fliplr(x).numpy(), np.fliplr(xr))
    np.testing.assert_array_equal(x.flipud().numpy(), np.flipud(xr))
    for k in (-1, 0, 1, 2, 3, 5):
        np.testing.assert_array_equal(tt.rot90(x, k).numpy(), np.rot90(xr, k))
    y, yr = make((2, 3, 4), "float64", seed=1)
    np.testing.assert_array_equal(tt.rot90(y, 1, (2, 0)).numpy(), np.rot90(yr, 1, (2, 0)))
    a = x.detach().requires_grad_()
    assert gradcheck(lambda t: tt.rot90(t, 3), (a,)) and gradcheck(lambda t: t.tile((2, 2)), (a,))


def test_stacks_and_splits():
    a, b = tt.tensor([1.0, 2.0]), tt.tensor([3.0, 4.0])
    np.testing.assert_array_equal(tt.column_stack([a, b]).numpy(), np.column_stack([a.numpy(), b.numpy()]))
    np.testing.assert_array_equal(tt.dstack([a, b]).numpy(), np.dstack([a.numpy(), b.numpy()]))
    x = tt.arange(7)
    for spec in (3, [1, 5], [4, 2, 9]):
        got = [t.tolist() for t in tt.tensor_split(x, spec)]
        assert got == [t.tolist() for t in np.array_split(np.arange(7), spec)]
    m = tt.arange(12).reshape(3, 4)
    assert [t.shape for t in tt.hsplit(m, 2)] == [(3, 2), (3, 2)]
    assert [t.shape for t in m.vsplit([1])] == [(1, 4), (2, 4)]
    assert [t.shape for t in tt.dsplit(tt.zeros(1, 2, 6), 3)] == [(1, 2, 2)] * 3
    with pytest.raises(RuntimeError, match="not divisible"):
        tt.hsplit(m, 3)
    with pytest.raises(RuntimeError, match="at least 2 dimension"):
        tt.vsplit(x, 7)


@pytest.mark.parametrize("make_view", [
    lambda: tt.ones(1, 1).expand(2**62, 4),
    lambda: tt.ones(1, 1).expand(2**32, 2**32),
    lambda: tt.ones(4).as_strided((3, 2), (2**62, 1)),
])
def test_views_whose_size_overflows_are_refused(make_view):
    # torch: "numel: integer multiplication overflow"; a wrapped count made such views look empty or small
    with pytest.raises(RuntimeError, match="overflow"):
        make_view()


def test_an_empty_dimension_keeps_a_huge_view_empty():
    assert tt.ones(1, 1).expand(0, 2**62).numel() == 0
