"""The ``__torch_function__`` protocol, minimal version (PyTorch's "extending torch with a Tensor
subclass"): a method or operator called on an instance of a ``Tensor`` subclass goes through
``cls.__torch_function__(func, types, args, kwargs)``, whose default runs the op and returns its
tensors as ``cls``; a subclass may override it to intercept ops.

Costs nothing on plain tensors: the dispatching wrappers are installed on each subclass when it is
created (``Tensor.__init_subclass__``), never on ``Tensor`` itself, and a subclass that sets
``__torch_function__ = _disabled_torch_function_impl`` (``nn.Parameter``, as in PyTorch) gets none,
so ops on it return plain tensors. The package's op functions (``tinytorch.add(s, 1)``) dispatch
once the first such subclass exists: the package root then replaces them with dispatching
wrappers (``on_first_subclass``); ``nn.functional`` does not dispatch (see docs/interop.md).
"""
from __future__ import annotations

import inspect
import threading
from typing import Any, Callable, Dict, Iterable, Tuple

from tinytorch._core.tensor_base import TensorBase

_state = threading.local()


def _disabled_torch_function_impl(*args: Any, **kwargs: Any) -> Any:
    """Marker: a class whose ``__torch_function__`` is this gets no dispatch (``nn.Parameter``)."""
    raise RuntimeError("_disabled_torch_function_impl is a marker, not a function to call")


class DisableTorchFunctionSubclass:
    """Context manager: ops inside run without ``__torch_function__`` dispatch (as PyTorch's)."""

    def __enter__(self) -> None:
        self._prev = getattr(_state, "disabled", False)
        _state.disabled = True

    def __exit__(self, *exc: Any) -> None:
        _state.disabled = self._prev


def _is_disabled(cls: type) -> bool:
    tf = inspect.getattr_static(cls, "__torch_function__", None)
    tf = getattr(tf, "__func__", tf)
    return tf is _disabled_torch_function_impl


def _overloaded_types(args: Iterable[Any], kwargs: Dict[str, Any]) -> list:
    """Types with a ``__torch_function__`` among the arguments (one level into lists/tuples),
    subclasses before their superclasses, otherwise left to right (PyTorch's order)."""
    found: list = []

    def add(x: Any) -> None:
        t = type(x)
        if isinstance(x, TensorBase) and t is not _tensor_class[0] and t not in found and not _is_disabled(t):
            for i, other in enumerate(found):
                if issubclass(t, other):
                    found.insert(i, t)
                    return
            found.append(t)

    for a in list(args) + list(kwargs.values()):
        if isinstance(a, (list, tuple)):
            for x in a:
                add(x)
        else:
            add(a)
    return found


_tensor_class: list = [None]  # tinytorch.Tensor, set by tensor.py


def dispatch(func: Callable, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Any:
    """Runs ``func(*args, **kwargs)`` through the arguments' ``__torch_function__`` overrides."""
    types = _overloaded_types(args, kwargs)
    if not types:
        return func(*args, **kwargs)
    return call_overrides(func, types, args, kwargs)


def call_overrides(func: Callable, types: list, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Any:
    """The first result other than NotImplemented of the overriding ``types``' ``__torch_function__(func,
    types, args, kwargs)``, called in PyTorch's order; TypeError when every one declines."""
    for cls in types:
        ret = cls.__torch_function__(func, tuple(types), args, kwargs)
        if ret is not NotImplemented:
            return ret
    raise TypeError(f"no implementation found for '{getattr(func, '__qualname__', func)}' on types that implement "
                    f"__torch_function__: {[t.__name__ for t in types]}")


def convert(ret: Any, cls: type) -> Any:
    """The default ``__torch_function__``'s result: tensors as ``cls`` (PyTorch's ``_convert``)."""
    if isinstance(ret, TensorBase) and not isinstance(ret, cls):
        return ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)) and any(isinstance(r, TensorBase) for r in ret):
        items = [convert(r, cls) for r in ret]
        return type(ret)(items) if type(ret) in (tuple, list) else type(ret)(*items)  # namedtuples
    return ret


def default_torch_function(cls: type, func: Callable, types: Tuple[type, ...], args: Tuple[Any, ...] = (),
                           kwargs: Any = None) -> Any:
    if kwargs is None:
        kwargs = {}
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    with DisableTorchFunctionSubclass():
        ret = func(*args, **kwargs)
    return convert(ret, cls)


