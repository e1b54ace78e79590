"""CUDA copies and casts of strided tensors (cuda/loops.cuh): the inner-dim vector path (dense
innermost dim, aligned) and the element path it falls back to give the same bytes as the dense path."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt

from support.numeric import FLOAT_DTYPES, to_numpy

pytestmark = pytest.mark.cuda

# (name, base shape, view of the base) — which path each takes is noted; both must be exact.
VIEWS = [
    ("head split (vector path)", (2, 5, 3, 64), lambda x: x.transpose(1, 2)),
    ("permuted, inner 8 (vector path)", (3, 4, 8), lambda x: x.permute(1, 0, 2)),
    ("broadcast rows (vector path)", (1, 64), lambda x: x.expand(5, 64)),
    ("column slice (vector path)", (6, 48), lambda x: x[:, 16:32]),
    ("misaligned base (element path)", (4, 72), lambda x: x[:, 1:65]),
    ("inner not a multiple (element path)", (4, 7, 9), lambda x: x.transpose(0, 1)),
    ("inner stride 2 (element path)", (6, 64), lambda x: x[:, ::2]),
]


@pytest.mark.parametrize("dst", FLOAT_DTYPES)
@pytest.mark.parametrize("src", FLOAT_DTYPES)
@pytest.mark.parametrize("name,shape,view", VIEWS, ids=[v[0] for v in VIEWS])
def test_strided_copy_and_cast_match_the_dense_path(name, shape, view, src, dst):
    """A copy gives the view's values exactly; a cast of the view equals the dense cast of its copy."""
    base = np.random.default_rng(0).normal(size=shape) * 3
    x_cpu = view(tt.tensor(base, dtype=getattr(tt, src)))
    x_gpu = view(tt.tensor(base, dtype=getattr(tt, src), device="cuda"))
    dense = x_gpu.contiguous()
    assert dense.is_contiguous()
    np.testing.assert_array_equal(to_numpy(dense.cpu()), to_numpy(x_cpu.contiguous()))
    got = x_gpu.to(getattr(tt, dst))
    want = dense.to(getattr(tt, dst))
    assert got.dtype == getattr(tt, dst) and tuple(got.shape) == tuple(x_cpu.shape)
    np.testing.assert_array_equal(to_numpy(got.contiguous().cpu()), to_numpy(want.cpu()))


def test_copy_into_a_strided_destination():
    """The destination strided too (copy_ into a transposed view): vector path on both sides."""
    rng = np.random.default_rng(1)
    src = rng.normal(size=(4, 6, 32)).astype(np.float32)
    out = tt.zeros(6, 4, 32, device="cuda").transpose(0, 1)
    out.copy_(tt.tensor(src, device="cuda"))
    np.testing.assert_array_equal(to_numpy(out.cpu()), src)
