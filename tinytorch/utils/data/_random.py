"""The one place where ``tinytorch.utils.data`` draws random numbers, all from tinytorch's
seeded generators (so ``tinytorch.manual_seed`` makes loading reproducible)."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from tinytorch import random as tt_random
from tinytorch._core.dtype import float64


def new_generator(seed: int | None = None) -> tt_random.Generator:
    """A fresh ``tinytorch.Generator``, optionally seeded."""
    g = tt_random.Generator()
    if seed is not None:
        g.manual_seed(seed)
    return g


def randperm(n: int, generator=None) -> list[int]:
    """A random permutation of ``range(n)`` as a Python list."""
    return tt_random.randperm(n, generator=generator).tolist()


def randint(high: int, size: int, generator=None) -> list[int]:
    """``size`` integers drawn uniformly from ``[0, high)``."""
    return tt_random.randint(0, high, (size,), generator=generator).tolist()


def uniform_array(size: int, generator=None) -> np.ndarray:
    return tt_random.rand(size, dtype=float64, generator=generator).numpy()


def multinomial(weights: Sequence[float], num_samples: int, replacement: bool, generator=None) -> list[int]:
    """Indices drawn with probability proportional to ``weights`` (as ``torch.multinomial``)."""
    p = np.asarray(weights, dtype=np.float64)
    if p.ndim != 1 or (p < 0).any() or not np.isfinite(p).all() or p.sum() <= 0:
        raise RuntimeError("multinomial: weights must be a 1-D sequence of non-negative finite numbers, not all 0")
    if not replacement and num_samples > np.count_nonzero(p):
        raise RuntimeError("multinomial: cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    u = uniform_array(num_samples if replacement else len(p), generator)
    if replacement:  # inverse CDF
        cdf = np.cumsum(p / p.sum())
        return np.minimum(np.searchsorted(cdf, u, side="right"), len(p) - 1).tolist()
    # without replacement: the k largest keys u^(1/w) (Efraimidis-Spirakis)
    with np.errstate(divide="ignore"):
        keys = np.where(p > 0, np.log(np.maximum(u, 1e-300)) / p, -np.inf)
    return np.argsort(-keys, kind="stable")[:num_samples].tolist()


def new_seed(generator=None) -> int:
    """A fresh 63-bit seed drawn from ``generator`` (or the default generator)."""
    return int(tt_random.randint(0, 2**62, (1,), generator=generator).item())


def manual_seed(seed: int) -> None:
    tt_random.manual_seed(seed)


def uniform(generator=None) -> float:
    """One float drawn uniformly from [0, 1)."""
    return float(uniform_array(1, generator)[0])
