"""The second form of names tinytorch defines in one form only (schema rows in codegen/ops.py):
Tensor methods of top-level functions, in-place matrix updates, top-level forms of Tensor methods and
the linear-algebra composites, against float64 numpy references on non-contiguous inputs; PyTorch's
errors."""
import numpy as np
import pytest

import tinytorch as tt
from support.numeric import FLOAT_DTYPES, TOL, assert_close, make


def test_clone_diff_histc_bincount_are_functions_and_methods():
    x = tt.tensor([1.0, 4.0, 9.0])
    assert tt.clone(x).tolist() == x.tolist() and tt.clone(x) is not x
    assert x.diff().tolist() == [3.0, 5.0]
    assert x.histc(bins=3, min=0, max=9).tolist() == [1.0, 1.0, 1.0]
    assert tt.tensor([0, 2, 2]).bincount().tolist() == [1, 0, 2]


def _np_cumtrapz(y, dx=1.0):
    return np.cumsum((y[..., 1:] + y[..., :-1]) / 2 * dx, axis=-1)


# (name, call on x (4, 4) and v (4,), float64 numpy reference)
ROWS = [
    ("Tensor.cov", lambda x, v: x.cov(), lambda a, b: np.cov(a)),
    ("Tensor.corrcoef", lambda x, v: x.corrcoef(), lambda a, b: np.corrcoef(a)),
    ("Tensor.cross", lambda x, v: x[:3].cross(x[1:], 0), lambda a, b: np.cross(a[:3], a[1:], axis=0)),
    ("Tensor.addbmm", lambda x, v: x.addbmm(x.unsqueeze(0), x.mT.unsqueeze(0), beta=0.5),
     lambda a, b: 0.5 * a + a @ a.T),
    ("addmm_", lambda x, v: x.clone().addmm_(x, x, alpha=2.0), lambda a, b: a + 2.0 * a @ a),
    ("baddbmm_", lambda x, v: x.unsqueeze(0).clone().baddbmm_(x.unsqueeze(0), x.unsqueeze(0))[0],
     lambda a, b: a + a @ a),
    ("addmv_", lambda x, v: v.clone().addmv_(x, v, beta=2.0), lambda a, b: 2.0 * b + a @ b),
    ("tt.addmv_", lambda x, v: tt.addmv_(v.clone(), x, v), lambda a, b: b + a @ b),
    ("addr_", lambda x, v: x.clone().addr_(v, v), lambda a, b: a + np.outer(b, b)),
    ("Tensor.hardshrink", lambda x, v: x.hardshrink(0.7), lambda a, b: np.where(np.abs(a) > 0.7, a, 0.0)),
    ("Tensor.prelu", lambda x, v: x.prelu(tt.tensor([0.25], dtype=x.dtype)), lambda a, b: np.where(a > 0, a, 0.25 * a)),
    ("tt.renorm", lambda x, v: tt.renorm(x, 2, 1, 1.0),
     lambda a, b: a * np.where(np.linalg.norm(a, axis=0) > 1.0, 1.0 / (np.linalg.norm(a, axis=0) + 1e-7), 1.0)),
    ("tt.index_fill", lambda x, v: tt.index_fill(x, 0, tt.tensor([1]), 9.0),
     lambda a, b: np.where(np.arange(4)[:, None] == 1, 9.0, a)),
    ("tt.put", lambda x, v: tt.put(x, tt.tensor([3]), tt.tensor([5.0], dtype=x.dtype)),
     lambda a, b: np.where(np.arange(16).reshape(4, 4) == 3, 5.0, a)),
    ("tt.xlogy_", lambda x, v: tt.xlogy_(x.abs().clone(), 2.0), lambda a, b: np.abs(a) * np.log(2.0)),
    ("tt.logit_", lambda x, v: tt.logit_((x.abs() / 3).clone()), lambda a, b: np.log((np.abs(a) / 3) / (1 - np.abs(a) / 3))),
    ("tt.frobenius_norm", lambda x, v: tt.frobenius_norm(x, (0, 1)), lambda a, b: np.linalg.norm(a)),
    ("tt.frobenius_norm_dim", lambda x, v: tt.frobenius_norm(x, 1, True), lambda a, b: np.linalg.norm(a, axis=1, keepdims=True)),
    ("tt.cumulative_trapezoid", lambda x, v: tt.cumulative_trapezoid(x), lambda a, b: _np_cumtrapz(a)),
    ("tt.cumulative_trapezoid_dx", lambda x, v: tt.cumulative_trapezoid(x, dx=0.5, dim=0),
     lambda a, b: _np_cumtrapz(a.T, 0.5).T),
    ("tt.cumulative_trapezoid_x", lambda x, v: tt.cumulative_trapezoid(x, v.cumsum(0).abs()),
     lambda a, b: np.cumsum((a[:, 1:] + a[:, :-1]) / 2 * np.diff(np.abs(np.cumsum(b))), axis=-1)),
]


