"""The Bernoulli distribution."""
from __future__ import annotations

from tinytorch._tensor.creation import arange
from tinytorch._ops.elementwise import where
from tinytorch._core.size import Size
from tinytorch.autograd.grad_mode import no_grad
from tinytorch.distributions import constraints
from tinytorch.distributions._probs_logits import ProbsLogitsMixin, probs_or_logits
from tinytorch.distributions.distribution import Distribution
from tinytorch.distributions.utils import broadcast_all
from tinytorch.nn.functional import binary_cross_entropy_with_logits
from tinytorch.random import bernoulli

__all__ = ["Bernoulli"]


class Bernoulli(ProbsLogitsMixin, Distribution):
    """Bernoulli distribution parameterized by ``probs`` or ``logits`` (but not both): 1 with
    probability p, 0 with probability 1 - p.

    Args:
        probs (Number, Tensor): the probability of sampling 1.
        logits (Number, Tensor): the log-odds of sampling 1.
    """
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None) -> None:
        self._param, is_scalar = probs_or_logits(self, probs, logits)
        super().__init__(Size() if is_scalar else self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Bernoulli, batch_shape, ("probs", "logits"), _instance)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return where(self.probs == 0.5, mode.new_full((), float("nan")), mode)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        with no_grad():
            return bernoulli(self.probs.expand(self._extended_shape(sample_shape)).contiguous())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value.to(logits.dtype), reduction="none")

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand: bool = True):
        values = arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((2,) + tuple(self._batch_shape)) if expand else values
