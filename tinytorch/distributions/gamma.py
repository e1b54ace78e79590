"""The gamma distribution."""
from __future__ import annotations

from tinytorch._core.size import Size
from tinytorch.distributions import constraints
from tinytorch.distributions._gamma_sampler import regularized_gamma_p, standard_gamma_rsample
from tinytorch.distributions._special import digamma, lgamma
from tinytorch.distributions.distribution import Distribution, broadcast_params, expand_params
from tinytorch.distributions.utils import finfo

__all__ = ["Gamma"]


class Gamma(Distribution):
    """Gamma distribution parameterized by ``concentration`` (shape) and ``rate`` (inverse scale).

    Args:
        concentration (float or Tensor): shape parameter alpha, > 0.
        rate (float or Tensor): rate parameter beta = 1 / scale, > 0.

    ``rsample`` differentiates the draws with respect to both parameters (the implicit
    reparameterization gradient for the concentration, as PyTorch's).
    """
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None) -> None:
        super().__init__(broadcast_params(self, concentration=concentration, rate=rate), validate_args=validate_args)

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

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        value = standard_gamma_rsample(self.concentration.expand(shape)) / self.rate.expand(shape)
        return value.clamp(min=finfo(value.dtype).tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.to(self.rate.dtype) if not value.dtype.is_floating_point else value
        return (self.concentration.xlogy(self.rate) + (self.concentration - 1).xlogy(value)
                - self.rate * value - lgamma(self.concentration))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        x = self.rate * value
        return regularized_gamma_p(self.concentration.expand(x.shape), x)

    def entropy(self):
        return (self.concentration - self.rate.log() + lgamma(self.concentration)
                + (1.0 - self.concentration) * digamma(self.concentration))
