"""clip_grad_norm_'s multi-tensor path (shared by the CPU and CUDA tests): the total norm and the
clipped gradients against float64 numpy, for gradients of every float dtype, mixed in one list,
small and large (several blocks), more tensors than one kernel launch takes, and a non-contiguous
gradient (which takes the per-tensor path)."""
import numpy as np

import tinytorch as tt
from support.numeric import TOL, assert_close, to_numpy

SHAPES = [(3, 4), (5,), (70001,), (2, 3, 4)] + [(7,)] * 70  # > 64 tensors: two launches on CUDA


def check_clip_grad_norm(device: str, dtypes: list, noncontiguous: bool = False) -> None:
    rng = np.random.default_rng(0)
    params, grads = [], []
    for i, shape in enumerate(SHAPES):
        dtype = dtypes[i % len(dtypes)]
        g = tt.tensor(rng.normal(size=shape), dtype=getattr(tt, dtype), device=device)
        if noncontiguous and i == 0:
            g = tt.tensor(rng.normal(size=shape[::-1]), dtype=g.dtype, device=device).t()
        p = tt.nn.Parameter(tt.zeros(shape, dtype=g.dtype, device=device))
        p.grad = g
        params.append(p)
        grads.append(to_numpy(g).astype(np.float64))
    total = np.sqrt(sum((g ** 2).sum() for g in grads))
    out = tt.nn.utils.clip_grad_norm_(params, 0.25 * total)
    widest = dtypes[0] if len(set(dtypes)) == 1 else "float32"  # mixed dtypes: a float32 norm, as PyTorch
    assert out.dim() == 0 and out.device.type == device
    assert_close(out, total, dtype=widest, what="total norm")
    coef = 0.25 * total / (total + 1e-6)
    for p, g, i in zip(params, grads, range(len(grads))):
        assert p.grad.dtype == p.dtype
        # the coefficient is rounded to the norm's dtype: a float64 gradient is no closer than that
        tol = max(TOL[dtypes[i % len(dtypes)]], TOL[widest])
        assert_close(p.grad, g * coef, tol=tol, what=f"grad {i}")
