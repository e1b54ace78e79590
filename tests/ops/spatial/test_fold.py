"""F.unfold / F.fold (nn.Unfold / nn.Fold) against an im2col numpy reference; gradients by gradcheck."""
import numpy as np

import tinytorch as tt
import tinytorch.nn as nn
import tinytorch.nn.functional as F
from tinytorch.autograd import gradcheck
from support.numeric import assert_close, make


def _im2col_ref(x, k, d, p, s):
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    ho = (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    wo = (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    cols = np.zeros((n, c, k[0], k[1], ho, wo))
    for a in range(k[0]):
        for b in range(k[1]):
            cols[:, :, a, b] = xp[:, :, a * d[0]:a * d[0] + s[0] * ho:s[0], b * d[1]:b * d[1] + s[1] * wo:s[1]]
    return cols.reshape(n, c * k[0] * k[1], ho * wo)


def test_unfold_fold():
    x, xr = make((2, 3, 6, 7), "float64", "transposed", seed=9)
    kw = dict(kernel_size=(2, 3), dilation=(2, 1), padding=(1, 1), stride=(2, 1))
    cols = nn.Unfold(**kw)(x)
    assert_close(cols, _im2col_ref(xr, (2, 3), (2, 1), (1, 1), (2, 1)))
    blocks = nn.Unfold(kernel_size=2, stride=2)(x[:, :, :, :6])     # non-overlapping: fold undoes unfold
    assert_close(nn.Fold((6, 6), kernel_size=2, stride=2)(blocks), xr[:, :, :, :6])
    ones = nn.Fold((4, 4), kernel_size=3)(tt.ones(1, 9, 4, dtype=tt.float64))
    counts = np.zeros((4, 4))
    for i in range(2):
        for j in range(2):
            counts[i:i + 3, j:j + 3] += 1
    assert_close(ones[0, 0], counts)                                  # overlaps are summed
    x.requires_grad_()
    assert gradcheck(lambda t: F.fold(F.unfold(t, **kw) * 2, (6, 7), **kw), (x,))