# Tensor attributes that are not ops: never wrapped (metadata, conversions out of tinytorch,
# the protocols themselves, autograd bookkeeping).
_NOT_OPS = frozenset({
    "__init__", "__new__", "__init_subclass__", "__torch_function__", "__repr__", "__str__", "__format__",
    "__reduce_ex__", "__reduce__", "__getstate__", "__setstate__", "__copy__", "__deepcopy__", "__hash__",
    "__len__", "__iter__", "__bool__", "__float__", "__int__", "__index__", "__complex__", "__array__",
    "__array_ufunc__", "__dlpack__", "__dlpack_device__", "__getattribute__", "__getattr__", "__setattr__",
    "__delattr__", "__dir__", "__sizeof__", "__subclasshook__", "__class_getitem__", "__cuda_array_interface__",
    "numpy", "tolist", "item", "dim", "ndimension", "size", "stride", "numel", "nelement", "element_size",
    "storage_offset", "is_contiguous", "data_ptr", "backward", "register_hook", "register_post_accumulate_grad_hook",
    "retain_grad", "requires_grad_", "as_subclass", "is_floating_point", "type", "record_stream", "is_pinned",
    "detach_", "is_tensor", "get_device",
})


def _op_names(tensor_cls: type) -> list:
    names = []
    for name in dir(tensor_cls):
        if name in _NOT_OPS or (name.startswith("_") and not (name.startswith("__") and name.endswith("__"))):
            continue
        attr = inspect.getattr_static(tensor_cls, name)
        if isinstance(attr, (property, type, staticmethod, classmethod)) or not callable(attr):
            continue
        names.append(name)
    return names


def _dispatching_method(name: str, base: Callable) -> Callable:
    def method(self, *args, **kwargs):
        if getattr(_state, "disabled", False):
            return base(self, *args, **kwargs)
        return dispatch(base, (self,) + args, kwargs)
    method.__name__ = method.__qualname__ = name
    method.__doc__ = getattr(base, "__doc__", None)
    method.__dict__.update(getattr(base, "__dict__", {}))
    return method


_first_subclass_hooks: list = []  # run once, when the first dispatching subclass is created


def on_first_subclass(hook: Callable[[], None]) -> None:
    _first_subclass_hooks.append(hook)


def dispatching_function(fn: Callable) -> Callable:
    """``fn`` that dispatches on its arguments' ``__torch_function__`` (tinytorch.<op> functions)."""
    def function(*args, **kwargs):
        if getattr(_state, "disabled", False):
            return fn(*args, **kwargs)
        return dispatch(fn, args, kwargs)
    function.__name__ = getattr(fn, "__name__", "function")
    function.__qualname__ = getattr(fn, "__qualname__", function.__name__)
    function.__doc__ = getattr(fn, "__doc__", None)
    function.__dict__.update(getattr(fn, "__dict__", {}))   # the attributes others read (autocast's policy table)
    function.__wrapped__ = fn
    return function


def install(cls: type, tensor_cls: type) -> None:
    """Called for each new subclass of Tensor: dispatching wrappers for its op methods."""
    if _is_disabled(cls):
        return
    while _first_subclass_hooks:
        _first_subclass_hooks.pop(0)()
    for name in _op_names(tensor_cls):
        if name in cls.__dict__:
            continue  # the subclass defines it itself
        if any(name in k.__dict__ for k in cls.__mro__[1:cls.__mro__.index(tensor_cls)]):
            continue  # an intermediate subclass already has it (wrapper or its own)
        setattr(cls, name, _dispatching_method(name, getattr(tensor_cls, name)))


def as_subclass(t: TensorBase, cls: type, tensor_cls: type, strided_view: Callable) -> TensorBase:
    """``Tensor.as_subclass(cls)``: an instance of ``cls`` sharing ``t``'s data and autograd history
    (a leaf that requires grad is seen through a view, so gradients reach it)."""
    if not (isinstance(cls, type) and issubclass(cls, tensor_cls)):
        raise TypeError(f"as_subclass: cls must be a subclass of Tensor, got {cls!r}")
    src = t
    if t._grad_fn is None and t._requires_grad:
        src = strided_view(t, tuple(t._impl.shape), t._impl.stride(), t._impl.storage_offset)
    out = TensorBase.__new__(cls)
    out._impl = src._impl
    out._grad_fn, out._output_nr = src._grad_fn, src._output_nr
    out._requires_grad = src._requires_grad
    out._base = src._base
    return out
