"""``tinytorch.utils.dlpack``, as ``torch.utils.dlpack``: DLPack capsules in and out."""
from __future__ import annotations

from typing import Any

from tinytorch._tensor.interop import from_dlpack
from tinytorch._tensor.tensor import Tensor


def to_dlpack(tensor: Tensor) -> Any:
    """Returns an opaque object (a "DLPack capsule") representing the tensor (no copy)."""
    return tensor.__dlpack__()


__all__ = ["from_dlpack", "to_dlpack"]
