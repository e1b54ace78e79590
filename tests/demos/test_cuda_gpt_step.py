"""demo/gpt.py's training step on the GPU: replayed from a CUDA graph (--cuda-graph) it trains as the
eager step does (losses and parameters over several steps), and clip_grad_norm_ on CUDA gradients
matches float64 numpy without reading anything on the host (it captures in a graph)."""
from __future__ import annotations

import numpy as np
import pytest
from support.script_loader import loaded

import tinytorch as tt
import tinytorch.nn as nn

from support.numeric import GRAD_TOL, TOL, assert_close, to_numpy

pytestmark = pytest.mark.cuda

DEV = "cuda"
SHAPE = dict(vocab_size=65, block_size=32, n_layer=2, n_head=4, n_embd=64, dropout=0.0)


@pytest.fixture(scope="module")
def demo():
    yield from loaded("demo/gpt.py", "gpt_demo_cuda")


def batches(n, seed=0, B=4, T=32):
    rng = np.random.default_rng(seed)
    return [tuple(tt.tensor(rng.integers(0, 65, (B, T)), device=DEV) for _ in range(2)) for _ in range(n)]


def model_and_optimizer(demo, capturable):
    tt.manual_seed(0)
    model = demo.GPT(demo.GPTConfig(**SHAPE)).to(DEV)
    opt = tt.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.95), weight_decay=0.1, fused=True,
                         capturable=capturable)
    return model, opt


@pytest.mark.parametrize("bf16", [False, True], ids=["float32", "bf16-autocast"])
def test_graphed_gpt_step_trains_as_the_eager_step(demo, bf16):
    data = batches(7)

    def autocast():
        return tt.autocast(device_type="cuda", dtype=tt.bfloat16, enabled=bf16)
    eager, opt_e = model_and_optimizer(demo, capturable=False)    # the demo's usual fused AdamW
    step_e = demo.make_train_step(eager, opt_e, autocast, grad_clip=0.5)
    eager_losses = []
    for x, y in data:
        eager_losses.append(float(step_e(x, y)))
        opt_e.zero_grad(set_to_none=True)
    graphed, opt_g = model_and_optimizer(demo, capturable=True)
    step_g = demo.GraphedStep(demo.make_train_step(graphed, opt_g, autocast, grad_clip=0.5), opt_g, data[:2])
    losses = list(step_g.warmup_losses)
    for x, y in data[2:]:
        losses.append(float(step_g(x, y)))
    tol = TOL["bfloat16"] if bf16 else GRAD_TOL["float32"]   # after several optimizer steps
    assert_close(np.array(losses), np.array(eager_losses), tol=tol, what="losses")
    for (name, pe), pg in zip(eager.named_parameters(), graphed.parameters()):
        assert_close(pg, pe, tol=tol, what=name)
    st = opt_g.state[next(iter(graphed.parameters()))]["step"]
    assert st.is_cuda and float(st.cpu()) == len(data)     # every replay stepped on the device


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
def test_clip_grad_norm_on_cuda_matches_numpy(dtype, norm_type):
    rng = np.random.default_rng(1)
    grads = [rng.normal(size=(33, 17)), rng.normal(size=(65,)), rng.normal(size=(3, 4, 5))]
    params = []
    for g in grads:
        p = nn.Parameter(tt.zeros(*g.shape, dtype=getattr(tt, dtype), device=DEV))
        p.grad = tt.tensor(g, dtype=getattr(tt, dtype), device=DEV)
        params.append(p)
    ref = [to_numpy(p.grad).astype(np.float64) for p in params]   # the rounded inputs
    flat = np.concatenate([g.ravel() for g in ref])
    total = np.abs(flat).max() if np.isinf(norm_type) else (np.abs(flat) ** norm_type).sum() ** (1 / norm_type)
    max_norm = 0.25 * total
    out = nn.utils.clip_grad_norm_(params, max_norm, norm_type)
    assert out.is_cuda and out.dtype == getattr(tt, dtype)
    assert_close(out, total, dtype)
    for p, g in zip(params, ref):
        assert_close(p.grad, g * (max_norm / (total + 1e-6)), dtype)


def test_clip_grad_norm_captures_in_a_graph():
    rng = np.random.default_rng(2)
    params = [nn.Parameter(tt.zeros(40, 7, device=DEV)), nn.Parameter(tt.zeros(9, device=DEV))]
    for p in params:
        p.grad = tt.zeros_like(p)
    side = tt.cuda.Stream()
    side.wait_stream(tt.cuda.current_stream())
    with tt.cuda.stream(side):
        nn.utils.clip_grad_norm_(params, 1.0)
    tt.cuda.current_stream().wait_stream(side)
    g = tt.cuda.CUDAGraph()
    with tt.cuda.graph(g):       # a host read (.item()) would make the capture raise
        total = nn.utils.clip_grad_norm_(params, 1.0)
    for scale in (0.01, 10.0):   # under and over the threshold
        new = [rng.normal(size=p.shape) * scale for p in params]
        for p, v in zip(params, new):
            p.grad.copy_(tt.tensor(v, dtype=tt.float32, device=DEV))
        g.replay()
        norm = np.sqrt(sum((v.astype(np.float32).astype(np.float64) ** 2).sum() for v in new))
        assert_close(total, norm, "float32")
        for p, v in zip(params, new):
            assert_close(p.grad, v * min(1.0, 1.0 / (norm + 1e-6)), "float32")


