"""conv3d / conv_transpose3d on the GPU against the CPU result (same inputs), forward and
gradients, float32 (no TF32: conftest) and bfloat16."""
import numpy as np
import pytest

import tinytorch.nn.functional as F
from support.numeric import GRAD_TOL, TOL, make, to_numpy

pytestmark = pytest.mark.cuda

CASES = [  # (op, x shape, weight shape, kwargs)
    ("conv3d", (2, 4, 5, 6, 7), (6, 2, 3, 2, 3), dict(stride=(2, 1, 2), padding=(1, 0, 1), dilation=(1, 2, 1),
                                                     groups=2)),
    ("conv3d", (2, 3, 4, 5, 6), (4, 3, 2, 3, 2), dict(padding="same")),
    ("conv_transpose3d", (2, 4, 3, 4, 5), (4, 3, 3, 2, 3), dict(stride=2, padding=1, output_padding=1, groups=2)),
]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_conv3d_cuda_matches_cpu(case, dtype):
    op, xs, ws, kw = CASES[case]
    fn = getattr(F, op)
    x, _ = make(xs, dtype, "transposed", seed=case, requires_grad=True)
    w, _ = make(ws, dtype, seed=case + 1, requires_grad=True)
    xc = x.detach().cuda().requires_grad_(True)
    wc = w.detach().cuda().requires_grad_(True)
    y, yc = fn(x, w, None, **kw), fn(xc, wc, None, **kw)
    assert yc.device.type == "cuda"
    scale = max(1.0, float(np.abs(to_numpy(y)).max()))
    np.testing.assert_allclose(to_numpy(yc) / scale, to_numpy(y) / scale, *TOL[dtype])
    g, _ = make(tuple(y.shape), dtype, seed=case + 2)
    y.backward(g)
    yc.backward(g.cuda())
    for a, b in ((x.grad, xc.grad), (w.grad, wc.grad)):
        s = max(1.0, float(np.abs(to_numpy(a)).max()))
        np.testing.assert_allclose(to_numpy(b) / s, to_numpy(a) / s, *GRAD_TOL[dtype])
