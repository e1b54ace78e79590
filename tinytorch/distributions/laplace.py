"""The Laplace (double exponential) distribution."""
from __future__ import annotations

import math

from tinytorch.distributions._loc_scale import LocScaleDistribution
from tinytorch.distributions._sampling import standard_uniform
from tinytorch.distributions.utils import finfo

__all__ = ["Laplace"]


class Laplace(LocScaleDistribution):
    """Laplace distribution parameterized by ``loc`` and ``scale``.

    Args:
        loc (float or Tensor): mean of the distribution.
        scale (float or Tensor): scale of the distribution, > 0.
    """

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return math.sqrt(2) * self.scale

    def _standard_sample(self, shape):
        # u uniform on (-1, 1): 2U - 1 shifted away from -1 by eps so log1p(-|u|) is finite
        eps = finfo(self.loc.dtype).eps
        u = standard_uniform(shape, self.loc) * (2 - eps) + (eps - 1)
        return -(u.sign() * (-u.abs()).log1p())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * (-(value - self.loc).abs() / self.scale).expm1()

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self):
        return 1 + (2 * self.scale).log()
