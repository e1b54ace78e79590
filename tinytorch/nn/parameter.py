"""``nn.Parameter``: a Tensor that a Module registers as a learnable parameter."""
from __future__ import annotations

from tinytorch import _torch_unpickler
from tinytorch._torch_function import _disabled_torch_function_impl
from tinytorch._creation import empty
from tinytorch.tensor import Tensor


class Parameter(Tensor):
    """A kind of Tensor that is to be considered a module parameter (requires grad by default)."""

    __torch_function__ = _disabled_torch_function_impl  # ops on parameters return plain tensors, as PyTorch

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            data = empty(0)
        if requires_grad and not data.dtype.is_floating_point:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        p = Tensor.__new__(cls)
        p._impl = data.detach()._impl
        p.requires_grad_(requires_grad)
        return p

    def __init__(self, data=None, requires_grad: bool = True) -> None:
        pass

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        return Parameter(self.detach().clone(), self.requires_grad)


_torch_unpickler._set_parameter_class(Parameter)  # PyTorch checkpoints rebuild nn.Parameter through it


class Buffer(Tensor):
    """Marker for tensors registered as buffers (``nn.Buffer``)."""

    __torch_function__ = _disabled_torch_function_impl

    def __new__(cls, data: Tensor, *, persistent: bool = True):
        b = Tensor.__new__(cls)
        b._impl = data.detach()._impl
        b.persistent = persistent
        return b

    def __init__(self, data: Tensor, *, persistent: bool = True) -> None:
        pass


_UNINITIALIZED = ("UninitializedTensorMixin", "UninitializedParameter", "UninitializedBuffer")


def is_lazy(param) -> bool:
    """Whether ``param`` is an uninitialized placeholder of a lazy module (``UninitializedParameter``
    or ``UninitializedBuffer``)."""
    return getattr(type(param), "_uninitialized_placeholder", False)


def __getattr__(name: str):
    # the lazy modules' placeholders (nn/_uninitialized.py), defined on first use: see its docstring
    if name in _UNINITIALIZED:
        from tinytorch.nn import _uninitialized
        return getattr(_uninitialized, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
