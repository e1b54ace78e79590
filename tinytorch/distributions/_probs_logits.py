"""The shared part of the distributions parameterized by ``probs`` or ``logits``, not both
(Bernoulli, Binomial, Categorical): the one given is stored (and kept as ``_param``), the other is
computed from it on first access."""
from __future__ import annotations

from numbers import Number

from tinytorch._core.size import Size
from tinytorch.distributions.distribution import expand_params
from tinytorch.distributions.utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["ProbsLogitsMixin", "probs_or_logits"]


def probs_or_logits(dist, probs, logits):
    """Stores exactly one of probs/logits (broadcast) on ``dist``; returns it and whether it was a Number."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    param = probs if probs is not None else logits
    (value,) = broadcast_all(param)
    setattr(dist, "probs" if probs is not None else "logits", value)
    return value, isinstance(param, Number)


class ProbsLogitsMixin:
    """``probs`` and ``logits`` from each other (log-odds and sigmoid for a binary event,
    log-probabilities and softmax over the last dim otherwise) and ``param_shape``, for a
    distribution that keeps the parameter it was given as ``_param``."""
    _is_binary = True

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=self._is_binary)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=self._is_binary)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    def _expand_params(self, cls, batch_shape, names, _instance=None):
        """``expand_params`` of ``names``, with the expanded ``_param``."""
        new = expand_params(self, cls, batch_shape, names, _instance)
        new._param = new.probs if "probs" in self.__dict__ else new.logits
        return new
