"""Distribution: the abstract base class of probability distributions (PyTorch's
``torch.distributions.Distribution``): shapes, argument and sample validation, and the
interface every distribution fills in."""
from __future__ import annotations

import warnings
from numbers import Number
from typing import Optional

from tinytorch._tensor.creation import full
from tinytorch._core.size import Size
from tinytorch.autograd.grad_mode import no_grad
from tinytorch.distributions import constraints
from tinytorch.distributions.utils import broadcast_all, lazy_property
from tinytorch._tensor.tensor import Tensor

__all__ = ["Distribution"]


def as_size(*parts) -> Size:
    """Size from the concatenation of shapes (Size + Size is a tuple)."""
    out: tuple = ()
    for p in parts:
        out += tuple(int(s) for s in p)
    return Size(out)


def _unimplemented_property(name: str, doc: str | None = None) -> property:
    """A property of the interface that a distribution which has it overrides; reading it on one
    that does not raises NotImplementedError."""
    def unimplemented(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement {name}")
    return property(unimplemented, doc=doc)


class Distribution:
    """Distribution is the abstract base class for probability distributions.

    Args:
        batch_shape: the shape over which parameters are batched.
        event_shape: the shape of a single sample (without batching).
        validate_args: whether to validate arguments (and, in ``log_prob``, samples). Default:
            the class default, True unless ``set_default_validate_args(False)`` (or ``python -O``).
    """

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Sets whether validation is enabled or disabled by default."""
        if value not in (True, False):
            raise ValueError("set_default_validate_args expects True or False")
        Distribution._validate_args = value

    def __init__(self, batch_shape=Size(), event_shape=Size(), validate_args: Optional[bool] = None) -> None:
        self._batch_shape = as_size(batch_shape)
        self._event_shape = as_size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f"{self.__class__} does not define `arg_constraints`. "
                              "Please set `arg_constraints = {}` "
                              "or initialize the distribution with `validate_args=False` to turn off validation.")
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                if param not in self.__dict__ and isinstance(getattr(type(self), param, None), lazy_property):
                    continue        # not given: computed from the other parameterization
                value = getattr(self, param)
                if not bool(constraint.check(value).all()):
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape {tuple(value.shape)}) "
                        f"of distribution {self!r} to satisfy the constraint {constraint!r}, "
                        f"but found invalid values:\n{value}")

    def expand(self, batch_shape, _instance=None):
        """A new distribution with batch dims expanded to ``batch_shape`` (no new memory)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement expand")

    @property
    def batch_shape(self) -> Size:
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        return self._event_shape

    arg_constraints = _unimplemented_property("arg_constraints", "The constraint each argument must satisfy.")
    support = _unimplemented_property("support", "The constraint the samples satisfy.")
    mean = _unimplemented_property("mean")

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    variance = _unimplemented_property("variance")

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def sample(self, sample_shape=Size()) -> Tensor:
        """A sample of shape ``sample_shape + batch_shape + event_shape`` (no gradient)."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()) -> Tensor:
        """A reparameterized sample: differentiable with respect to the parameters."""
        raise NotImplementedError(f"{self.__class__.__name__} does not support reparameterized sampling "
                                  "(has_rsample is False)")

    def sample_n(self, n: int) -> Tensor:
        warnings.warn("sample_n will be deprecated. Use .sample((n,)) instead", UserWarning)
        return self.sample(Size((n,)))

    def log_prob(self, value: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement log_prob")

    def cdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement cdf")

    def icdf(self, value: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement icdf")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement enumerate_support")

    def entropy(self) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not implement entropy")

    def perplexity(self) -> Tensor:
        return self.entropy().exp()

    def _extended_shape(self, sample_shape=Size()) -> Size:
        return as_size(sample_shape, self._batch_shape, self._event_shape)

    def _validate_sample(self, value) -> None:
        """Checks a value given to log_prob/cdf: a Tensor, event shape, broadcastable, in the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = value.dim() - len(self._event_shape)
        if tuple(value.shape[event_dim_start:]) != tuple(self._event_shape):
            raise ValueError("The right-most size of value must match event_shape: "
                             f"{value.shape} vs {self._event_shape}.")
        actual_shape = tuple(value.shape)
        expected_shape = tuple(self._batch_shape) + tuple(self._event_shape)
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {Size(actual_shape)} vs "
                                 f"{Size(expected_shape)}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample validation. Please initialize "
                          "the distribution with `validate_args=False` to turn off validation.")
            return
        if not bool(support.check(value).all()):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) "
                             f"to be within the support ({support!r}) of the distribution {self!r}, "
                             f"but found invalid values:\n{value}")

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom "
                                      "__init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def _init_expanded(self, new, batch_shape):
        """Ends ``expand``: ``new`` (its parameters expanded already, so not validated again) gets
        ``batch_shape``, this distribution's event shape and its validation setting."""
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _nan_full(self, shape) -> Tensor:
        like = next(v for v in self.__dict__.values() if isinstance(v, Tensor))
        return full(tuple(shape), float("nan"), dtype=like.dtype, device=like.device)

    def __repr__(self) -> str:
        param_names = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
                         for p in param_names)
        return f"{self.__class__.__name__}({args})"


def expand_params(dist: Distribution, cls, batch_shape, names, _instance=None, event_dims: int = 0):
    """``dist.expand(batch_shape)`` for a distribution whose parameters are the tensors ``names``
    (each with ``event_dims`` trailing event dims kept as they are)."""
    new = dist._get_checked_instance(cls, _instance)
    batch_shape = as_size(batch_shape)
    for name in names:
        if name in dist.__dict__:
            value = dist.__dict__[name]
            tail = tuple(value.shape[value.dim() - event_dims:]) if event_dims else ()
            setattr(new, name, value.expand(tuple(batch_shape) + tail))
    return dist._init_expanded(new, batch_shape)


def broadcast_params(dist: Distribution, **params) -> Size:
    """Broadcasts the parameters (Numbers or Tensors) to one shape and stores each on ``dist``
    under its name; returns the batch shape: () when every parameter is a Number, else theirs."""
    values = broadcast_all(*params.values())
    for name, value in zip(params, values):
        setattr(dist, name, value)
    return Size() if all(isinstance(p, Number) for p in params.values()) else values[0].size()
