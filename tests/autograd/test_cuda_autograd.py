"""Autograd mechanisms on the GPU against the same computation on the CPU: in-place ops through
views (CopySlices), double backward through fused kernels (composite formulas and recorded
adjoints), cumprod/prod gradients with zeros. float64 on both devices, so they agree closely."""
import numpy as np
import pytest

import tinytorch as tt
from support.numeric import to_numpy

pytestmark = pytest.mark.cuda
F = tt.nn.functional


def both(fn, *arrays):
    """fn's gradients on cpu and cuda for float64 leaves holding `arrays`."""
    out = []
    for dev in ("cpu", "cuda"):
        xs = [tt.tensor(a, dtype=tt.float64, device=dev, requires_grad=True) for a in arrays]
        grads = fn(*xs)
        out.append([to_numpy(g) for g in grads])
    return out


def assert_same(cpu, gpu):
    for c, g in zip(cpu, gpu):
        np.testing.assert_allclose(g, c, rtol=1e-9, atol=1e-12)


def test_inplace_through_views():
    def fn(x, z):
        y = x * 2
        y[:, 0] += z[:, 0]
        col = y[:, 1]
        y[0].mul_(z[0])
        y.t()[2].zero_()
        loss = (y * y).sum() + (col * 3).sum()
        return tt.autograd.grad(loss, (x, z))
    rng = np.random.default_rng(0)
    assert_same(*both(fn, rng.uniform(0.5, 1.5, (3, 4)), rng.uniform(0.5, 1.5, (3, 4))))


def _hvp(loss_fn):
    def fn(*xs):
        gs = tt.autograd.grad(loss_fn(*xs), xs, create_graph=True)
        dot = sum((g * g).sum() for g in gs)
        return tt.autograd.grad(dot, xs)
    return fn


def test_conv2d_double_backward():
    rng = np.random.default_rng(1)
    loss = lambda x, w: (F.conv2d(x, w, padding=1, stride=2) ** 2).sum()  # noqa: E731
    assert_same(*both(_hvp(loss), rng.standard_normal((2, 3, 7, 6)), rng.standard_normal((4, 3, 3, 3))))


@pytest.mark.parametrize("name", ["gelu", "silu", "mish", "softplus", "elu", "leaky_relu", "hardswish"])
def test_activation_double_backward(name):
    f = getattr(F, name)
    loss = lambda x: (f(x) * x).sum()  # noqa: E731
    assert_same(*both(_hvp(loss), np.random.default_rng(2).uniform(-4, 4, (5, 7))))


def test_norms_losses_and_pooling_double_backward():
    rng = np.random.default_rng(3)
    t_cpu = tt.tensor(rng.integers(0, 5, (4,)))

    def loss(x, w):
        t = t_cpu.to(x.device)
        h = F.layer_norm(x * w, (5,)) + F.rms_norm(x, (5,))
        p = F.max_pool2d(h.view(1, 1, 4, 5), 2, 1) + F.avg_pool2d(h.view(1, 1, 4, 5), 2, 1)
        return F.cross_entropy(h * h, t, label_smoothing=0.1) + (p ** 2).sum() + F.dropout(h, 0.0).sum()
    assert_same(*both(_hvp(loss), rng.standard_normal((4, 5)), rng.uniform(0.5, 1.5, (5,))))


def test_cumprod_and_prod_with_zeros():
    a = np.array([[0.5, 0.0, 2.0, 1.5], [1.2, 0.7, 0.0, 0.0], [0.9, 1.1, 1.3, 0.8]])
    loss = lambda x: (x.cumprod(1) ** 2).sum() + x.prod(1).sum() + x.prod() ** 2  # noqa: E731
    assert_same(*both(lambda x: tt.autograd.grad(loss(x), (x,)), a))
    assert_same(*both(_hvp(loss), a))


@pytest.mark.parametrize("kw", [dict(stride=2, padding=1, output_padding=1), dict(groups=2, dilation=(1, 2))])
def test_conv_transpose2d(kw):
    rng = np.random.default_rng(4)

    def fn(x, w, b):
        y = F.conv_transpose2d(x, w, b, **kw)
        return (y,) + tt.autograd.grad((y * y).sum(), (x, w, b))
    assert_same(*both(fn, rng.standard_normal((2, 4, 5, 5)), rng.standard_normal((4, 3, 3, 3)),
                      rng.standard_normal(3 * kw.get("groups", 1))))
