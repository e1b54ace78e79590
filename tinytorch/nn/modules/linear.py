"""Identity, Linear, Bilinear."""
from __future__ import annotations

import math
from typing import Any

from tinytorch.tensor import Tensor
from tinytorch._creation import empty
from tinytorch.nn import functional as F
from tinytorch.nn import init
from tinytorch.nn.modules._checks import check_input
from tinytorch.nn.modules.module import Module
from tinytorch.nn.parameter import Parameter
from tinytorch.nn.common_types import _device_t, _dtype_t


def _weight_and_bias(module: Module, weight_shape: tuple, bias: bool, device, dtype) -> None:
    """Registers an uninitialized ``weight`` of ``weight_shape`` and, when ``bias``, a ``bias`` of
    ``weight_shape[0]`` elements (else ``bias`` is None); the caller's ``reset_parameters`` fills them."""
    module.weight = Parameter(empty(*weight_shape, dtype=dtype, device=device))
    module.register_parameter("bias", Parameter(empty(weight_shape[0], dtype=dtype, device=device)) if bias else None)


class Identity(Module):
    """A placeholder that returns its input (arguments are ignored)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, x: Tensor) -> Tensor:
        return x


class Linear(Module):
    """y = x A^T + b. Weight: kaiming_uniform_(a=sqrt(5)), i.e. U(-1/sqrt(in_features), 1/sqrt(in_features));
    bias ~ U(-1/sqrt(in_features), 1/sqrt(in_features)), as PyTorch."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device: _device_t = None,
                 dtype: _dtype_t = None) -> None:
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        _weight_and_bias(self, (out_features, in_features), bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, x: Tensor) -> Tensor:
        try:
            return F.linear(x, self.weight, self.bias)
        except RuntimeError:
            # checked only on failure: on small inputs the check costs as much as the op
            if x.dim() == 0 or x.shape[-1] != self.in_features:
                raise RuntimeError(f"Linear: mat1 and mat2 shapes cannot be multiplied: expected input with "
                                   f"last dimension {self.in_features}, got input of shape {list(x.shape)}") from None
            raise

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class NonDynamicallyQuantizableLinear(Linear):
    """PyTorch's name for MultiheadAttention.out_proj (a plain Linear); kept so reprs and
    ``nn.modules.linear.NonDynamicallyQuantizableLinear`` imports match."""


class Bilinear(Module):
    """y = x1^T A x2 + b, A: (out, in1, in2)."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int, bias: bool = True,
                 device: _device_t = None, dtype: _dtype_t = None) -> None:
        super().__init__()
        self.in1_features, self.in2_features, self.out_features = in1_features, in2_features, out_features
        _weight_and_bias(self, (out_features, in1_features, in2_features), bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.shape[1])
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        check_input(self, x1, (1, 2, 3, 4, 5), -1, self.in1_features, "features")
        check_input(self, x2, (1, 2, 3, 4, 5), -1, self.in2_features, "features")
        return F.bilinear(x1, x2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


def __getattr__(name: str):
    # nn.modules.linear.LazyLinear: defined in lazy.py (which imports this module)
    if name == "LazyLinear":
        from tinytorch.nn.modules.lazy import LazyLinear
        return LazyLinear
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
