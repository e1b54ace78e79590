"""``nn.parameter``: ``Parameter`` (a Tensor that a Module registers as a learnable parameter),
``Buffer``, and the lazy modules' placeholders ``UninitializedParameter`` / ``UninitializedBuffer``.

A placeholder stands for a tensor whose shape is not known yet; ``materialize(shape)`` turns one,
in place (same object, so an optimizer built before the first forward sees the real tensor), into
a ``Parameter`` / ``Tensor`` of its dtype and device. Any other op on one raises ValueError, as
PyTorch's, through ``__torch_function__``. Defining such a class switches on the package's op
dispatch (tinytorch/_tensor/torch_function.py), so the two placeholder classes are defined only
when a program first asks for them (this module's ``__getattr__``)."""
from __future__ import annotations

from typing import Any

from tinytorch.serialization import _torch_unpickler
from tinytorch._tensor import torch_function as _torch_function
from tinytorch._tensor.torch_function import _disabled_torch_function_impl
from tinytorch._tensor.creation import empty
from tinytorch._tensor.tensor import Tensor


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


def is_lazy(param) -> bool:
    """Whether ``param`` is an uninitialized placeholder of a lazy module (``UninitializedParameter``
    or ``UninitializedBuffer``)."""
    return getattr(type(param), "_uninitialized_placeholder", False)


_USE_ERROR = ("Attempted to use an uninitialized parameter in {}. This error happens when you are using a "
              "`LazyModule` or explicitly manipulating `torch.nn.parameter.UninitializedParameter` objects. When "
              "using LazyModules Call `forward` with a dummy batch to initialize the parameters before calling "
              "torch functions")
# ops that work on a placeholder: moving/casting it (Module.to), copying into it, dtype queries
_ALLOWED = frozenset({"to", "cuda", "cpu", "float", "double", "half", "bfloat16", "is_floating_point",
                      "is_complex", "get_device", "__hash__", "copy_", "share_memory_"})


class UninitializedTensorMixin:
    cls_to_become: type = Tensor
    _uninitialized_placeholder = True        # nn.parameter.is_lazy

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Create a Parameter or Tensor with the same properties of the uninitialized one (its dtype
        and device unless given), of ``shape``, and turn this object into it (uninitialized data)."""
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        new = empty(shape, dtype=dtype or self.dtype, device=device or self.device)
        self._impl = new._impl
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        if getattr(_torch_function._state, "disabled", False):   # inside an allowed op: the placeholder's
            return self._impl.shape
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. This error usually "
                           "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
                           "initialized one. Call `forward` to initialize the parameters before accessing their "
                           "attributes.")

    def numel(self) -> int:
        raise ValueError(_USE_ERROR.format("<method 'numel' of 'Tensor' objects>"))

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
                           "initialize the parameters before calling `module.share_memory()`.")

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def __reduce_ex__(self, proto):
        return (type(self), (self.requires_grad,))

    def __deepcopy__(self, memo):
        return type(self)(self.requires_grad, self.device, self.dtype)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        if name == "detach":          # state_dict(): a placeholder is saved as itself, as PyTorch
            return args[0]
        if name in _ALLOWED:
            return _torch_function.default_torch_function(cls, func, types, args, kwargs)
        raise ValueError(_USE_ERROR.format(f"<method '{name}' of 'Tensor' objects>"))


def _define_placeholders() -> None:
    """Defines UninitializedParameter and UninitializedBuffer as module globals (once, on first
    use: the first dispatching Tensor subclass switches on op dispatch for the whole package)."""
    class UninitializedParameter(UninitializedTensorMixin, Parameter):
        """A parameter that is not initialized: a lazy module's, until its first forward."""

        cls_to_become = Parameter

        def __new__(cls, requires_grad: bool = True, device: Any = None, dtype: Any = None):
            p = Tensor.__new__(cls)
            p._impl = empty(0, dtype=dtype, device=device)._impl
            p.requires_grad_(requires_grad)
            return p

        def __init__(self, requires_grad: bool = True, device: Any = None, dtype: Any = None) -> None:
            pass

    class UninitializedBuffer(UninitializedTensorMixin, Tensor):
        """A buffer that is not initialized: a lazy module's, until its first forward."""

        cls_to_become = Tensor

        def __new__(cls, requires_grad: bool = False, device: Any = None, dtype: Any = None,
                    persistent: bool = True):
            b = Tensor.__new__(cls)
            b._impl = empty(0, dtype=dtype, device=device)._impl
            b.requires_grad_(requires_grad)
            b.persistent = persistent
            return b

        def __init__(self, requires_grad: bool = False, device: Any = None, dtype: Any = None,
                     persistent: bool = True) -> None:
            pass

    for cls in (UninitializedParameter, UninitializedBuffer):
        cls.__qualname__ = cls.__name__        # module-level names, for pickle and reprs
        globals()[cls.__name__] = cls


_PLACEHOLDERS = ("UninitializedParameter", "UninitializedBuffer")


def __getattr__(name: str):
    if name in _PLACEHOLDERS:
        _define_placeholders()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
