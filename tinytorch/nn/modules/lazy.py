"""LazyModuleMixin (``nn.modules.lazy``) and LazyLinear: modules whose input size is read from
the first input. Until then their parameters and buffers are ``UninitializedParameter`` /
``UninitializedBuffer``; the first forward (a pre-hook) materializes them with the module's
dtype and device, runs ``reset_parameters`` and turns the module into ``cls_to_become`` (``Linear``
for ``LazyLinear``). ``load_state_dict`` materializes them from the checkpoint's shapes first.
An optimizer built before the first forward keeps working: materializing changes the objects in
place. The placeholder classes are imported when a lazy module is first built (``placeholders``):
defining them switches on the op dispatch of tensor subclasses (nn/_uninitialized.py)."""
from __future__ import annotations

from typing import Any, Optional

from tinytorch.autograd.grad_mode import no_grad
from tinytorch.nn.common_types import _device_t, _dtype_t
from tinytorch.nn.modules.linear import Linear
from tinytorch.nn.parameter import is_lazy
from tinytorch.tensor import Tensor

__all__ = ["LazyModuleMixin", "LazyLinear"]


def placeholders():
    """(UninitializedParameter, UninitializedBuffer), imported on first use."""
    from tinytorch.nn._uninitialized import UninitializedBuffer, UninitializedParameter
    return UninitializedParameter, UninitializedBuffer


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


class LazyLinear(LazyModuleMixin, Linear):
    """``Linear`` whose ``in_features`` is the last dimension of the first input."""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device: _device_t = None,
                 dtype: _dtype_t = None) -> None:
        super().__init__(0, 0, False)
        UninitializedParameter, _ = placeholders()
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
