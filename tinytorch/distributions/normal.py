"""The normal (Gaussian) distribution."""
from __future__ import annotations

import math

from tinytorch.distributions._loc_scale import LocScaleDistribution
from tinytorch.distributions._sampling import standard_normal

__all__ = ["Normal"]


class Normal(LocScaleDistribution):
    """Normal distribution parameterized by ``loc`` (mean) and ``scale`` (standard deviation).

    Args:
        loc (float or Tensor): mean of the distribution.
        scale (float or Tensor): standard deviation of the distribution, > 0.
    """

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.scale.pow(2)

    def _standard_sample(self, shape):
        return standard_normal(shape, self.loc)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -((value - self.loc) ** 2) / (2 * self.variance) - self.scale.log() - math.log(math.sqrt(2 * math.pi))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + ((value - self.loc) / (self.scale * math.sqrt(2))).erf())

    def icdf(self, value):
        return self.loc + self.scale * (2 * value - 1).erfinv() * math.sqrt(2)

    def entropy(self):
        return 0.5 + 0.5 * math.log(2 * math.pi) + self.scale.log()
