"""LazyModuleMixin (``nn.modules.lazy``): the machinery of modules whose input size is read from
the first input (LazyLinear, LazyConv*, LazyBatchNorm*, ...). Until then their parameters and
buffers are ``UninitializedParameter`` / ``UninitializedBuffer``; the first forward (a pre-hook)
materializes them with the module's dtype and device, runs ``reset_parameters`` and turns the
module into ``cls_to_become`` (``Linear`` for ``LazyLinear``). ``load_state_dict`` materializes
them from the checkpoint's shapes first. An optimizer built before the first forward keeps
working: materializing changes the objects in place. The placeholder classes are defined when a
lazy module is first built (``placeholders``): defining them switches on the op dispatch of
tensor subclasses (see nn/parameter.py)."""
from __future__ import annotations

from typing import Any, Optional

from tinytorch.autograd.grad_mode import no_grad
from tinytorch.nn import parameter as _parameter
from tinytorch.nn.parameter import is_lazy

__all__ = ["LazyModuleMixin"]


def placeholders():
    """(UninitializedParameter, UninitializedBuffer), defined on first use (nn/parameter.py)."""
    return _parameter.UninitializedParameter, _parameter.UninitializedBuffer


def lazy_class(eager: type, mixin: type, module: str, doc: str) -> type:
    """``Lazy<eager>``: ``mixin`` over the eager class it becomes after the first input, a
    module-level class of ``module`` (pickle and ``isinstance(m, eager)`` work as usual)."""
    name = "Lazy" + eager.__name__
    return type(name, (mixin, eager), {"__doc__": doc, "__module__": module, "__qualname__": name,
                                       "cls_to_become": eager})


class LazyModuleMixin:
    """A mixin for modules that lazily initialize parameters, also known as "lazy modules"."""

    cls_to_become: Optional[type] = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters)

    def has_uninitialized_params(self) -> bool:
        """Check if a module has parameters that are not initialized."""
        own = list(self._parameters.values()) + list(self._buffers.values())
        return any(is_lazy(t) for t in own)

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        """Initialize parameters according to the input batch properties."""
        raise NotImplementedError(f"initialize_parameters is not implemented for {type(self).__name__}")

    def _infer_parameters(self, module: "LazyModuleMixin", args: tuple) -> None:
        """The forward pre-hook: materialize from the first input, then become ``cls_to_become``."""
        module.initialize_parameters(*args)
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {type(module).__name__} has not been fully initialized")
        module._initialize_hook.remove()
        del module._initialize_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _lazy_load_hook(self, state_dict: dict, prefix: str) -> None:
        """Called by ``Module.load_state_dict``: materializes the placeholders the checkpoint has."""
        with no_grad():
            for store in (self._parameters, self._buffers):
                for name, t in store.items():
                    key = prefix + name
                    if t is not None and is_lazy(t) and key in state_dict:
                        t.materialize(tuple(state_dict[key].shape))

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with `DataParallel`. Run a dummy "
                           "forward pass to correctly initialize the modules")
