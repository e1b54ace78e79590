"""Special functions the distributions need and tinytorch has no op for, composed from existing
ops (so they run on every device and autograd differentiates them): lgamma and digamma for
positive arguments, log of the beta function. (erfinv and xlogy are ops: Tensor.erfinv,
Tensor.xlogy.)

They are private to the distributions and computed in float64 (16-bit and float32 arguments are
cast back), which keeps the Lanczos sum's cancellation harmless."""
from __future__ import annotations

import math

from tinytorch._core.dtype import float64
from tinytorch._ops.elementwise import where
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
