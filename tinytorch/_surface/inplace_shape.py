"""The in-place shape methods (``Tensor.squeeze_``, ``unsqueeze_``, ``t_``, ``transpose_``,
``swapaxes_``, ``swapdims_``, ``as_strided_``): the tensor becomes the view its out-of-place form
returns, in place. It keeps its identity and storage and takes the view's sizes, strides and
offset; while grad mode records, it also takes the view's autograd node, so gradients flow back
exactly as through the out-of-place view (PyTorch's semantics). Like every in-place op, it is
refused on a leaf that requires grad while grad mode is on. Installed on Tensor
by the package root (METHODS; ``tinytorch.as_strided_``, PyTorch's one top-level form, from here)."""
from __future__ import annotations

import inspect
from typing import Callable, Optional, Sequence

from tinytorch._core.graph import is_grad_enabled
from tinytorch._composites.pointwise import inplace_function
from tinytorch._tensor.tensor import Tensor


def _become(self: Tensor, view: Tensor) -> Tensor:
    """Makes ``self`` the view: its metadata, and its autograd history when the view recorded one."""
    self._impl = view._impl
    if view._grad_fn is not None:
        self._grad_fn = view._grad_fn
        self._output_nr = view._output_nr
    return self


def _shape_inplace(name: str, view: Callable) -> Callable:
    """``Tensor.<name>``: the in-place form of ``view`` (whose first parameter is the tensor)."""
    def method(self: Tensor, *args, **kwargs) -> Tensor:
        if is_grad_enabled() and self.requires_grad and self.is_leaf:
            raise RuntimeError(f"{name}(): a leaf Variable that requires grad is being used in an in-place "
                               f"operation.")
        return _become(self, view(self, *args, **kwargs))
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In-place version of :meth:`~Tensor.{name[:-1]}`."
    sig = inspect.signature(view)
    first, *rest = sig.parameters.values()
    method.__signature__ = sig.replace(parameters=[first.replace(name="self")] + rest)
    return method


# the out-of-place forms, with the in-place names' parameter names (PyTorch's) and error messages
def _squeeze(self: Tensor, dim: Optional[int] = None) -> Tensor:
    return self.squeeze() if dim is None else self.squeeze(dim)


def _unsqueeze(self: Tensor, dim: int) -> Tensor:
    return self.unsqueeze(dim)


def _t(self: Tensor) -> Tensor:
    if self.dim() > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {self.dim()}D")
    return self.t()


def _transpose(self: Tensor, dim0: int, dim1: int) -> Tensor:
    return self.transpose(dim0, dim1)


def _swapaxes(self: Tensor, axis0: int, axis1: int) -> Tensor:
    return self.transpose(axis0, axis1)


def _as_strided(self: Tensor, size: Sequence[int], stride: Sequence[int],
                storage_offset: Optional[int] = None) -> Tensor:
    return self.as_strided(size, stride, storage_offset)


METHODS = {name + "_": _shape_inplace(name + "_", view) for name, view in (
    ("squeeze", _squeeze), ("unsqueeze", _unsqueeze), ("t", _t), ("transpose", _transpose),
    ("swapaxes", _swapaxes), ("swapdims", _transpose), ("as_strided", _as_strided))}
as_strided_ = inplace_function(METHODS["as_strided_"])

__all__ = ["as_strided_"]
