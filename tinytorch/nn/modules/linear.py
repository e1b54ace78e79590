"""Identity, Linear, Bilinear, LazyLinear (the lazy machinery is nn/modules/lazy.py)."""
from __future__ import annotations

import math
from typing import Any

from tinytorch._tensor.tensor import Tensor
from tinytorch._tensor.creation import empty
from tinytorch.autograd.grad_mode import no_grad
from tinytorch.nn import functional as F
from tinytorch.nn import init
from tinytorch.nn.modules._checks import check_input
from tinytorch.nn.modules.lazy import LazyModuleMixin, placeholders
from tinytorch.nn.modules.module import Module
from tinytorch.nn.parameter import Parameter
from tinytorch.nn.common_types import _device_t, _dtype_t


def _weight_and_bias(module: Module, weight_shape: tuple, bias: bool, device, dtype) -> None:
    """Registers an uninitialized ``weight`` of ``weight_shape`` and, when ``bias``, a ``bias`` of
    ``weight_shape[0]`` elements (else ``bias`` is None); the caller's ``reset_parameters`` fills them."""
    module.weight = Parameter(empty(*weight_shape, dtype=dtype, device=device))
    module.register_parameter("bias", Parameter(empty(weight_shape[0], dtype=dtype, device=device)) if bias else None)


def _reset_linear(module: Module) -> None:
    """PyTorch's Linear initialization of ``module.weight`` (out, in) and ``module.bias``:
    kaiming_uniform_(a=sqrt(5)) and U(-1/sqrt(in_features), 1/sqrt(in_features))."""
    init.kaiming_uniform_(module.weight, a=math.sqrt(5))
    if module.bias is not None:
        bound = 1 / math.sqrt(module.in_features) if module.in_features > 0 else 0
        init.uniform_(module.bias, -bound, bound)


def _lazy_weight_and_bias(module: Module, bias: bool, device, dtype) -> None:
    """``weight`` and, when ``bias``, ``bias`` as placeholders (lazy.py) that the first input gives a shape."""
    UninitializedParameter, _ = placeholders()
    module.weight = UninitializedParameter(device=device, dtype=dtype)
    if bias:
        module.bias = UninitializedParameter(device=device, dtype=dtype)


class Identity(Module):
    """A placeholder identity operator that is argument-insensitive.

    A placeholder that returns its input (arguments are ignored)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, x: Tensor) -> Tensor:
        return x


class Linear(Module):
    """Applies an affine linear transformation to the incoming data: :math:`y = xA^T + b`.

    y = x A^T + b. Weight: kaiming_uniform_(a=sqrt(5)), i.e. U(-1/sqrt(in_features), 1/sqrt(in_features));
    bias ~ U(-1/sqrt(in_features), 1/sqrt(in_features)), as PyTorch.

    Args:
        in_features (int): size of each input sample.
        out_features (int): size of each output sample.
        bias (bool): if set to ``False``, the layer will not learn an additive bias. Default: ``True``
        device (device, optional): the device of the parameters and buffers. Default: ``None``
        dtype (dtype, optional): the dtype of the parameters and buffers. Default: ``None``"""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device: _device_t = None,
                 dtype: _dtype_t = None) -> None:
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        _weight_and_bias(self, (out_features, in_features), bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_linear(self)

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
    """Applies a bilinear transformation to the incoming data: :math:`y = x_1^T A x_2 + b`.

    y = x1^T A x2 + b, A: (out, in1, in2).

    Args:
        in1_features (int): size of each first input sample.
        in2_features (int): size of each second input sample.
        out_features (int): size of each output sample.
        bias (bool): if set to ``False``, the layer will not learn an additive bias. Default: ``True``
        device (device, optional): the device of the parameters and buffers. Default: ``None``
        dtype (dtype, optional): the dtype of the parameters and buffers. Default: ``None``"""

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


class LazyLinear(LazyModuleMixin, Linear):
    """A :class:`torch.nn.Linear` module where `in_features` is inferred.

    ``Linear`` whose ``in_features`` is the last dimension of the first input.

    Args:
        out_features (int): size of each output sample.
        bias (bool): if set to ``False``, the layer will not learn an additive bias. Default: ``True``
        device (device, optional): the device of the parameters and buffers. Default: ``None``
        dtype (dtype, optional): the dtype of the parameters and buffers. Default: ``None``"""

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device: _device_t = None,
                 dtype: _dtype_t = None) -> None:
        super().__init__(0, 0, False)
        _lazy_weight_and_bias(self, bias, device, dtype)
        self.out_features = out_features

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
