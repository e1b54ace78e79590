"""Random number generation: seeded, counter-based (Philox) generators, one default per device.

``manual_seed(s)`` makes every stream reproducible, independent of thread count."""
from __future__ import annotations

import numpy as np

from tinytorch import _C
from tinytorch._creation import tensor
from tinytorch._dtype import device as _device, get_default_dtype, int64, to_dtype
from tinytorch._tensor import _wrap


class Generator:
    """A random number generator (``torch.Generator``)."""

    def __init__(self, device="cpu") -> None:
        self.device = _device(device)
        self._impl = _C.Generator(None, self.device._impl)

    def manual_seed(self, seed: int) -> "Generator":
        self._impl.manual_seed(int(seed))
        return self

    def seed(self) -> int:
        return self._impl.seed()

    def initial_seed(self) -> int:
        return self._impl.initial_seed()

    def get_state(self):
        return tensor(np.frombuffer(self._impl.get_state(), dtype=np.uint8))

    def set_state(self, state) -> "Generator":
        self._impl.set_state(bytes(np.asarray(state, dtype=np.uint8)))
        return self


def _gen(generator):
    return None if generator is None else generator._impl


def manual_seed(seed: int):
    """Sets the seed for generating random numbers on all devices."""
    _C.manual_seed(int(seed))
    return default_generator


def seed() -> int:
    return _C.seed()


def initial_seed() -> int:
    return _C.initial_seed()


def get_rng_state():
    g = Generator.__new__(Generator)
    g.device, g._impl = _device("cpu"), _C.default_generator(None)
    return g.get_state()


def set_rng_state(state) -> None:
    g = Generator.__new__(Generator)
    g.device, g._impl = _device("cpu"), _C.default_generator(None)
    g.set_state(state)


class _DefaultGenerator(Generator):
    def __init__(self) -> None:
        self.device = _device("cpu")
        self._impl = _C.default_generator(None)


default_generator = _DefaultGenerator()


def _shape(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    return [int(s) for s in size]


def _finish(t, requires_grad):
    return t.requires_grad_(True) if requires_grad else t


def _dev(device):
    return None if device is None else _device(device)._impl


def rand(*size, generator=None, dtype=None, device=None, requires_grad: bool = False):
    """Uniform random numbers on [0, 1)."""
    d = to_dtype(dtype) if dtype is not None else get_default_dtype()
    return _finish(_wrap(_C.rand(_shape(size), d.code, _dev(device), _gen(generator))), requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad: bool = False):
    """Standard normal random numbers."""
    d = to_dtype(dtype) if dtype is not None else get_default_dtype()
    return _finish(_wrap(_C.randn(_shape(size), d.code, _dev(device), _gen(generator))), requires_grad)


def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None, requires_grad: bool = False):
    """Random integers on [low, high)."""
    if high is None:
        low, high = 0, low
    if size is None:
        raise TypeError("randint() missing required argument 'size'")
    d = to_dtype(dtype) if dtype is not None else int64
    return _wrap(_C.randint(int(low), int(high), list(size), d.code, _dev(device), _gen(generator)))


def randperm(n: int, *, generator=None, dtype=None, device=None, requires_grad: bool = False):
    """A random permutation of integers from 0 to n - 1."""
    d = to_dtype(dtype) if dtype is not None else int64
    return _wrap(_C.randperm(int(n), d.code, _dev(device), _gen(generator)))


def rand_like(x, *, dtype=None, device=None, requires_grad: bool = False):
    return rand(x.shape, dtype=dtype or x.dtype, device=device or x.device, requires_grad=requires_grad)


def randn_like(x, *, dtype=None, device=None, requires_grad: bool = False):
    return randn(x.shape, dtype=dtype or x.dtype, device=device or x.device, requires_grad=requires_grad)


def randint_like(x, low, high=None, *, dtype=None, device=None):
    return randint(low, high, x.shape, dtype=dtype or x.dtype, device=device or x.device)


def bernoulli(input, *, generator=None):
    """Draws binary random numbers (0 or 1) with probabilities ``input``."""
    return _wrap(_C.bernoulli(input._impl, _gen(generator)))


def normal(mean: float, std: float, size, *, generator=None, dtype=None, device=None):
    t = randn(size, generator=generator, dtype=dtype, device=device)
    return t.mul_(std).add_(mean)


# Tensor methods: in-place random fills (no autograd history: they overwrite values).
def uniform_(self, a: float = 0.0, b: float = 1.0, *, generator=None):
    _C.uniform_(self._impl, float(a), float(b), _gen(generator))
    return self


def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator=None):
    _C.normal_(self._impl, float(mean), float(std), _gen(generator))
    return self


def bernoulli_(self, p: float = 0.5, *, generator=None):
    _C.bernoulli_(self._impl, float(p), _gen(generator))
    return self


def _bernoulli_method(self, p=None, *, generator=None):
    if p is None:
        return bernoulli(self, generator=generator)
    return self.new_empty(self.shape).bernoulli_(p, generator=generator)

