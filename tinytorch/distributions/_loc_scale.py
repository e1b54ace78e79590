"""The shared part of the location-scale families (Normal, Laplace): X = loc + scale * Z with Z
the family's standard variate, so the parameters, their broadcasting, expand, mean, mode and
the reparameterized sample are the same code; each family adds Z and its own densities."""
from __future__ import annotations

from tinytorch._core.size import Size
from tinytorch.distributions import constraints
from tinytorch.distributions.distribution import Distribution, broadcast_params, expand_params
from tinytorch._tensor.tensor import Tensor

__all__ = ["LocScaleDistribution"]


class LocScaleDistribution(Distribution):
    """Base of a distribution parameterized by ``loc`` (real) and ``scale`` (> 0) on the real
    line whose mean and mode are ``loc``; subclasses define ``_standard_sample``."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None) -> None:
        super().__init__(broadcast_params(self, loc=loc, scale=scale), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        # the family (Normal, Laplace), not type(self): a subclass with its own __init__ must
        # define its own expand, as in PyTorch
        family = next(c for c in type(self).__mro__ if LocScaleDistribution in c.__bases__)
        return expand_params(self, family, batch_shape, ("loc", "scale"), _instance)

    @property
    def mean(self):
        return self.loc

    mode = mean     # symmetric and unimodal

    def _standard_sample(self, shape: Size) -> Tensor:
        """Draws of the standard variate Z (loc 0, scale 1) of ``shape``, in loc's dtype and device."""
        raise NotImplementedError

    def rsample(self, sample_shape=Size()):
        return self.loc + self.scale * self._standard_sample(self._extended_shape(sample_shape))
