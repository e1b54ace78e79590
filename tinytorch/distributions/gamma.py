"""The gamma distribution, and the standard gamma sampler Beta and Dirichlet share."""
from __future__ import annotations

from numbers import Number

from tinytorch._dtype import float64, float32
from tinytorch._functional import where
from tinytorch._size import Size
from tinytorch.autograd.grad_mode import no_grad
from tinytorch.distributions import constraints
from tinytorch.distributions._sampling import standard_normal, standard_uniform
from tinytorch.distributions._special import digamma, lgamma, xlogy
from tinytorch.distributions.distribution import Distribution, expand_params
from tinytorch.distributions.utils import broadcast_all, finfo
from tinytorch.tensor import Tensor

__all__ = ["Gamma", "standard_gamma"]

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


class Gamma(Distribution):
    """Gamma distribution parameterized by ``concentration`` (shape) and ``rate`` (inverse scale).

    Args:
        concentration (float or Tensor): shape parameter alpha, > 0.
        rate (float or Tensor): rate parameter beta = 1 / scale, > 0.

    ``rsample`` is not implemented (PyTorch differentiates samples through the implicit
    reparameterization of the gamma CDF, which needs kernels tinytorch lacks): ``has_rsample``
    is False and ``sample`` returns non-differentiable draws.
    """
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = False

    def __init__(self, concentration, rate, validate_args=None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        batch_shape = Size() if isinstance(concentration, Number) and isinstance(rate, Number) \
            else self.concentration.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_params(self, Gamma, batch_shape, ("concentration", "rate"), _instance)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            value = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
            return value.clamp(min=finfo(value.dtype).tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.to(self.rate.dtype) if not value.dtype.is_floating_point else value
        return (xlogy(self.concentration, self.rate) + xlogy(self.concentration - 1, value)
                - self.rate * value - lgamma(self.concentration))

    def entropy(self):
        return (self.concentration - self.rate.log() + lgamma(self.concentration)
                + (1.0 - self.concentration) * digamma(self.concentration))
