"""Sampling from categorical distributions (``multinomial``), composed from existing ops and
tinytorch's Philox generators, so it runs on every device and ``manual_seed`` makes it
reproducible (the CPU and CUDA streams are the same for the same seed).

* Without replacement, or one sample: the exponential race (Gumbel top-k). With E_i ~ Exp(1),
  the k indices with the largest p_i / E_i are a draw of k categories without replacement in
  proportion to p (PyTorch's fast path, the same algorithm).
* With replacement: inverse CDF. u ~ U[0, 1) per sample; the sample is the first index whose
  normalized cumulative probability exceeds u, found by a vectorized binary search
  (ceil(log2 K) gathers over the (rows, num_samples) samples; memory O(rows * (K + num_samples))).

The only host synchronization is the one argument check per call (as PyTorch's)."""
from __future__ import annotations

import math

from tinytorch._core.dtype import float32, float64, int64
from tinytorch._tensor.creation import empty
from tinytorch._ops.elementwise import where
from tinytorch._ops.index import gather, stack, topk
from tinytorch._tensor.random import rand
from tinytorch._tensor.tensor import Tensor

__all__ = ["multinomial", "exponential_", "log_normal_", "cauchy_", "geometric_"]

_TORCH_DTYPE_NAMES = {"int64": "Long", "int32": "Int", "uint8": "Byte", "bool": "Bool"}
_MAX_CATEGORIES = 1 << 24


def _check_arguments(input, num_samples, replacement: bool) -> None:
    if not isinstance(input, Tensor):
        raise TypeError(f"multinomial(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if isinstance(num_samples, bool) or not isinstance(num_samples, int):
        raise TypeError("multinomial(): argument 'num_samples' (position 2) must be int, not "
                        f"{type(num_samples).__name__}")
    if not input.dtype.is_floating_point:
        name = _TORCH_DTYPE_NAMES.get(input.dtype.name, input.dtype.name)
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {name}")
    if input.dim() not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > input.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if input.shape[-1] > _MAX_CATEGORIES:
        raise RuntimeError("number of categories cannot exceed 2^24")


def _check_values(p: Tensor, fast_path: bool) -> None:
    """One host sync: every flag computed on the device, read back together. PyTorch's messages
    differ between its two paths; so do ours."""
    if p.numel() == 0:
        return
    nan_or_negative = ((p < 0) | p.isnan()).any()
    inf = p.isinf().any()
    zero_row = (p.sum(-1) <= 0).any()
    nan_or_negative, inf, zero_row = stack([nan_or_negative, inf, zero_row]).tolist()
    if fast_path and (nan_or_negative or inf):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if nan_or_negative:
        raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
    if inf:
        raise RuntimeError("invalid multinomial distribution (encountering probability entry = infinity or NaN)")
    if zero_row:
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")


def _exponential_race(p: Tensor, num_samples: int, generator) -> Tensor:
    # p: (B, K) -> (B, num_samples); argmax of p_i / E_i, E_i = -log(U_i) ~ Exp(1)
    u = rand(p.shape, dtype=p.dtype, device=p.device, generator=generator)
    keys = p / (-u.log())
    if num_samples == 1:
        return keys.argmax(-1, keepdim=True)
    return topk(keys, num_samples, -1, True, True)[1]


def _inverse_cdf(p: Tensor, num_samples: int, generator) -> Tensor:
    # p: (B, K) -> (B, num_samples): the first index i with cdf[i] > u
    cdf = p.cumsum(-1)
    cdf = cdf / cdf[:, -1:]                     # the last entry is exactly 1 > u
    rows, categories = p.shape
    u = rand((rows, num_samples), dtype=p.dtype, device=p.device, generator=generator)
    lo = u.new_zeros((rows, num_samples), dtype=int64)
    hi = lo + (categories - 1)
    # invariant: cdf[hi] > u and (lo == 0 or cdf[lo - 1] <= u); fixed iteration count, no sync
    for _ in range(max(1, math.ceil(math.log2(categories)))):
        mid = (lo + hi) // 2
        above = gather(cdf, -1, mid) > u
        hi = where(above, mid, hi)
        lo = where(above, lo, mid + 1)
    return lo


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *, generator=None) -> Tensor:
    """Returns a tensor where each row contains ``num_samples`` indices sampled from the
    multinomial probability distribution located in the corresponding row of ``input``.

    ``input`` is 1-D (one distribution over its entries) or 2-D (one per row); its entries are
    non-negative, finite, not all zero, and need not sum to one. Without replacement
    (the default) ``num_samples`` must not exceed the number of categories. Returns int64
    indices of shape ``(num_samples,)`` or ``(rows, num_samples)``.

    Args:
        input (Tensor): the input tensor containing probabilities.
        num_samples (int): number of samples to draw.
        replacement (bool, optional): whether to draw with replacement or not. Default: ``False``

    Keyword args:
        generator (Generator, optional): a pseudorandom number generator for sampling. Default: ``None``"""
    _check_arguments(input, num_samples, replacement)
    fast_path = not replacement or num_samples == 1
    work = float64 if input.dtype == float64 else float32      # 16-bit inputs are drawn in float32
    p = input.detach().to(work)
    _check_values(p, fast_path)
    batched = p if p.dim() == 2 else p.unsqueeze(0)
    if batched.shape[0] == 0:
        out = batched.new_zeros((0, num_samples), dtype=int64)
    elif fast_path:
        out = _exponential_race(batched, num_samples, generator)
    else:
        out = _inverse_cdf(batched, num_samples, generator)
    return out if input.dim() == 2 else out.squeeze(0)


