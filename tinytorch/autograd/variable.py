"""``autograd.Variable``: PyTorch's pre-0.4 wrapper, kept as PyTorch keeps it: calling it returns
a tensor sharing ``data``'s memory (no history), with ``requires_grad`` as given, and every
tensor is an instance of it."""
from __future__ import annotations

import warnings
from typing import Any

from tinytorch._tensor.tensor import Tensor


class _VariableMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor)

    def __call__(cls, data: Any, requires_grad: bool = False, volatile: bool = False) -> Tensor:
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          UserWarning, stacklevel=2)
        out = data.detach()
        return out.requires_grad_(requires_grad) if requires_grad else out


class Variable(metaclass=_VariableMeta):
    """Variable(data, requires_grad=False, volatile=False) -> Tensor (legacy; use tensors directly)."""
