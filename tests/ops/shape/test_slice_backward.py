"""slice / split / narrow backward (zeros with the gradient written into the slice) against numpy,
for bounds given negative, open, past the end or empty, steps of 1 and more, every float dtype."""
import numpy as np
import pytest

import tinytorch as tt
from support.numeric import FLOAT_DTYPES, assert_close, make

# (dim, start, stop, step) on a (4, 10, 3) tensor
SLICES = [(1, 2, 7, 1), (1, -3, None, 1), (1, None, 4, 1), (1, 5, 100, 1), (1, 6, 3, 1), (0, 1, 3, 1),
          (-1, 1, 2, 1), (2, 0, 3, 1), (1, 1, 9, 3), (1, -8, None, 2)]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("dim,start,stop,step", SLICES)
def test_slice_backward(dtype, dim, start, stop, step):
    x, _ = make((4, 10, 3), dtype, "transposed", seed=1, requires_grad=True)
    y = tt._ops.shape.slice(x, dim, start, stop, step)
    index = [slice(None)] * 3
    index[dim] = slice(start, stop, step)
    g, gr = make(tuple(y.shape), dtype, seed=2)
    y.backward(g)
    want = np.zeros((4, 10, 3))
    want[tuple(index)] = gr
    assert_close(x.grad, want, dtype, what=f"slice({dim}, {start}, {stop}, {step}) backward")


def test_split_backward_sums_the_pieces():
    x, xr = make((5, 9), "float32", requires_grad=True, seed=3)
    a, b, c = x.split([2, 3, 4], dim=1)
    (a * 1.0 + 0.0).sum().backward(retain_graph=True)
    (b * 2.0).sum().backward(retain_graph=True)
    (c * 3.0).sum().backward()
    want = np.concatenate([np.full((5, 2), 1.0), np.full((5, 3), 2.0), np.full((5, 4), 3.0)], axis=1)
    assert_close(x.grad, want, "float32", what="split backward")
