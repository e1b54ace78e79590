"""LinearCrossEntropyLoss: a Linear layer to logits and cross entropy in one module, through
``F.linear_cross_entropy`` (chunked over the batch when ``options`` is given)."""
from __future__ import annotations

import math
from typing import Optional, Tuple

from tinytorch.nn import functional as F
from tinytorch.nn.functional.linear_cross_entropy import LinearCrossEntropyOptions
from tinytorch.nn.common_types import _device_t, _dtype_t
from tinytorch.nn.modules.linear import Linear
from tinytorch.nn.modules.loss import _WeightedLoss
from tinytorch.tensor import Tensor

__all__ = ["LinearCrossEntropyLoss"]


class LinearCrossEntropyLoss(_WeightedLoss):
    """Cross entropy between ``target`` and the logits of ``input`` through an internal Linear
    (weight stored flat, (C * prod(out_features), in_features), as PyTorch's)."""

    def __init__(self, in_features: int, num_classes: int, *, out_features: Tuple[int, ...] = (), bias: bool = False,
                 device: _device_t = None, dtype: _dtype_t = None, reduction: str = "mean",
                 weight: Optional[Tensor] = None, ignore_index: Optional[int] = None, label_smoothing: float = 0.0,
                 options: Optional[LinearCrossEntropyOptions] = None) -> None:
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got {tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(f"expected label_smoothing to be in range [0, 1], got {label_smoothing}")
        super().__init__(weight, None, None, reduction)
        self.num_classes, self.out_features = num_classes, tuple(out_features)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing
        self.linear = Linear(in_features, math.prod(self.out_features) * num_classes, bias=bias, device=device,
                             dtype=dtype)
        self.options = options

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        w = self.linear.weight.reshape(self.num_classes, *self.out_features, self.linear.in_features)
        b = None if self.linear.bias is None else self.linear.bias.reshape(self.num_classes, *self.out_features)
        return F.linear_cross_entropy(input, w, target, linear_bias=b, weight=self.weight, reduction=self.reduction,
                                      ignore_index=self.ignore_index, label_smoothing=self.label_smoothing,
                                      options=self.options)

    def extra_repr(self) -> str:
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")
