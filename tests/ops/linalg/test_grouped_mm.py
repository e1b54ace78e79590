"""F.grouped_mm against float64 numpy block products for its four operand layouts (jagged rows,
jagged columns, jagged contraction, batched), a partial last offset, every float dtype;
gradients by gradcheck; errors as PyTorch's."""
import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn.functional as F
from tinytorch.autograd import gradcheck
from support.numeric import FLOAT_DTYPES, assert_close_dot, make

OFFS = [3, 7, 12]


def ref(a, b, offs):
    starts = [0] + offs[:-1]
    if a.ndim == 2 and b.ndim == 3:
        out = np.zeros((a.shape[0], b.shape[-1]))
        for g, (s, e) in enumerate(zip(starts, offs)):
            out[s:e] = a[s:e] @ b[g]
        return out
    if a.ndim == 3 and b.ndim == 2:
        out = np.zeros((a.shape[1], b.shape[1]))
        for g, (s, e) in enumerate(zip(starts, offs)):
            out[:, s:e] = a[g] @ b[:, s:e]
        return out
    if a.ndim == 2:
        return np.stack([a[:, s:e] @ b[s:e] for s, e in zip(starts, offs)])
    return a @ b


LAYOUTS = [((14, 5), (3, 5, 6)), ((3, 8, 5), (5, 14)), ((8, 14), (14, 6)), ((3, 8, 5), (3, 5, 6))]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("layout", range(len(LAYOUTS)))
def test_matches_block_products(layout, dtype):
    sa, sb = LAYOUTS[layout]
    a, ar = make(sa, dtype, "transposed", seed=layout)
    b, br = make(sb, dtype, seed=layout + 10)
    batched = len(sa) == 3 and len(sb) == 3
    offs = None if batched else tt.tensor(OFFS, dtype=tt.int32)
    out = F.grouped_mm(a, b, offs=offs)
    want = ref(ar, br, OFFS)
    assert out.dtype == a.dtype and tuple(out.shape) == want.shape
    assert_close_dot(out, want, ref(np.abs(ar), np.abs(br), OFFS), dtype)


def test_rows_past_the_last_offset_are_zero_and_gradcheck():
    a, ar = make((14, 5), "float64", seed=1, requires_grad=True)
    b, br = make((3, 5, 6), "float64", seed=2, requires_grad=True)
    offs = tt.tensor([3, 7, 9], dtype=tt.int32)
    out = F.grouped_mm(a, b, offs=offs).detach().numpy()
    np.testing.assert_array_equal(out[9:], 0.0)
    assert gradcheck(lambda x, y: F.grouped_mm(x, y, offs=offs), (a, b))
    c, _ = make((8, 14), "float64", seed=3, requires_grad=True)
    d, _ = make((14, 4), "float64", seed=4, requires_grad=True)
    assert gradcheck(lambda x, y: F.grouped_mm(x, y, offs=tt.tensor(OFFS, dtype=tt.int32)), (c, d))


def test_errors():
    a, b = tt.randn(14, 5), tt.randn(3, 5, 6)
    offs = tt.tensor(OFFS, dtype=tt.int32)
    with pytest.raises(RuntimeError, match="Have to provide offsets if there is a 2d matrix"):
        F.grouped_mm(a, b)
    with pytest.raises(RuntimeError, match="Offsets have to be int32"):
        F.grouped_mm(a, b, offs=offs.long())
    with pytest.raises(RuntimeError, match="contraction dimension of mat_a and mat_b must match"):
        F.grouped_mm(tt.randn(14, 4), b, offs=offs)
    with pytest.raises(RuntimeError, match="mat_a has to be 2 or 3d"):
        F.grouped_mm(tt.randn(2, 3, 14, 5), b)
    with pytest.raises(RuntimeError, match="Grouped gemm output dtype must match `mat_a` dtype"):
        F.grouped_mm(a, b, offs=offs, out_dtype=tt.float64)
    with pytest.raises(NotImplementedError, match="bias is not supported yet"):
        F.grouped_mm(a, b, offs=offs, bias=tt.randn(3, 6))