def _uniform_open(self: Tensor, generator) -> Tensor:
    u = empty(self.shape, dtype="float64", device=self.device)
    u.uniform_(0.0, 1.0, generator=generator) if generator is not None else u.uniform_(0.0, 1.0)
    return u.clamp(min=1e-300, max=1.0 - 1e-16)


def _check_fill(self: Tensor, op: str, name: str, value: float) -> None:
    """The checks of the in-place fill ``op``: a floating-point self and a positive parameter ``name``."""
    if not self.dtype.is_floating_point:
        raise RuntimeError(f"{op} expects floating point dtypes, got: {self.dtype}")
    if not value > 0:   # NaN fails too
        raise RuntimeError(f"{op} expects {name} > 0.0, but found {name}={value}")


def exponential_(self: Tensor, lambd: float = 1.0, *, generator=None) -> Tensor:
    """Fills ``self`` with elements drawn from the exponential distribution ``lambd * exp(-lambd * x)``.

    Args:
        lambd (float): the rate. Default: ``1``.
        generator (tinytorch.Generator, optional): a pseudorandom number generator for sampling."""
    _check_fill(self, "exponential_", "lambda", lambd)
    with _no_grad():
        return self.copy_(-(1.0 - _uniform_open(self, generator)).log() / lambd)


def log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *, generator=None) -> Tensor:
    """Fills ``self`` with numbers whose logarithm is normal with the given ``mean`` and ``std``.

    Args:
        mean (float): mean of the underlying normal. Default: ``1``.
        std (float): standard deviation of the underlying normal. Default: ``2``.
        generator (tinytorch.Generator, optional): a pseudorandom number generator for sampling."""
    _check_fill(self, "log_normal_", "std", std)
    with _no_grad():
        z = empty(self.shape, dtype="float64", device=self.device)
        z.normal_(mean, std, generator=generator) if generator is not None else z.normal_(mean, std)
        return self.copy_(z.exp())


def cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator=None) -> Tensor:
    """Fills ``self`` with numbers drawn from the Cauchy distribution with ``median`` and scale ``sigma``.

    Args:
        median (float): the location. Default: ``0``.
        sigma (float): the scale. Default: ``1``.
        generator (tinytorch.Generator, optional): a pseudorandom number generator for sampling."""
    _check_fill(self, "cauchy_", "sigma", sigma)
    with _no_grad():
        return self.copy_(median + sigma * (math.pi * (_uniform_open(self, generator) - 0.5)).tan())


def geometric_(self: Tensor, p: float, *, generator=None) -> Tensor:
    """Fills ``self`` with the number of Bernoulli(``p``) trials up to and including the first success (1, 2, ...).

    Args:
        p (float): the success probability, in (0, 1).
        generator (tinytorch.Generator, optional): a pseudorandom number generator for sampling."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    with _no_grad():
        u = _uniform_open(self, generator)
        return self.copy_(((1.0 - u).log() / math.log1p(-p)).ceil().clamp(min=1.0).to(self.dtype))


def _no_grad():
    from tinytorch.autograd.grad_mode import no_grad
    return no_grad()