ADAM_CASES = [dict(), dict(weight_decay=0.1, decoupled_weight_decay=True), dict(weight_decay=0.1, amsgrad=True),
              dict(maximize=True, betas=(0.8, 0.9))]


@pytest.mark.parametrize("lr_on_device", [False, True], ids=["lr-float", "lr-tensor"])
@pytest.mark.parametrize("kw", ADAM_CASES, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
def test_capturable_adam_kernel_equals_the_fused_step(dtype, kw, lr_on_device):
    rng = np.random.default_rng(3)
    shapes = [(37, 5), (128,), (3,)]   # vectorized and scalar tails
    w0 = [rng.uniform(-1, 1, s) for s in shapes]
    grads = [[rng.uniform(-1, 1, s) for s in shapes] for _ in range(5)]
    dt = getattr(tt, dtype)
    results = []
    for capturable in (False, True):
        ps = [tt.tensor(w, dtype=dt, device=DEV, requires_grad=True) for w in w0]
        # A float32 lr tensor holds 0.05 rounded to float32: the host-lr reference uses that value.
        lr = float(np.float32(0.05)) if lr_on_device else 0.05
        if capturable and lr_on_device:
            lr = tt.tensor(0.05, device=DEV)
        opt = tt.optim.Adam(ps, lr=lr, capturable=capturable, fused=True, **kw)
        for gs in grads:
            for p, g in zip(ps, gs):
                p.grad = tt.tensor(g, dtype=dt, device=DEV)
            opt.step()
        results.append((ps, opt))
    (fused, opt_f), (cap, opt_c) = results
    for pf, pc in zip(fused, cap):
        assert_close(pc, pf, dtype, tol=GRAD_TOL[dtype])
        assert_close(opt_c.state[pc]["exp_avg_sq"], opt_f.state[pf]["exp_avg_sq"], dtype, tol=GRAD_TOL[dtype])
        st = opt_c.state[pc]["step"]
        assert st.is_cuda and float(st.cpu()) == len(grads)


def test_capturable_adam_rejects_a_step_count_off_the_device():
    from tinytorch import _C
    p = tt.zeros(4, device=DEV)
    g, m, v = tt.ones(4, device=DEV), tt.zeros(4, device=DEV), tt.zeros(4, device=DEV)
    with pytest.raises(RuntimeError, match=r"adam_step_capturable_multi_: state_step of tensor 0 must be a "
                                           r"one-element float32 tensor on cuda"):
        _C.adam_step_capturable_multi_([p._impl], [g._impl], [m._impl], [v._impl], [], [tt.zeros(1)._impl], None,
                                       0.1, 0.9, 0.999, 1e-8, 0.0, False, False, False)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
def test_strided_copies_and_broadcasts_with_a_dense_inner_dim(dtype):
    # the inner-vectorized strided loops: attention's head transposes, linear's bias broadcast,
    # a 0-dim scale (clip_grad_norm_), and an offset view that must take the scalar path
    rng = np.random.default_rng(4)
    dt = getattr(tt, dtype)
    x = rng.normal(size=(2, 16, 3, 64))
    t = tt.tensor(x, dtype=dt, device=DEV)
    ref = to_numpy(t).astype(np.float64)
    assert_close(t.transpose(1, 2).contiguous(), ref.transpose(0, 2, 1, 3), dtype, tol=(0, 0))
    # the cast rounds float64 values to float32 (exact for the 16-bit and float32 inputs)
    assert_close(t.transpose(1, 2).float(), ref.transpose(0, 2, 1, 3).astype(np.float32), "float32", tol=(0, 0))
    bias = tt.tensor(rng.normal(size=64), dtype=dt, device=DEV)
    out = tt.empty(40, 64, dtype=dt, device=DEV)
    out.copy_(bias)
    assert_close(out, np.broadcast_to(to_numpy(bias), (40, 64)), dtype, tol=(0, 0))
    scale = tt.tensor(0.5, dtype=dt, device=DEV)
    assert_close(t.transpose(1, 2) * scale, ref.transpose(0, 2, 1, 3) * 0.5, dtype)
    assert_close(t.transpose(1, 2) + bias, ref.transpose(0, 2, 1, 3) + to_numpy(bias), dtype)
    odd = t.reshape(-1)[1:1 + 2 * 16 * 3 * 63].reshape(2, 16, 3, 63).transpose(1, 2).contiguous()
    assert_close(odd, ref.reshape(-1)[1:1 + 2 * 16 * 3 * 63].reshape(2, 16, 3, 63).transpose(0, 2, 1, 3), dtype,
                 tol=(0, 0))
