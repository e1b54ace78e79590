"""The binomial distribution."""
from __future__ import annotations

from tinytorch._tensor.creation import arange
from tinytorch._core.size import Size
from tinytorch.autograd.grad_mode import no_grad
from tinytorch.distributions import constraints
from tinytorch.distributions._sampling import standard_uniform
from tinytorch.distributions._special import lgamma
from tinytorch.distributions._probs_logits import ProbsLogitsMixin, probs_or_logits
from tinytorch.distributions.distribution import Distribution, as_size
from tinytorch.distributions.utils import broadcast_all

__all__ = ["Binomial"]

_TRIALS_PER_CHUNK = 1 << 22         # uniforms drawn at once while counting successes


def _clamp_by_zero(x):
    # max(x, 0) whose gradient at 0 is 1/2 (as PyTorch's)
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(ProbsLogitsMixin, Distribution):
    """Binomial distribution: the number of successes in ``total_count`` independent Bernoulli
    trials with success probability ``probs`` (or log-odds ``logits``, not both).

    Args:
        total_count (int or Tensor): number of Bernoulli trials, >= 0.
        probs (Tensor): event probabilities.
        logits (Tensor): event log-odds.

    Sampling counts the successes of the trials themselves (exact; O(total_count) uniforms per
    draw, drawn in bounded chunks), where PyTorch uses the BTRS rejection sampler.
    """
    arg_constraints = {"total_count": constraints.nonnegative_integer, "probs": constraints.unit_interval,
                       "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None) -> None:
        param, _ = probs_or_logits(self, probs, logits)
        self.total_count, param = broadcast_all(total_count, param)
        self.total_count = self.total_count.to(param.dtype)
        setattr(self, "probs" if probs is not None else "logits", param)
        self._param = param
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Binomial, batch_shape, ("total_count", "probs", "logits"), _instance)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            n = self.total_count.expand(shape)
            p = self.probs.expand(shape)
            most = int(n.max().item()) if n.numel() else 0
            count = p.new_zeros(tuple(shape))
            per_chunk = max(1, _TRIALS_PER_CHUNK // max(1, p.numel()))
            for start in range(0, most, per_chunk):
                trials = min(per_chunk, most - start)
                u = standard_uniform(as_size(shape, (trials,)), p)
                index = arange(start, start + trials, dtype=p.dtype, device=p.device)
                # (shape..., trials): a success of trial t counts only where t < total_count
                hit = (u < p.unsqueeze(-1)) & (index < n.unsqueeze(-1))
                count = count + hit.to(p.dtype).sum(-1)
            return count

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = lgamma(self.total_count + 1)
        log_factorial_k = lgamma(value + 1)
        log_factorial_nmk = lgamma(self.total_count - value + 1)
        # log(1 + exp(logits)) * n, stable for either sign of the logits
        normalize_term = (self.total_count * _clamp_by_zero(self.logits)
                          + self.total_count * (-self.logits.abs()).exp().log1p() - log_factorial_n)
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self):
        total_count = int(self.total_count.max().item())
        if not bool((self.total_count == total_count).all()):
            raise NotImplementedError("Inhomogeneous total count not supported by `entropy`.")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand: bool = True):
        total_count = int(self.total_count.max().item())
        if not bool((self.total_count == total_count).all()):
            raise NotImplementedError("Inhomogeneous total count not supported by `enumerate_support`.")
        values = arange(1 + total_count, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values
