"""Special functions the distributions need, composed from existing ops (so they run on every
device and autograd differentiates them): lgamma and digamma for positive arguments, erfinv,
xlogy, log of the beta function.

tinytorch has no lgamma/digamma/erfinv kernels yet; these are private to the distributions and
computed in float64 (16-bit and float32 arguments are cast back), which keeps the Lanczos sum's
cancellation harmless."""
from __future__ import annotations

import math

from tinytorch._core.dtype import float64
from tinytorch._generated.functional import where
from tinytorch.autograd.function import Function
from tinytorch._tensor.tensor import Tensor

# Lanczos approximation, g = 7, n = 9 (relative error ~1e-15 for Re(x) > 0.5)
_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
            1.5056327351493116e-7)
# digamma's asymptotic series in 1/y^2 (y >= 10: truncation error below 1e-16)
_DIGAMMA_SERIES = (-1.0 / 12, 1.0 / 120, -1.0 / 252, 1.0 / 240, -1.0 / 132, 691.0 / 32760, -1.0 / 12)
_DIGAMMA_SHIFT = 10


def _f64(x: Tensor) -> Tensor:
    return x if x.dtype == float64 else x.to(float64)


def lgamma(x: Tensor) -> Tensor:
    """log Gamma(x) for x > 0 (NaN elsewhere is not promised: callers validate positivity)."""
    z = _f64(x)
    small = z < 0.5
    y = where(small, z + 1.0, z) - 1.0          # lgamma(x) = lgamma(x + 1) - log(x) below 0.5
    a = _LANCZOS[0]
    for i, c in enumerate(_LANCZOS[1:], start=1):
        a = a + c / (y + float(i))
    t = y + (_LANCZOS_G + 0.5)
    out = 0.5 * math.log(2 * math.pi) + (y + 0.5) * t.log() - t + a.log()
    out = out - where(small, z, z.new_ones(())).log()
    return out.to(x.dtype)


def digamma(x: Tensor) -> Tensor:
    """d/dx log Gamma(x) for x > 0: shifted by the recurrence psi(x) = psi(x + 1) - 1/x to
    x >= 10, then the asymptotic series."""
    z = _f64(x)
    shift = 0.0
    for k in range(_DIGAMMA_SHIFT):
        shift = shift + 1.0 / (z + float(k))
    y = z + float(_DIGAMMA_SHIFT)
    r2 = 1.0 / (y * y)
    series, power = 0.0, r2
    for c in _DIGAMMA_SERIES:
        series = series + c * power
        power = power * r2
    return (y.log() - 0.5 / y + series - shift).to(x.dtype)


def lbeta(a: Tensor, b: Tensor) -> Tensor:
    """log B(a, b) = lgamma(a) + lgamma(b) - lgamma(a + b)."""
    return lgamma(a) + lgamma(b) - lgamma(a + b)


def xlogy(x, y: Tensor) -> Tensor:
    """x * log(y), 0 where x == 0 (also when y == 0); gradients stay finite there."""
    if not isinstance(x, Tensor):
        return y.log() * x if x != 0 else y.new_zeros(y.shape)
    zero = x == 0
    safe_y = where(zero, y.new_ones(()), y)
    return where(zero, x.new_zeros(()), x * safe_y.log())


def _erfinv_value(y: Tensor) -> Tensor:
    # Giles' single-precision approximation, then two Newton steps on erf(x) = y in float64
    z = _f64(y)
    w = -((1.0 - z) * (1.0 + z)).log()
    central = w < 5.0
    wc = where(central, w, w.new_full((), 2.5)) - 2.5
    wt = where(central, w.new_full((), 9.0), w).sqrt() - 3.0
    pc, pt = 2.81022636e-08, -0.000200214257
    for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164,
              0.246640727, 1.50140941):
        pc = c + pc * wc
    for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047,
              1.00167406, 2.83297682):
        pt = c + pt * wt
    x = where(central, pc, pt) * z
    for _ in range(2):
        step = (x.erf() - z) / ((2.0 / math.sqrt(math.pi)) * (-x * x).exp())
        x = x - where(step.isfinite(), step, step.new_zeros(()))
    edge = z.abs() == 1.0
    x = where(edge, z * math.inf, x)
    return x.to(y.dtype)


class _Erfinv(Function):
    @staticmethod
    def forward(ctx, y):
        x = _erfinv_value(y)
        ctx.save_for_backward(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (math.sqrt(math.pi) / 2.0) * (x * x).exp()


def erfinv(y: Tensor) -> Tensor:
    """The inverse error function on [-1, 1] (+-inf at +-1), differentiable."""
    return _Erfinv.apply(y)
