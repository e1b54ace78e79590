"""Gamma(alpha, 1) draws (Marsaglia and Tsang) and their reparameterized gradient.

The gradient is the implicit reparameterization one (as PyTorch's ``_standard_gamma_grad``):
x = F^-1(u; alpha) with u held fixed gives
dx/dalpha = -(dF/dalpha)(x; alpha) / f(x; alpha), F the regularized lower incomplete gamma
function P(alpha, x) and f the Gamma(alpha, 1) density.

dP/dalpha comes from P's series, P = sum_n t_n with t_n = x^(alpha+n) e^-x / Gamma(alpha+n+1),
each term differentiated in closed form: dt_n/dalpha = t_n (log x - digamma(alpha + n + 1))
(digamma(alpha + n + 1) = digamma(alpha + 1) + sum_{k<=n} 1/(alpha + k)).
The terms are formed in log space (a cumulative sum over n), so nothing overflows; the series is
summed to n = max(x) + 12 sqrt(max(x)) + 30, past which the Poisson-like terms are below 1e-16
of the sum. Work and memory are O(elements * terms), done in chunks of <= 2^22 entries."""
from __future__ import annotations

import math

from tinytorch._tensor.creation import arange
from tinytorch._core.dtype import float32, float64
from tinytorch._ops.elementwise import where
from tinytorch._ops.shape import cat
from tinytorch.autograd.function import Function
from tinytorch.autograd.grad_mode import no_grad
from tinytorch.distributions._sampling import standard_normal, standard_uniform
from tinytorch.distributions._special import digamma, lgamma
from tinytorch.distributions.utils import finfo
from tinytorch._tensor.tensor import Tensor

_CHUNK = 1 << 22
_MAX_ROUNDS = 200       # acceptance is >= 95% per round; 200 rejections in a row do not happen


def standard_gamma(concentration: Tensor) -> Tensor:
    """Gamma(concentration, 1) draws of concentration's shape, by Marsaglia and Tsang's method
    (a squeezed normal, accepted with probability >= 0.95), vectorized: every round proposes
    for all elements and keeps the first acceptance of each; one host check per round. Below 1
    the concentration is boosted by one and the draw multiplied by U^(1/concentration). Draws
    are clamped to the dtype's smallest normal number (as PyTorch). Not differentiable."""
    with no_grad():
        alpha = concentration.to(float64 if concentration.dtype == float64 else float32)
        valid = (alpha > 0) & alpha.isfinite()
        a = where(valid, alpha, alpha.new_ones(()))
        boost = a < 1
        d = where(boost, a + 1, a) - 1.0 / 3.0
        c = (9 * d).rsqrt()
        result = alpha.new_zeros(alpha.shape)
        pending = valid.clone()
        for _ in range(_MAX_ROUNDS):
            x = standard_normal(alpha.shape, alpha)
            u = standard_uniform(alpha.shape, alpha)
            v = (1 + c * x).pow(3)
            positive = v > 0
            safe_v = where(positive, v, v.new_ones(()))
            accept = positive & (u.log() < 0.5 * x * x + d - d * safe_v + d * safe_v.log())
            take = pending & accept
            result = where(take, d * safe_v, result)
            pending = pending & ~accept
            if not bool(pending.any()):
                break
        else:
            raise RuntimeError("standard_gamma: rejection sampling did not converge")
        u = standard_uniform(alpha.shape, alpha)
        result = where(boost, result * u.pow(a.reciprocal()), result)
        result = where(valid, result, alpha.new_full((), float("nan")))
        out = result.to(concentration.dtype)
        return out.clamp(min=finfo(out.dtype).tiny)


def _series_terms(x_max: float) -> int:
    return int(x_max + 12.0 * math.sqrt(x_max) + 30)


def _dP_dalpha(alpha: Tensor, x: Tensor, terms: int) -> Tensor:
    # alpha, x: (m,) float64 -> (m,); both the terms and digamma(alpha + n + 1) by recurrences in n
    n = arange(1, terms + 1, dtype=float64, device=alpha.device)                   # (terms,)
    log_x = x.log().unsqueeze(-1)                                                   # (m, 1)
    a = alpha.unsqueeze(-1)
    a_n = a + n                                                                     # (m, terms)
    log_t0 = a * log_x - x.unsqueeze(-1) - lgamma(a + 1.0)                         # (m, 1)
    log_t = cat([log_t0, log_t0 + (log_x - a_n.log()).cumsum(-1)], -1)              # (m, terms + 1)
    psi0 = digamma(a + 1.0)                                                         # (m, 1)
    psi = cat([psi0, psi0 + a_n.reciprocal().cumsum(-1)], -1)                       # digamma(a + n + 1)
    return (log_t.exp() * (log_x - psi)).sum(-1)


def _log_series_terms(a: Tensor, x: Tensor, terms: int) -> Tensor:
    # a, x: (m,) float64, x > 0 -> log t_n, (m, terms + 1)
    n = arange(1, terms + 1, dtype=float64, device=a.device)
    log_x = x.log().unsqueeze(-1)
    a = a.unsqueeze(-1)
    log_t0 = a * log_x - x.unsqueeze(-1) - lgamma(a + 1.0)
    return cat([log_t0, log_t0 + (log_x - (a + n).log()).cumsum(-1)], -1)


def regularized_gamma_p(a: Tensor, x: Tensor) -> Tensor:
    """P(a, x), the regularized lower incomplete gamma function, for a > 0 and x >= 0 of one
    shape: the series summed in log space (as above), differentiable in both arguments; the
    result in a's dtype."""
    shape = tuple(a.shape)
    a64, x64 = a.to(float64).reshape(-1), x.to(float64).reshape(-1)
    zero = x64 <= 0
    safe_x = where(zero, x64.new_ones(()), x64)
    if a64.numel() == 0:
        return a.new_zeros(shape)
    terms = _series_terms(float(safe_x.detach().max().item()))
    step = max(1, _CHUNK // (terms + 1))
    parts = [_log_series_terms(a64[i:i + step], safe_x[i:i + step], terms).logsumexp(-1).exp()
             for i in range(0, a64.numel(), step)]
    p = cat(parts) if len(parts) > 1 else parts[0]
    return where(zero, p.new_zeros(()), p).reshape(shape).to(a.dtype)


def standard_gamma_grad(alpha: Tensor, x: Tensor) -> Tensor:
    """dx/dalpha of Gamma(alpha, 1) draws x, holding their uniform quantile fixed."""
    with no_grad():
        a, v = alpha.to(float64).reshape(-1), x.to(float64).reshape(-1)
        out = []
        if v.numel():
            terms = _series_terms(float(v.max().item()))
            step = max(1, _CHUNK // (terms + 1))
            for start in range(0, v.numel(), step):
                ac, vc = a[start:start + step], v[start:start + step]
                density = ((ac - 1.0) * vc.log() - vc - lgamma(ac)).exp()
                out.append(-_dP_dalpha(ac, vc, terms) / density)
        grad = cat(out) if out else a
        return grad.reshape(tuple(alpha.shape)).to(alpha.dtype)


class _StandardGammaRsample(Function):
    @staticmethod
    def forward(ctx, alpha):
        x = standard_gamma(alpha)
        ctx.save_for_backward(alpha, x)
        return x

    @staticmethod
    def backward(ctx, grad):
        alpha, x = ctx.saved_tensors
        return grad * standard_gamma_grad(alpha, x)


def standard_gamma_rsample(concentration: Tensor) -> Tensor:
    """Gamma(concentration, 1) draws, differentiable with respect to concentration."""
    return _StandardGammaRsample.apply(concentration)
