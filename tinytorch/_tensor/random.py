"""Random number generation: seeded, counter-based (Philox) generators, one default per device.

``manual_seed(s)`` makes every stream reproducible, independent of thread count."""
from __future__ import annotations

import numpy as np

from tinytorch import _C
from tinytorch._tensor.creation import tensor
from tinytorch._core.dtype import device as _device, get_default_dtype, int64, to_dtype
from tinytorch._core.tensor_base import _wrap


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


def _randint_args(args: tuple, low, high, size) -> tuple:
    """PyTorch's randint overloads: (high, size), (low, high, size), any of them by keyword."""
    args = list(args)
    if size is None and args:
        if not isinstance(args[-1], (tuple, list)) and len(args) + (low is not None) + \
                (high is not None) >= 2:
            raise TypeError(f"randint(): argument 'size' (position {len(args)}) must be tuple of ints, "
                            f"not {type(args[-1]).__name__}")
        if isinstance(args[-1], (tuple, list)):
            size = args.pop()
    if size is None:
        raise TypeError("randint() missing required argument 'size'; expected randint(high, size) or "
                        "randint(low, high, size)")
    if len(args) > 2:
        raise TypeError(f"randint() takes at most 3 positional arguments ({len(args) + 1} given)")
    if len(args) == 2:
        low, high = args
    elif len(args) == 1:
        if high is None:
            high = args[0]
        else:
            low = args[0]
    if high is None:
        raise TypeError("randint() missing required argument 'high'")
    return (0 if low is None else low), high, size


def randint(*args, low=None, high=None, size=None, generator=None, dtype=None, device=None,
            requires_grad: bool = False, layout=None, pin_memory: bool = False):
    """randint(low=0, high, size, *, generator=None, dtype=None, device=None, requires_grad=False)

    Returns a tensor filled with random integers drawn uniformly from [low, high), of shape
    ``size``; as PyTorch, ``randint(high, size)`` and ``randint(low, high, size)`` (or keywords).
    The dtype defaults to int64."""
    low, high, size = _randint_args(args, low, high, size)
    if isinstance(size, int):
        raise TypeError(f"randint(): argument 'size' must be tuple of ints, not {type(size).__name__}")
    if int(low) >= int(high):
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={int(low)} >= to={int(high)}")
    d = to_dtype(dtype) if dtype is not None else int64
    if requires_grad and not d.is_floating_point:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    out = _wrap(_C.randint(int(low), int(high), [int(n) for n in size], d.code, _dev(device), _gen(generator)))
    return out.requires_grad_() if requires_grad else out


def randperm(n: int, *, generator=None, dtype=None, device=None, requires_grad: bool = False):
    """A random permutation of integers from 0 to n - 1."""
    d = to_dtype(dtype) if dtype is not None else int64
    return _wrap(_C.randperm(int(n), d.code, _dev(device), _gen(generator)))


def rand_like(input, *, dtype=None, device=None, requires_grad: bool = False):  # noqa: A002
    return rand(input.shape, dtype=dtype or input.dtype, device=device or input.device, requires_grad=requires_grad)


def randn_like(input, *, dtype=None, device=None, requires_grad: bool = False):  # noqa: A002
    return randn(input.shape, dtype=dtype or input.dtype, device=device or input.device, requires_grad=requires_grad)


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, device=None,  # noqa: A002
                 requires_grad: bool = False):
    """randint_like(input, low=0, high, *, dtype=None, device=None): random integers on
    [low, high) with input's shape (and its dtype and device unless given)."""
    if high is None:
        low, high = 0, low
    return randint(low, high, input.shape, generator=generator, dtype=dtype or input.dtype,
                   device=device or input.device, requires_grad=requires_grad)


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

