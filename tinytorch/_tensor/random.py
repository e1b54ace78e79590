"""Random number generation: seeded, counter-based (Philox) generators, one default per device.

``manual_seed(s)`` makes every stream reproducible, independent of thread count."""
from __future__ import annotations

import numpy as np

from tinytorch import _C
from tinytorch._tensor.creation import like_form, tensor
from tinytorch._core.dtype import default_device, device as _device, get_default_dtype, int64, to_dtype
from tinytorch._core.tensor_base import _wrap
from tinytorch._tensor.doc_notes import factory_notes, fill_doc, filled_doc


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
    """Sets the seed for generating random numbers on all devices.

    Args:
        seed (int): the desired seed."""
    _C.manual_seed(int(seed))
    return default_generator


def seed() -> int:
    """Sets the seed for generating random numbers to a non-deterministic random number."""
    return _C.seed()


def initial_seed() -> int:
    """Returns the initial seed for generating random numbers as a Python `long`."""
    return _C.initial_seed()


def get_rng_state():
    """Returns the random number generator state as a `ByteTensor`."""
    g = Generator.__new__(Generator)
    g.device, g._impl = _device("cpu"), _C.default_generator(None)
    return g.get_state()


def set_rng_state(new_state) -> None:
    """Sets the random number generator state.

    Args:
        new_state (ByteTensor): the desired state."""
    g = Generator.__new__(Generator)
    g.device, g._impl = _device("cpu"), _C.default_generator(None)
    g.set_state(new_state)


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
    if device is None:
        device = default_device()
    return None if device is None else _device(device)._impl


_SAMPLED_DOC = """{summary}

    Args:
        {{size}}

    Keyword args:
        generator (Generator, optional): a pseudorandom number generator for sampling. Default: ``None``
        {{factory_kwargs}}"""   # formatted, then filled (hence the doubled braces)


def _sampled_form(name: str, kernel, summary: str):
    """``rand`` / ``randn``: a tensor of ``size`` drawn by the kernel, in the default dtype unless given."""
    def sampled(*size, generator=None, dtype=None, device=None, requires_grad: bool = False):
        d = to_dtype(dtype) if dtype is not None else get_default_dtype()
        return _finish(_wrap(kernel(_shape(size), d.code, _dev(device), _gen(generator))), requires_grad)
    sampled.__name__ = sampled.__qualname__ = name
    sampled.__doc__ = filled_doc(_SAMPLED_DOC.format(summary=summary), factory_notes)
    return sampled


rand = _sampled_form("rand", _C.rand, "Uniform random numbers on [0, 1).")
randn = _sampled_form("randn", _C.randn, "Standard normal random numbers.")


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


@fill_doc(factory_notes)
def randint(*args, low=None, high=None, size=None, generator=None, dtype=None, device=None,
            requires_grad: bool = False, layout=None, pin_memory: bool = False):
    """Returns a tensor filled with random integers drawn uniformly from [low, high), of shape
    ``size``; as PyTorch, ``randint(high, size)`` and ``randint(low, high, size)`` (or keywords).
    The dtype defaults to int64.

    Args:
        args (int...): positional ``(high, size)`` or ``(low, high, size)``, as PyTorch.

    Keyword args:
        low (int, optional): lowest integer to be drawn from the distribution. Default: ``None``
        high (int): one above the highest integer to be drawn from the distribution. Default: ``None``
        size (tuple): a tuple defining the shape of the output tensor. Default: ``None``
        generator (Generator, optional): a pseudorandom number generator for sampling. Default: ``None``
        dtype (dtype, optional): the desired data type of returned tensor. Default: ``int64``.
        {device}
        {requires_grad}
        {layout}
        {pin_memory}"""
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


@fill_doc(factory_notes)
def randperm(n: int, *, generator=None, dtype=None, device=None, requires_grad: bool = False):
    """A random permutation of integers from 0 to n - 1.

    Args:
        n (int): the upper bound (exclusive).

    Keyword args:
        generator (Generator, optional): a pseudorandom number generator for sampling. Default: ``None``
        dtype (dtype, optional): the desired data type of returned tensor. Default: ``int64``.
        {device}
        {requires_grad}"""
    d = to_dtype(dtype) if dtype is not None else int64
    return _wrap(_C.randperm(int(n), d.code, _dev(device), _gen(generator)))


rand_like = like_form(rand, "rand_like", "that is filled with random numbers from a uniform distribution "
                                        "on the interval :math:`[0, 1)`")
