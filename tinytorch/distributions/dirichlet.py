"""The Dirichlet and beta distributions (a beta is a two-category Dirichlet)."""
from __future__ import annotations

from tinytorch._ops.elementwise import where
from tinytorch._ops.index import stack
from tinytorch._core.size import Size
from tinytorch.distributions import constraints
from tinytorch.distributions._gamma_sampler import standard_gamma_rsample
from tinytorch.distributions._special import digamma, lbeta, lgamma
from tinytorch.distributions.distribution import Distribution, broadcast_params, expand_params
from tinytorch.distributions.utils import finfo
from tinytorch.nn.functional import one_hot

__all__ = ["Dirichlet", "Beta"]


def _dirichlet_rsample(concentration):
    # reparameterized gamma draws normalized over the last dim (the gradient flows through the
    # normalization); clamped into the open simplex
    g = standard_gamma_rsample(concentration)
    x = g / g.sum(-1, keepdim=True)
    info = finfo(x.dtype)
    return x.clamp(min=info.tiny, max=1 - info.eps)


class Dirichlet(Distribution):
    """Dirichlet distribution parameterized by ``concentration`` (..., K), all > 0.

    ``rsample`` differentiates through reparameterized gamma draws.
    """
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_params(self, Dirichlet, batch_shape, ("concentration",), _instance, event_dims=1)

    def rsample(self, sample_shape=Size()):
        return _dirichlet_rsample(self.concentration.expand(self._extended_shape(sample_shape)))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((self.concentration - 1.0).xlogy(value).sum(-1) + lgamma(self.concentration.sum(-1))
                - lgamma(self.concentration).sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        m = (self.concentration - 1).clamp(min=0.0)
        m = m / m.sum(-1, keepdim=True)
        # all concentrations < 1: the density peaks at the vertex of the largest one
        vertex = one_hot(self.concentration.argmax(-1), self.concentration.shape[-1]).to(m.dtype)
        return where((self.concentration < 1).all(-1, keepdim=True), vertex, m)

    @property
    def variance(self):
        con0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (con0 - self.concentration) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        k = self.concentration.shape[-1]
        a0 = self.concentration.sum(-1)
        return (lgamma(self.concentration).sum(-1) - lgamma(a0) - (k - a0) * digamma(a0)
                - ((self.concentration - 1.0) * digamma(self.concentration)).sum(-1))


class Beta(Distribution):
    """Beta distribution parameterized by ``concentration1`` (alpha) and ``concentration0`` (beta).

    ``rsample`` differentiates through reparameterized gamma draws.
    """
    arg_constraints = {"concentration1": constraints.positive, "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None) -> None:
        batch_shape = broadcast_params(self, concentration1=concentration1, concentration0=concentration0)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_params(self, Beta, batch_shape, ("concentration1", "concentration0"), _instance)

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return (self.concentration1 - 1) / (self.concentration1 + self.concentration0 - 2)

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        both = stack([self.concentration1.expand(shape), self.concentration0.expand(shape)], -1)
        return _dirichlet_rsample(both)[..., 0]

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((self.concentration1 - 1).xlogy(value) + (self.concentration0 - 1).xlogy(1 - value)
                - lbeta(self.concentration1, self.concentration0))

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        total = a + b
        return lbeta(a, b) - (a - 1) * digamma(a) - (b - 1) * digamma(b) + (total - 2) * digamma(total)
