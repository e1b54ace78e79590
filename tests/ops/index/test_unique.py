"""unique_consecutive against numpy (every float dtype and int64; inverse and counts, along a dim)
and the Tensor.unique method, as PyTorch's."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import tinytorch as tt
import tinytorch
from support.numeric import FLOAT_DTYPES, to_numpy


def _np_unique_consecutive(a, axis=None):
    """(values, inverse, counts) of the runs of equal elements (slices along axis)."""
    items = a.reshape(-1) if axis is None else np.moveaxis(a, axis, 0)
    values, inverse, counts = [], [], []
    for _, run in itertools.groupby(range(len(items)), key=lambda i: items[i].tobytes()):
        run = list(run)
        values.append(items[run[0]])
        inverse += [len(values) - 1] * len(run)
        counts.append(len(run))
    values = np.array(values).reshape((len(values),) + items.shape[1:])
    values = values if axis is None else np.moveaxis(values, 0, axis)
    inverse = np.array(inverse).reshape(a.shape) if axis is None else np.array(inverse)
    return values, inverse, np.array(counts)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + ["int64"])
def test_unique_consecutive_matches_numpy(dtype):
    rng = np.random.default_rng(5)
    a = rng.integers(0, 2, (6, 3)).astype(np.float64)
    a[2] = a[1]                                  # equal consecutive rows for dim=0
    t = tt.tensor(a.T.copy(), dtype=getattr(tt, dtype)).t()   # non-contiguous
    for dim in (None, 0, 1):
        values, inverse, counts = tt.unique_consecutive(t, return_inverse=True, return_counts=True, dim=dim)
        rv, ri, rc = _np_unique_consecutive(a, dim)
        np.testing.assert_array_equal(to_numpy(values), rv, err_msg=f"dim={dim}")
        np.testing.assert_array_equal(inverse.numpy(), ri)
        np.testing.assert_array_equal(counts.numpy(), rc)
        assert inverse.dtype == tt.int64 and counts.dtype == tt.int64
    np.testing.assert_array_equal(to_numpy(t.unique_consecutive()), _np_unique_consecutive(a)[0])
    values, counts = tt.unique_consecutive(tt.zeros(0), return_counts=True)
    assert tuple(values.shape) == (0,) and tuple(counts.shape) == (0,)


def test_unique_method():
    x = tinytorch.tensor([[3, 1], [3, 2]])
    v, inv, cnt = x.unique(return_inverse=True, return_counts=True)
    ref_v, ref_inv, ref_cnt = np.unique(x.numpy(), return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(v.numpy(), ref_v)
    np.testing.assert_array_equal(inv.numpy(), ref_inv.reshape(2, 2))
    np.testing.assert_array_equal(cnt.numpy(), ref_cnt)
    np.testing.assert_array_equal(tinytorch.tensor([2.0, -1.0, 2.0]).unique().numpy(), [-1.0, 2.0])
