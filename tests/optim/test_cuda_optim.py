"""CUDA fused optimizer steps against the CPU optimizers.

Identical parameters and gradient sequences on both devices; after every step the GPU
parameters (and state) must match the CPU ones. Both run the same formulas in the same order
in opmath (float for 16-bit types), so only FMA contraction and summation-free rounding
differences remain."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.optim as optim

from support.numeric import to_numpy

pytestmark = pytest.mark.cuda

# Shapes: odd sizes exercise the vector path's tail; (1000,) and (33, 65) the vector body.
SHAPES = [(4, 5), (7,), (1000,), (33, 65)]
N_STEPS = 5
TOL = {"float64": (1e-12, 1e-13), "float32": (1e-5, 1e-6), "float16": (4e-3, 4e-3), "bfloat16": (3e-2, 3e-2)}

CASES = [
    (optim.SGD, dict(lr=0.1)),
    (optim.SGD, dict(lr=0.1, momentum=0.9, dampening=0.3)),
    (optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.05, maximize=True)),
    (optim.Adam, {}),
    (optim.Adam, dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    (optim.Adam, dict(lr=0.05, amsgrad=True, maximize=True, weight_decay=0.1)),
    (optim.AdamW, dict(lr=0.05, weight_decay=0.3, amsgrad=True)),
    (optim.Adadelta, {}),
    (optim.Adadelta, dict(lr=0.5, rho=0.8, eps=1e-4, weight_decay=0.1, maximize=True)),
    (optim.Adagrad, {}),
    (optim.Adagrad, dict(lr=0.1, lr_decay=0.05, initial_accumulator_value=0.2, weight_decay=0.1, maximize=True)),
    (optim.RMSprop, {}),
    (optim.RMSprop, dict(lr=0.01, alpha=0.9, centered=True)),
    (optim.RMSprop, dict(lr=0.01, momentum=0.8, centered=True, weight_decay=0.1, maximize=True)),
    (optim.Adamax, {}),
    (optim.Adamax, dict(lr=0.05, betas=(0.8, 0.9), weight_decay=0.1, maximize=True)),
    (optim.NAdam, {}),
    (optim.NAdam, dict(lr=0.05, momentum_decay=0.01, weight_decay=0.1)),
    (optim.NAdam, dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    (optim.RAdam, dict(lr=0.05, betas=(0.5, 0.6))),  # both rectification branches
    (optim.RAdam, dict(lr=0.05, betas=(0.5, 0.6), weight_decay=0.1, decoupled_weight_decay=True)),
    (optim.RAdam, dict(lr=0.05, betas=(0.5, 0.6), weight_decay=0.1, maximize=True)),
]


def case_id(case):
    cls, kw = case
    return cls.__name__ + ("-" + ",".join(f"{k}={v}" for k, v in kw.items()) if kw else "")


def problem(dtype, seed=0):
    rng = np.random.default_rng(seed)
    t = getattr(tt, dtype)
    inits = [tt.tensor(rng.uniform(-1, 1, s), dtype=t) for s in SHAPES]
    grads = [[tt.tensor(rng.uniform(-1, 1, s), dtype=t) for s in SHAPES] for _ in range(N_STEPS)]
    return inits, grads


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_optimizer_matches_cpu(case, dtype):
    cls, kw = case
    inits, grads = problem(dtype)
    pc = [a.clone().requires_grad_() for a in inits]
    pg = [a.cuda().requires_grad_() for a in inits]
    oc, og = cls(pc, **kw), cls(pg, **kw)
    # several steps compound one-ulp differences (GPU fma/sqrt vs CPU), amplified by 1/(sqrt(v)+eps)
    rtol, atol = (t * 10 for t in TOL[dtype])
    for step, gs in enumerate(grads):
        for p, g in zip(pc, gs):
            p.grad = g.clone()
        for p, g in zip(pg, gs):
            p.grad = g.cuda()
        oc.step()
        og.step()
        for i, (a, b) in enumerate(zip(pg, pc)):
            assert a.device.type == "cuda" and a.dtype == b.dtype
            np.testing.assert_allclose(to_numpy(a), to_numpy(b), rtol=rtol, atol=atol,
                                       err_msg=f"param {i} after step {step + 1}")
    # state tensors too (step counters stay on the CPU)
    for a, b in zip(pg, pc):
        for key, vb in oc.state[b].items():
            va = og.state[a][key]
            if isinstance(vb, tt.Tensor) and vb.dim() > 0:
                assert va.device.type == "cuda", key
                np.testing.assert_allclose(to_numpy(va), to_numpy(vb), rtol=rtol, atol=atol, err_msg=key)


def test_noncontiguous_grad_and_unaligned_param():
    # A param that is a contiguous view at an odd offset (no 16-byte alignment: scalar path) and
    # a transposed grad (made contiguous by the op layer).
    rng = np.random.default_rng(1)
    base = rng.uniform(-1, 1, (1 + 6 * 5,))
    g = rng.uniform(-1, 1, (5, 6))
    pc = tt.tensor(base, dtype=tt.float32)[1:].view(6, 5).detach().requires_grad_()
    pg = tt.tensor(base, dtype=tt.float32).cuda()[1:].view(6, 5).detach().requires_grad_()
    oc, og = optim.Adam([pc], lr=0.1), optim.Adam([pg], lr=0.1)
    for _ in range(3):
        pc.grad = tt.tensor(g, dtype=tt.float32).transpose(0, 1)
        pg.grad = tt.tensor(g, dtype=tt.float32).cuda().transpose(0, 1)
        oc.step()
        og.step()
    np.testing.assert_allclose(to_numpy(pg), to_numpy(pc), rtol=1e-5, atol=1e-6)


def test_many_small_params():
    rng = np.random.default_rng(2)
    inits = [tt.tensor(rng.uniform(-1, 1, (int(n),)), dtype=tt.float32) for n in rng.integers(1, 40, 50)]
    pc = [a.clone().requires_grad_() for a in inits]
    pg = [a.cuda().requires_grad_() for a in inits]
    oc, og = optim.SGD(pc, lr=0.1, momentum=0.9), optim.SGD(pg, lr=0.1, momentum=0.9)
    for _ in range(3):
        for a, b in zip(pc, pg):
            g = tt.tensor(rng.uniform(-1, 1, tuple(a.shape)), dtype=tt.float32)
            a.grad, b.grad = g, g.cuda()
        oc.step()
        og.step()
    for a, b in zip(pg, pc):
        np.testing.assert_allclose(to_numpy(a), to_numpy(b), rtol=1e-5, atol=1e-6)
