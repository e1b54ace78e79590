"""Layers and functions composed from existing ops, on the GPU against the CPU (float64 on both):
einsum, RNN/LSTM/GRU, unfold/fold, adaptive max pooling, interpolate, losses, numerics, the
Transformer, checkpointing. Each compares the output and the input gradients."""
import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
import tinytorch.nn.functional as F
from support.numeric import to_numpy

pytestmark = pytest.mark.cuda


def _run(fn, arrays, device, module=None):
    xs = [tt.tensor(a, dtype=tt.float64, device=device, requires_grad=True) for a in arrays]
    if module is not None:
        module.to(device)
    out = fn(*xs)
    outs = out if isinstance(out, tuple) else (out,)
    loss = sum((o.double() * o.double()).sum() for o in outs if o.dtype.is_floating_point)
    loss.backward()
    return [to_numpy(o) for o in outs] + [to_numpy(x.grad) for x in xs if x.grad is not None]


def check(fn, *arrays, module=None, rtol=1e-9):
    cpu = _run(fn, arrays, "cpu", module)
    gpu = _run(fn, arrays, "cuda", module)
    for c, g in zip(cpu, gpu):
        np.testing.assert_allclose(g, c, rtol=rtol, atol=1e-10)


rng = np.random.default_rng(0)


def test_einsum_and_contractions():
    check(lambda a, b: tt.einsum("bhqd,bhkd->bhqk", a, b), rng.standard_normal((2, 3, 4, 5)),
          rng.standard_normal((2, 3, 6, 5)))
    check(lambda a, b, c: tt.einsum("ij,jk,kl->il", a, b, c), rng.standard_normal((2, 3)),
          rng.standard_normal((3, 4)), rng.standard_normal((4, 5)))
    check(lambda a, b: tt.kron(a, b) + 0, rng.standard_normal((2, 3)), rng.standard_normal((3, 2)))


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_recurrent(kind):
    tt.manual_seed(0)
    m = getattr(nn, kind)(3, 4, num_layers=2, bidirectional=True).double()
    check(lambda x: m(x)[0], rng.standard_normal((5, 2, 3)), module=m)


def test_unfold_fold_and_pooling():
    kw = dict(kernel_size=(2, 3), dilation=(2, 1), padding=1, stride=(2, 1))
    check(lambda x: F.fold(F.unfold(x, **kw), (6, 7), **kw), rng.standard_normal((2, 3, 6, 7)))
    check(lambda x: F.adaptive_max_pool2d(x, (3, 4)), rng.standard_normal((2, 3, 7, 9)))
    check(lambda x: F.interpolate(x, scale_factor=1.5, mode="bilinear"), rng.standard_normal((2, 3, 4, 5)))


def test_losses_and_numerics():
    b = rng.standard_normal((5, 4))
    check(lambda x: F.triplet_margin_loss(x, x.flip(0), x * 0.5 + 1), rng.standard_normal((5, 4)))
    check(lambda x: F.gaussian_nll_loss(x, x.detach() * 0 + tt.tensor(b, device=x.device), x.exp()),
          rng.standard_normal((5, 4)))
    check(lambda x, y: tt.cdist(x, y, 3.0), rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 4, 3)))
    check(lambda x: tt.corrcoef(x), rng.standard_normal((3, 6)))
    v = tt.tensor(rng.integers(0, 6, 20), device="cuda")
    np.testing.assert_array_equal(to_numpy(tt.bincount(v)), np.bincount(to_numpy(v)))
    vals, inv, counts = tt.unique(v, return_inverse=True, return_counts=True)
    rv, ri, rc = np.unique(to_numpy(v), return_inverse=True, return_counts=True)
    for got, ref in ((vals, rv), (inv, ri), (counts, rc)):
        np.testing.assert_array_equal(to_numpy(got), ref)


def test_transformer_and_checkpoint():
    tt.manual_seed(1)
    model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=16,
                           dropout=0.0).double()
    check(lambda s, t: model(s, t), rng.standard_normal((4, 2, 8)), rng.standard_normal((3, 2, 8)), module=model)
    net = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 2)).double()
    from tinytorch.utils.checkpoint import checkpoint
    check(lambda x: checkpoint(net, x), rng.standard_normal((3, 4)), module=net)


def test_autocast_and_grad_scaler_on_cuda():
    from tinytorch.amp import GradScaler, autocast
    tt.manual_seed(2)
    model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 36, 5)).cuda()
    opt = tt.optim.SGD(model.parameters(), lr=0.05)
    scaler = GradScaler("cuda")
    x, y = tt.randn(8, 1, 8, 8, device="cuda"), tt.randint(0, 5, (8,), device="cuda")
    losses = []
    for _ in range(10):
        opt.zero_grad()
        with autocast("cuda"):
            logits = model(x)
            loss = F.cross_entropy(logits, y)
        assert logits.dtype == tt.float16 and loss.dtype == tt.float32
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    assert all(p.grad.dtype == tt.float32 for p in model.parameters())
    assert losses[-1] < losses[0]