randn_like = like_form(randn, "randn_like", "that is filled with random numbers from a normal distribution "
                                          "with mean 0 and variance 1")


@fill_doc(factory_notes)
def randint_like(input, low=0, high=None, *, generator=None, dtype=None, device=None,  # noqa: A002
                 requires_grad: bool = False):
    """[low, high) with input's shape (and its dtype and device unless given).

    Args:
        {like_input}
        low (int, optional): lowest integer to be drawn from the distribution. Default: ``0``
        high (int): one above the highest integer to be drawn from the distribution. Default: ``None``

    Keyword args:
        generator (Generator, optional): a pseudorandom number generator for sampling. Default: ``None``
        {like_kwargs}"""
    if high is None:
        low, high = 0, low
    return randint(low, high, input.shape, generator=generator, dtype=dtype or input.dtype,
                   device=device or input.device, requires_grad=requires_grad)


def bernoulli(input, *, generator=None):
    """Draws binary random numbers (0 or 1) with probabilities ``input``.

    Args:
        input (Tensor): the input tensor of probability values for the Bernoulli distribution.

    Keyword args:
        generator (Generator, optional): a pseudorandom number generator for sampling. Default: ``None``"""
    return _wrap(_C.bernoulli(input._impl, _gen(generator)))


@fill_doc(factory_notes)
def normal(mean: float, std: float, size, *, generator=None, dtype=None, device=None):
    """Returns a tensor of random numbers drawn from separate normal distributions whose mean and standard
    deviation are given.

    Args:
        mean (float or Tensor): the mean (of each element's distribution).
        std (float or Tensor): the standard deviation (of each element's distribution).
        size (tuple): a tuple defining the shape of the output tensor.

    Keyword args:
        generator (Generator, optional): a pseudorandom number generator for sampling. Default: ``None``
        dtype (dtype, optional): the desired data type of returned tensor. If ``None``, uses a global
            default (see :func:`set_default_dtype`). Default: ``None``
        {device}"""
    if not hasattr(std, "shape") and not std >= 0:      # NaN fails too, as PyTorch's check
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    t = randn(size, generator=generator, dtype=dtype, device=device)
    return t.mul_(std).add_(mean)


# Tensor methods: in-place random fills (no autograd history: they overwrite values).
def uniform_(self, a: float = 0.0, b: float = 1.0, *, generator=None):
    r"""Fills :attr:`self` tensor with numbers sampled from the continuous uniform distribution: :math:`f(x)
    = \dfrac{1}{b - a}`.

    Args:
        a (float): the lower bound of the uniform distribution. Default: ``0.0``
        b (float): the upper bound of the uniform distribution. Default: ``1.0``

    Keyword args:
        generator (Generator, optional): a pseudorandom number generator for sampling. Default: ``None``"""
    _C.uniform_(self._impl, float(a), float(b), _gen(generator))
    return self


def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator=None):
    """Fills :attr:`self` tensor with elements samples from the normal distribution parameterized by
    :attr:`mean` and :attr:`std`.

    Args:
        mean (float): the mean of the normal distribution. Default: ``0.0``
        std (float): the standard deviation of the normal distribution. Default: ``1.0``

    Keyword args:
        generator (Generator, optional): a pseudorandom number generator for sampling. Default: ``None``"""
    _C.normal_(self._impl, float(mean), float(std), _gen(generator))
    return self


def bernoulli_(self, p: float = 0.5, *, generator=None):
    r"""Fills each location of :attr:`self` with an independent sample from
    :math:`\text{Bernoulli}(\texttt{p})`.

    Args:
        p (float or Tensor, optional): the probability of drawing 1 (default: the values of this
            tensor). Default: ``0.5``

    Keyword args:
        generator (Generator, optional): a pseudorandom number generator for sampling. Default: ``None``"""
    _C.bernoulli_(self._impl, float(p), _gen(generator))
    return self


def _bernoulli_method(self, p=None, *, generator=None):
    r"""Returns a result tensor where each :math:`\texttt{result[i]}` is independently sampled from
    :math:`\text{Bernoulli}(\texttt{self[i]})`.

    Args:
        p (float or Tensor, optional): the probability of drawing 1 (default: the values of this
            tensor). Default: ``None``

    Keyword args:
        generator (Generator, optional): a pseudorandom number generator for sampling. Default: ``None``"""
    if p is None:
        return bernoulli(self, generator=generator)
    return self.new_empty(self.shape).bernoulli_(p, generator=generator)

