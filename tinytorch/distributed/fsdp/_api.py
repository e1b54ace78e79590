"""The policies ``fully_shard`` takes (PyTorch's ``torch.distributed.fsdp`` names and defaults)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from tinytorch._core.dtype import dtype as _dtype

__all__ = ["MixedPrecisionPolicy", "OffloadPolicy"]


@dataclass(frozen=True)
class MixedPrecisionPolicy:
    """How ``fully_shard`` casts parameters, gradients and forward inputs/outputs.

    Args:
        param_dtype (dtype, optional): the dtype of the unsharded parameters, and so of forward and
            backward compute. The sharded parameters (what the optimizer steps) keep their own
            dtype; each rank casts its shard to ``param_dtype`` before the all-gather. ``None``:
            no cast.
        reduce_dtype (dtype, optional): the dtype of the gradient reduce-scatter; the reduced
            shard is cast back to the sharded parameter's dtype. ``None``: ``param_dtype`` when set,
            else the gradient's own dtype (as PyTorch).
        output_dtype (dtype, optional): floating-point forward outputs are cast to it.
        cast_forward_inputs (bool): cast floating-point forward inputs to ``param_dtype``
            (default True).
    """
    param_dtype: Optional[_dtype] = None
    reduce_dtype: Optional[_dtype] = None
    output_dtype: Optional[_dtype] = None
    cast_forward_inputs: bool = True


@dataclass(frozen=True)
class OffloadPolicy:
    """No offloading (PyTorch's default policy); ``CPUOffloadPolicy`` is not implemented."""
