"""The categorical and one-hot categorical distributions."""
from __future__ import annotations

from operator import attrgetter

from tinytorch._tensor.creation import arange
from tinytorch._core.dtype import int64
from tinytorch._composites.sampling import multinomial
from tinytorch._core.size import Size
from tinytorch.autograd.grad_mode import no_grad
from tinytorch.distributions import constraints
from tinytorch.distributions._probs_logits import ProbsLogitsMixin
from tinytorch.distributions.distribution import Distribution, as_size
from tinytorch.distributions.utils import broadcast_shape, finfo
from tinytorch.nn.functional import one_hot

__all__ = ["Categorical", "OneHotCategorical"]


class Categorical(ProbsLogitsMixin, Distribution):
    """A categorical distribution over ``{0, ..., K - 1}`` parameterized by ``probs`` (non-negative,
    normalized over the last dim) or ``logits`` (unnormalized log-probabilities), not both.

    Args:
        probs (Tensor): event probabilities (..., K).
        logits (Tensor): event log-probabilities, unnormalized (..., K).
    """
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True
    _is_binary = False

    def __init__(self, probs=None, logits=None, validate_args=None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        batch_shape = self._param.shape[:-1] if self._param.dim() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = as_size(batch_shape)
        param_shape = tuple(batch_shape) + (self._num_events,)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(param_shape)
            new._param = new.probs
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(param_shape)
            new._param = new.logits
        new._num_events = self._num_events
        return self._init_expanded(new, batch_shape)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def mean(self):
        return self._nan_full(self._extended_shape())

    @property
    def mode(self):
        return self.probs.argmax(-1)

    @property
    def variance(self):
        return self._nan_full(self._extended_shape())

    def sample(self, sample_shape=Size()):
        sample_shape = as_size(sample_shape)
        n = 1
        for s in sample_shape:
            n *= s
        with no_grad():
            if n == 0:
                return self.probs.new_zeros(tuple(self._extended_shape(sample_shape)), dtype=int64)
            probs_2d = self.probs.reshape(-1, self._num_events)
            samples_2d = multinomial(probs_2d, n, True).T
            return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        shape = broadcast_shape(value.shape, self.logits.shape)
        value = value.expand(tuple(shape[:-1]) + (1,))
        log_pmf = self.logits.expand(shape)
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self):
        logits = self.logits.clamp(min=finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True):
        values = arange(self._num_events, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values


class OneHotCategorical(Distribution):
    """A categorical distribution whose samples are one-hot vectors of size K
    (parameterized by ``probs`` or ``logits`` as :class:`Categorical`)."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.independent(constraints.real, 1)}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None) -> None:
        self._categorical = Categorical(probs, logits)
        param = self._categorical._param
        super().__init__(param.shape[:-1], param.shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(OneHotCategorical, _instance)
        batch_shape = as_size(batch_shape)
        new._categorical = self._categorical.expand(batch_shape)
        return self._init_expanded(new, batch_shape)

    _param = property(attrgetter("_categorical._param"))
    probs = property(attrgetter("_categorical.probs"))
    logits = property(attrgetter("_categorical.logits"))
    param_shape = property(attrgetter("_categorical.param_shape"))
    mean = probs

    @property
    def mode(self):
        probs = self._categorical.probs
        return one_hot(probs.argmax(-1), probs.shape[-1]).to(probs.dtype)

    @property
    def variance(self):
        return self._categorical.probs * (1 - self._categorical.probs)

    def sample(self, sample_shape=Size()):
        probs = self._categorical.probs
        indices = self._categorical.sample(sample_shape)
        return one_hot(indices, self._categorical._num_events).to(probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand: bool = True):
        n = self.event_shape[0]
        values = one_hot(arange(n, device=self._param.device), n).to(self._param.dtype)
        values = values.reshape((n,) + (1,) * len(self.batch_shape) + (n,))
        return values.expand((n,) + tuple(self.batch_shape) + (n,)) if expand else values