@pytest.mark.parametrize("name,fn,ref", ROWS, ids=[r[0] for r in ROWS])
@pytest.mark.parametrize("layout", ["transposed", "sliced"])
def test_forms_against_numpy(name, fn, ref, layout):
    for dtype in FLOAT_DTYPES:
        x, a = make((4, 4), dtype, layout, seed=1)
        v, b = make((4,), dtype, "sliced", seed=2)
        tol = tuple(8 * t for t in TOL[dtype])   # reductions and products round several times in low precision
        if name == "tt.cumulative_trapezoid_x" and dtype in ("float16", "bfloat16"):
            tol = tuple(4 * t for t in tol)   # x's cumsum and differences round too
        assert_close(fn(x, v), ref(a, b), dtype, tol=tol, what=f"{name} {dtype} {layout}")


def test_nuclear_norm_and_misc():
    x, a = make((3, 5), "float64", "transposed")
    assert_close(tt.nuclear_norm(x), np.linalg.norm(a, "nuc"), "float64")
    y, c = make((2, 3, 5), "float64", "sliced")
    assert_close(tt.nuclear_norm(y, (1, 2)), [np.linalg.norm(m, "nuc") for m in c], "float64")
    assert tt.get_device(x) == -1 and tt.set_flush_denormal(True) is False and tt.init_num_threads() is None
    t = tt.zeros(3, 3)
    tt.index_put_(t, (tt.tensor([0, 2]), tt.tensor([1, 1])), tt.tensor([4.0, 5.0]))
    assert t[0, 1].item() == 4.0 and t[2, 1].item() == 5.0
    n = tt.tensor([float("nan"), 1.0])
    assert tt.nan_to_num_(n, 7.0) is n and n.tolist() == [7.0, 1.0]
    arr = np.arange(3.0)
    shared = tt.asarray(arr)
    arr[0] = 9.0
    assert shared[0].item() == 9.0 and tt.asarray(arr, copy=True).data_ptr() != shared.data_ptr()
    assert tt.asarray([1, 2], dtype=tt.float64, requires_grad=True).requires_grad
    assert [p.shape[0] for p in tt.ones(5).split_with_sizes([2, 3])] == [2, 3]
    assert len(tt.ones(6).unsafe_chunk(3)) == 3 and len(tt.ones(6).unsafe_split(4)) == 2


BAD = [
    (lambda: tt.cholesky_solve(tt.ones(3, 2), tt.eye(2)), RuntimeError, "incompatible"),
    (lambda: tt.cholesky_solve(tt.ones(3, 2), tt.ones(3, 2)), RuntimeError, "square"),
    (lambda: tt.cumulative_trapezoid(tt.ones(4), tt.ones(4), dx=1.0), RuntimeError, "both"),
    (lambda: tt.cumulative_trapezoid(tt.ones(4), tt.ones(3)), RuntimeError, "points"),
    (lambda: tt.nuclear_norm(tt.ones(2, 2, 2)), RuntimeError, "2-D"),
    (lambda: tt.asarray(tt.ones(2), dtype=tt.float64, copy=False), ValueError, "copy"),
]


@pytest.mark.parametrize("call,error,match", BAD)
def test_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()
