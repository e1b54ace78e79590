"""``nn.parameter.UninitializedParameter`` / ``UninitializedBuffer``: placeholders of a lazy module
whose shape is not known yet; ``materialize(shape)`` turns one, in place (same object, so an
optimizer built before the first forward sees the real tensor), into a ``Parameter`` / ``Tensor``
of its dtype and device.

Any other op on one raises ValueError, as PyTorch's, through ``__torch_function__``. Defining
such a class switches on the package's op dispatch (tinytorch/_torch_function.py), so this module
is imported only when a program first asks for these names (``nn.parameter``'s ``__getattr__``)."""
from __future__ import annotations

from typing import Any

from tinytorch import _torch_function
from tinytorch._creation import empty
from tinytorch.nn.parameter import Parameter
from tinytorch.tensor import Tensor

__all__ = ["UninitializedTensorMixin", "UninitializedParameter", "UninitializedBuffer"]

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

    def __new__(cls, requires_grad: bool = False, device: Any = None, dtype: Any = None, persistent: bool = True):
        b = Tensor.__new__(cls)
        b._impl = empty(0, dtype=dtype, device=device)._impl
        b.requires_grad_(requires_grad)
        b.persistent = persistent
        return b

    def __init__(self, requires_grad: bool = False, device: Any = None, dtype: Any = None,
                 persistent: bool = True) -> None:
        pass
