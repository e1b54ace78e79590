"""tinytorch.amp on CPU (bfloat16 and float16): which ops autocast to lower precision and which to
float32, gradients coming back in the parameters' dtype, nesting, the decorator, thread locality;
GradScaler's scaling, unscaling, skipped steps, backoff, growth and state dict."""
import threading

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
import tinytorch.nn.functional as F
from tinytorch.amp import GradScaler, autocast


def _model():
    tt.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 36, 5), nn.LayerNorm(5))


@pytest.mark.parametrize("dtype", [tt.bfloat16, tt.float16])
def test_autocast_op_dtypes_and_gradients(dtype):
    m = _model()
    x = tt.randn(3, 1, 8, 8)
    ref = m(x)
    with autocast("cpu", dtype=dtype):
        h = m[0](x)
        y = m(x)
        logits = m[3](m[2](m[1](h)))
        loss = F.cross_entropy(logits, tt.tensor([0, 1, 2]))
        mm = x.flatten(1) @ x.flatten(1).t()
        soft = logits.softmax(-1)
        x64 = x.double().flatten(1)
        kept = x64 @ x64.t()
    assert h.dtype == dtype and logits.dtype == dtype and mm.dtype == dtype
    assert y.dtype == dtype and soft.dtype == dtype and loss.dtype == tt.float32   # CPU policy: only CE in float32
    assert kept.dtype == tt.float64                                                           # float64 untouched
    tol = 0.05 if dtype == tt.bfloat16 else 0.01
    np.testing.assert_allclose(y.detach().float().numpy(), ref.detach().numpy(), atol=tol * 4, rtol=tol)
    loss.backward()
    assert all(p.grad.dtype == tt.float32 for p in m.parameters() if p.grad is not None)
    assert m(x).dtype == tt.float32                                                           # off outside


def test_autocast_nesting_decorator_and_threads():
    x = tt.randn(2, 3)
    w = tt.randn(3, 3)
    with autocast("cpu"):
        assert (x @ w).dtype == tt.bfloat16
        with autocast("cpu", enabled=False):
            assert (x @ w).dtype == tt.float32
        assert (x @ w).dtype == tt.bfloat16
        seen = []
        t = threading.Thread(target=lambda: seen.append((x @ w).dtype))
        t.start()
        t.join()
        assert seen == [tt.float32]                     # autocast state is per thread
    with autocast("cuda"):                              # another device type: CPU tensors untouched
        assert (x @ w).dtype == tt.float32

    @autocast("cpu", dtype=tt.float16)
    def f(a, b):
        return F.linear(a, b)
    assert f(x, w).dtype == tt.float16
    assert tt.autocast is autocast
    with pytest.raises(RuntimeError, match="float16 or bfloat16"):
        autocast("cpu", dtype=tt.float64)


class _Opt:
    """Records steps; the scaler only needs param_groups and step()."""

    def __init__(self, params):
        self.param_groups = [{"params": list(params)}]
        self.steps = 0

    def step(self):
        self.steps += 1


def test_grad_scaler_scaling_skipping_and_growth():
    p = tt.nn.Parameter(tt.tensor([1.0, 2.0]))
    opt = _Opt([p])
    scaler = GradScaler("cpu", init_scale=8.0, growth_interval=2)
    loss = (p * tt.tensor([3.0, 4.0])).sum()
    scaled = scaler.scale(loss)
    assert scaled.item() == pytest.approx(8.0 * loss.item())
    scaled.backward()
    np.testing.assert_allclose(p.grad.numpy(), [24.0, 32.0])
    scaler.step(opt)                                    # unscales, then steps
    np.testing.assert_allclose(p.grad.numpy(), [3.0, 4.0])
    assert opt.steps == 1
    scaler.update()
    p.grad = tt.tensor([float("inf"), 1.0])             # an overflowing step: skipped, scale backs off
    scaler.step(opt)
    scaler.update()
    assert opt.steps == 1 and scaler.get_scale() == 4.0
    for _ in range(2):                                  # growth_interval clean steps: the scale doubles
        p.grad = tt.tensor([1.0, 1.0])
        scaler.step(opt)
        scaler.update()
    assert opt.steps == 3 and scaler.get_scale() == 8.0
    with pytest.raises(RuntimeError, match="already been called"):
        p.grad = tt.tensor([1.0, 1.0])
        scaler.unscale_(opt)
        scaler.unscale_(opt)
    state = scaler.state_dict()
    other = GradScaler("cpu")
    other.load_state_dict(state)
    assert other.get_scale() == 8.0 and other.get_growth_interval() == 2
    off = GradScaler("cpu", enabled=False)
    assert off.scale(loss) is loss and off.get_scale() == 1.0


def test_float16_training_with_grad_scaler():
    tt.manual_seed(1)
    model = nn.Linear(8, 2).half()
    opt = tt.optim.SGD(model.parameters(), lr=0.1)
    scaler = GradScaler("cpu", init_scale=2.0 ** 10)
    x, y = tt.randn(16, 8).half(), tt.randint(0, 2, (16,))
    first = None
    for _ in range(20):
        opt.zero_grad()
        loss = F.cross_entropy(model(x).float(), y)
        first = first if first is not None else loss.item()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    assert loss.item() < first
