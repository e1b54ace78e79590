"""The exponential distribution."""
from __future__ import annotations

from tinytorch._core.size import Size
from tinytorch.distributions import constraints
from tinytorch.distributions._sampling import standard_exponential
from tinytorch.distributions.distribution import Distribution, broadcast_params, expand_params

__all__ = ["Exponential"]


class Exponential(Distribution):
    """Exponential distribution parameterized by ``rate`` (density rate * exp(-rate * x), x >= 0).

    Args:
        rate (float or Tensor): rate = 1 / scale of the distribution, > 0.
    """
    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate, validate_args=None) -> None:
        super().__init__(broadcast_params(self, rate=rate), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_params(self, Exponential, batch_shape, ("rate",), _instance)

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return self.rate.new_zeros(self.rate.shape)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=Size()):
        return standard_exponential(self._extended_shape(sample_shape), self.rate) / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (-self.rate * value).exp()

    def icdf(self, value):
        return -(-value).log1p() / self.rate

    def entropy(self):
        return 1.0 - self.rate.log()
