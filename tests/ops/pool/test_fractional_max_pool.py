"""fractional_max_pool2d/3d and FractionalMaxPool2d/3d against a float64 numpy loop over PyTorch's
pseudo-random windows (given ``_random_samples``): values and flat indices, unbatched input,
output_ratio; with drawn samples, every output is the maximum of some k-window; gradients by
gradcheck; constructor errors as PyTorch's."""
import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
import tinytorch.nn.functional as F
from tinytorch.autograd import gradcheck
from support.numeric import FLOAT_DTYPES, assert_close, make


def starts_ref(u, size, out, k):
    if out == 1:
        return [size - k]
    alpha = (size - k) / (out - 1)
    return [int((i + u) * alpha) - int(u * alpha) for i in range(out - 1)] + [size - k]


def fractional_ref(x, k, out, samples):
    """x (N, C, *spatial) float64; samples (N, C, n): 2-D uses (w, h), 3-D (t, h, w), as PyTorch."""
    n = len(k)
    spatial = x.shape[2:]
    order = [1, 0] if n == 2 else [0, 1, 2]
    vals = np.zeros(x.shape[:2] + tuple(out))
    idx = np.zeros(x.shape[:2] + tuple(out), dtype=np.int64)
    for b in range(x.shape[0]):
        for c in range(x.shape[1]):
            st = [starts_ref(samples[b, c, order[d]], spatial[d], out[d], k[d]) for d in range(n)]
            for o in np.ndindex(*out):
                win = tuple(slice(st[d][o[d]], st[d][o[d]] + k[d]) for d in range(n))
                w = x[(b, c) + win]
                a = int(np.argmax(w))
                vals[(b, c) + o] = w.reshape(-1)[a]
                pos = [st[d][o[d]] + np.unravel_index(a, w.shape)[d] for d in range(n)]
                idx[(b, c) + o] = np.ravel_multi_index(pos, spatial)
    return vals, idx


CASES = [((2, 3, 10, 9), (3, 3), (4, 5)), ((1, 2, 17, 13), (2, 3), (9, 6)), ((2, 2, 7, 8, 9), (2, 2, 3), (4, 5, 6))]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_matches_reference_with_given_samples(case, dtype):
    xs, k, out = CASES[case]
    n = len(k)
    x, xr = make(xs, dtype, "transposed", seed=case)
    s = np.random.default_rng(case).random((xs[0], xs[1], n))
    fn = F.fractional_max_pool2d if n == 2 else F.fractional_max_pool3d
    vals, idx = fn(x, k, out, return_indices=True, _random_samples=tt.tensor(s, dtype=getattr(tt, dtype)))
    rv, ri = fractional_ref(xr, k, out, s.astype(getattr(np, dtype)).astype(np.float64))
    assert_close(vals, rv, dtype)
    np.testing.assert_array_equal(idx.numpy(), ri)
    one, one_idx = fn(x[0], k, out, return_indices=True, _random_samples=tt.tensor(s[:1], dtype=getattr(tt, dtype)))
    assert_close(one, rv[0], dtype)                     # unbatched: the first sample's windows
    np.testing.assert_array_equal(one_idx.numpy(), ri[0])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_drawn_samples_give_maxima_of_windows(dtype):
    tt.manual_seed(0)
    x, xr = make((2, 3, 12, 11), dtype, seed=4)
    vals, idx = F.fractional_max_pool2d(x, 2, output_ratio=0.5, return_indices=True)
    assert tuple(vals.shape) == (2, 3, 6, 5) and vals.dtype == x.dtype
    flat = xr.reshape(2, 3, -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, idx.numpy().reshape(2, 3, -1), -1).reshape(2, 3, 6, 5),
                                  vals.double().numpy())
    # the window starts never move backwards along a dim
    h, w = idx.numpy() // 11, idx.numpy() % 11
    assert (np.diff(h, axis=2) >= 0).all() and (np.diff(w, axis=3) >= 0).all()   # windows move forward


def test_gradcheck():
    x, _ = make((1, 2, 9, 8), "float64", "transposed", seed=5, requires_grad=True)
    s = tt.tensor(np.random.default_rng(1).random((1, 2, 2)))
    assert gradcheck(lambda t: F.fractional_max_pool2d(t, 2, (4, 4), _random_samples=s), (x,))
    y, _ = make((1, 1, 6, 5, 6), "float64", seed=6, requires_grad=True)
    s3 = tt.tensor(np.random.default_rng(2).random((1, 1, 3)))
    assert gradcheck(lambda t: F.fractional_max_pool3d(t, 2, (3, 3, 3), _random_samples=s3), (y,))


def test_modules_and_errors():
    s = tt.tensor(np.random.default_rng(3).random((1, 2, 2)), dtype=tt.float32)
    m = nn.FractionalMaxPool2d(3, output_size=(4, 5), return_indices=True, _random_samples=s)
    assert repr(m) == "FractionalMaxPool2d()" and list(m.state_dict()) == ["_random_samples"]
    x, xr = make((1, 2, 10, 9), "float32", seed=7)
    vals, idx = m(x)
    rv, ri = fractional_ref(xr, (3, 3), (4, 5), s.double().numpy())
    assert_close(vals, rv, "float32")
    np.testing.assert_array_equal(idx.numpy(), ri)
    assert list(nn.FractionalMaxPool3d(2, output_ratio=0.5).state_dict()) == []
    assert tuple(nn.FractionalMaxPool3d(2, output_ratio=0.5)(tt.randn(1, 2, 6, 6, 8)).shape) == (1, 2, 3, 3, 4)
    with pytest.raises(ValueError, match="FractionalMaxPool2d requires specifying either an output size, or a "
                                         "pooling ratio"):
        nn.FractionalMaxPool2d(3)
    with pytest.raises(ValueError, match="output_ratio must be between 0 and 1 \\(got 1.5\\)"):
        nn.FractionalMaxPool2d(3, output_ratio=1.5)
    with pytest.raises(ValueError, match="only one of output_size and output_ratio may be specified"):
        nn.FractionalMaxPool3d(3, output_size=4, output_ratio=0.5)
    with pytest.raises(ValueError, match="fractional_max_pool2d requires specifying either an output_size"):
        F.fractional_max_pool2d(x, 3)
    with pytest.raises(RuntimeError, match="pool height 3 too large relative to input height 10"):
        F.fractional_max_pool2d(x, 3, output_size=(9, 5))
    with pytest.raises(RuntimeError, match="Expect _random_samples.size\\(2\\) equals to 2; got 3."):
        F.fractional_max_pool2d(x, 3, (4, 5), _random_samples=tt.rand(1, 2, 3))
    with pytest.raises(RuntimeError, match="no less then input batch size"):
        F.fractional_max_pool2d(tt.randn(2, 2, 10, 9), 3, (4, 5), _random_samples=tt.rand(1, 2, 2))
    with pytest.raises(RuntimeError, match="same dtype as input"):
        F.fractional_max_pool2d(x, 3, (4, 5), _random_samples=tt.rand(1, 2, 2, dtype=tt.float64))
