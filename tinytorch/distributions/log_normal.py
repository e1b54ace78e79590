"""The log-normal distribution: exp of a normal variable."""
from __future__ import annotations

from operator import attrgetter

from tinytorch.distributions import constraints
from tinytorch.distributions.normal import Normal
from tinytorch.distributions.transformed_distribution import TransformedDistribution
from tinytorch.distributions.transforms import ExpTransform

__all__ = ["LogNormal"]


class LogNormal(TransformedDistribution):
    """Log-normal distribution: ``X ~ Normal(loc, scale); Y = exp(X)``.

    Args:
        loc (float or Tensor): mean of log of distribution.
        scale (float or Tensor): standard deviation of log of the distribution, > 0.
    """
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None) -> None:
        base_dist = Normal(loc, scale, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    loc = property(attrgetter("base_dist.loc"))
    scale = property(attrgetter("base_dist.scale"))

    @property
    def mean(self):
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self):
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self):
        scale_sq = self.scale.pow(2)
        return scale_sq.expm1() * (2 * self.loc + scale_sq).exp()

    def entropy(self):
        return self.base_dist.entropy() + self.loc
