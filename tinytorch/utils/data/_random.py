"""The one place where ``tinytorch.utils.data`` draws random numbers.

Samplers, ``random_split`` and worker seeding call the helpers below. They use tinytorch's own
random ops (``tinytorch.randperm(n, generator=g)`` ...) where those exist, and otherwise fall back to
a numpy ``Generator``. The fallback is reached through :class:`Generator` below, a stand-in for
``tinytorch.Generator`` with the same seeding API, so code written against PyTorch's
``Generator().manual_seed(s)`` works before the core random module lands and keeps working after.
"""
from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np

import tinytorch

_MASK64 = (1 << 64) - 1


class Generator:
    """Fallback for ``tinytorch.Generator`` backed by ``numpy.random.Generator`` (PCG64).

    Used only while ``tinytorch.Generator`` doesn't exist; :func:`new_generator` picks."""

    def __init__(self, device: str = "cpu") -> None:
        self.device = device
        self.manual_seed(int.from_bytes(os.urandom(8), "little"))

    def manual_seed(self, seed: int) -> "Generator":
        """Sets the seed for generating random numbers. Returns the generator."""
        self._seed = int(seed) & _MASK64  # negative seeds wrap mod 2**64, as PyTorch
        self._rng = np.random.default_rng(self._seed)
        return self

    def seed(self) -> int:
        """Seeds from a non-deterministic source and returns the seed."""
        s = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> dict:
        return {"seed": self._seed, "bit_generator": self._rng.bit_generator.state}

    def set_state(self, state: dict) -> "Generator":
        self._seed = state["seed"]
        self._rng = np.random.default_rng()
        self._rng.bit_generator.state = state["bit_generator"]
        return self


# The fallback's default generator, used when no generator is passed and tinytorch has no RNG.
_default = Generator()


def _has_core_rng() -> bool:
    return hasattr(tinytorch, "Generator") and hasattr(tinytorch, "randperm")


def new_generator(seed: int | None = None):
    """A fresh generator (``tinytorch.Generator`` when available), optionally seeded."""
    g = tinytorch.Generator() if hasattr(tinytorch, "Generator") else Generator()
    if seed is not None:
        g.manual_seed(seed)
    return g


def _np_rng(generator) -> np.random.Generator | None:
    """The numpy Generator behind ``generator``, or None if it is a core tinytorch generator."""
    if isinstance(generator, Generator):
        return generator._rng
    if generator is None and not _has_core_rng():
        return _default._rng
    return None


def _seed_from_core(generator) -> int:
    """A 63-bit seed drawn from a core generator (advancing it), for ops tinytorch lacks."""
    if hasattr(tinytorch, "randint"):
        return int(tinytorch.randint(0, 2**62, (), dtype=tinytorch.int64, generator=generator).item())
    # randperm is the one op the core is guaranteed to have here: 8 distinct bytes from it.
    head = tinytorch.randperm(256, generator=generator).tolist()[:8]
    return int.from_bytes(bytes(head), "little") >> 1


def randperm(n: int, generator=None) -> list[int]:
    """A random permutation of ``range(n)`` as a Python list."""
    rng = _np_rng(generator)
    if rng is not None:
        return rng.permutation(n).tolist()
    return tinytorch.randperm(n, generator=generator).tolist()


def randint(high: int, size: int, generator=None) -> list[int]:
    """``size`` integers drawn uniformly from ``[0, high)``."""
    rng = _np_rng(generator)
    if rng is None:
        if hasattr(tinytorch, "randint"):
            return tinytorch.randint(0, high, (size,), dtype=tinytorch.int64, generator=generator).tolist()
        rng = np.random.default_rng(_seed_from_core(generator))
    return rng.integers(0, high, size=size).tolist()


def multinomial(weights: Sequence[float], num_samples: int, replacement: bool, generator=None) -> list[int]:
    """Indices drawn with probability proportional to ``weights`` (as ``torch.multinomial``)."""
    rng = _np_rng(generator)
    if rng is None:
        if hasattr(tinytorch, "multinomial"):
            w = tinytorch.tensor(list(weights), dtype=tinytorch.float64)
            return tinytorch.multinomial(w, num_samples, replacement, generator=generator).tolist()
        rng = np.random.default_rng(_seed_from_core(generator))
    p = np.asarray(weights, dtype=np.float64)
    return rng.choice(len(p), size=num_samples, replace=replacement, p=p / p.sum()).tolist()


def new_seed(generator=None) -> int:
    """A fresh 63-bit seed drawn from ``generator`` (or the default RNG), as PyTorch's
    ``torch.empty((), dtype=torch.int64).random_(generator=g).item()``."""
    rng = _np_rng(generator)
    if rng is not None:
        return int(rng.integers(0, 2**63 - 1))
    return _seed_from_core(generator)


def manual_seed(seed: int) -> None:
    """Seeds the fallback default generator (and tinytorch's, where it exists)."""
    _default.manual_seed(seed)
    if hasattr(tinytorch, "manual_seed"):
        tinytorch.manual_seed(seed)


def uniform(generator=None) -> float:
    """One float drawn uniformly from [0, 1)."""
    rng = _np_rng(generator)
    if rng is None:
        if hasattr(tinytorch, "rand"):
            return float(tinytorch.rand(1, dtype=tinytorch.float64, generator=generator).item())
        rng = np.random.default_rng(_seed_from_core(generator))
    return float(rng.random())
