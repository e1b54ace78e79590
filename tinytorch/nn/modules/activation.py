"""Activation modules: one line each over nn.functional."""
from __future__ import annotations

from typing import Optional

from tinytorch._tensor.tensor import Tensor
from tinytorch._tensor.creation import full
from tinytorch.nn import functional as F
from tinytorch.nn.modules._doc_notes import common_notes, fill_doc, softmax_notes
from tinytorch.nn.modules.module import Module
from tinytorch.nn.parameter import Parameter
from tinytorch.nn.common_types import _device_t, _dtype_t


class _InplaceActivation(Module):
    """An element-wise activation whose one argument is ``inplace``."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class _AlphaActivation(_InplaceActivation):
    """ELU and CELU: ``alpha`` and ``inplace``."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__(inplace)
        self.alpha = alpha


class _SoftmaxNd(Module):
    """Softmax, LogSoftmax and Softmin: the one argument is ``dim``."""

    def __init__(self, dim: Optional[int] = None) -> None:
        super().__init__()
        self.dim = dim

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


@fill_doc(common_notes)
class ReLU(_InplaceActivation):
    """Applies the rectified linear unit function element-wise.

    Args:
        {inplace}"""
    def forward(self, x: Tensor) -> Tensor:
        return F.relu(x, self.inplace)


class GELU(Module):
    r"""Applies the Gaussian Error Linear Units function: :math:`\text{GELU}(x) = x * \Phi(x)`.

    Args:
        approximate (str, optional): the gelu approximation algorithm to use: ``'none'`` | ``'tanh'``.
            Default: ``'none'``"""
    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, x: Tensor) -> Tensor:
        return F.gelu(x, self.approximate)

    def extra_repr(self) -> str:
        return f"approximate='{self.approximate}'"


@fill_doc(common_notes)
class SiLU(_InplaceActivation):
    """Applies the Sigmoid Linear Unit (SiLU) function, element-wise.

    Args:
        {inplace}"""
    def forward(self, x: Tensor) -> Tensor:
        return F.silu(x, self.inplace)


class Tanh(Module):
    """Applies the Hyperbolic Tangent (Tanh) function element-wise."""
    def forward(self, x: Tensor) -> Tensor:
        return F.tanh(x)


class Sigmoid(Module):
    """Applies the Sigmoid function element-wise."""
    def forward(self, x: Tensor) -> Tensor:
        return F.sigmoid(x)


@fill_doc(common_notes)
class Mish(_InplaceActivation):
    """Applies the Mish function, element-wise.

    Args:
        {inplace}"""
    def forward(self, x: Tensor) -> Tensor:
        return F.mish(x, self.inplace)


@fill_doc(common_notes)
class Hardswish(_InplaceActivation):
    """Applies the Hardswish function, element-wise.

    Args:
        {inplace}"""
    def forward(self, x: Tensor) -> Tensor:
        return F.hardswish(x, self.inplace)


@fill_doc(softmax_notes)
class Softmax(_SoftmaxNd):
    """Applies the Softmax function to an n-dimensional input Tensor, rescaling them so that the elements
    of the n-dimensional output Tensor lie in the range [0,1] and sum to 1.

    Args:
        {softmax_dim}"""
    def forward(self, x: Tensor) -> Tensor:
        return F.softmax(x, self.dim)


class LogSoftmax(_SoftmaxNd):
    r"""Applies the :math:`\log(\text{Softmax}(x))` function to an n-dimensional input Tensor.

    Args:
        dim (int): a dimension along which the softmax will be computed (so every slice along dim will
            sum to 1). Default: ``None``"""
    def forward(self, x: Tensor) -> Tensor:
        return F.log_softmax(x, self.dim)


@fill_doc(common_notes)
class LeakyReLU(Module):
    """Applies the LeakyReLU function element-wise.

    Args:
        negative_slope (float): controls the angle of the negative slope (which is used for negative
            input values). Default: ``0.01``
        {inplace}"""
    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.leaky_relu(x, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


@fill_doc(common_notes)
class ELU(_AlphaActivation):
    r"""Applies the Exponential Linear Unit (ELU) function, element-wise.

    Args:
        alpha (float): the :math:`\alpha` value for the formula. Default: ``1.0``
        {inplace}"""

    def forward(self, x: Tensor) -> Tensor:
        return F.elu(x, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Softplus(Module):
    r"""Applies the Softplus function element-wise.

    Args:
        beta (float): the :math:`\beta` value for the formula. Default: ``1.0``
        threshold (float): values above this revert to a linear function. Default: ``20.0``"""
    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, x: Tensor) -> Tensor:
        return F.softplus(x, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


@fill_doc(common_notes)
class Hardtanh(Module):
    """Applies the HardTanh function element-wise.

    Args:
        min_val (float): minimum value of the linear region range. Default: ``-1.0``
        max_val (float): maximum value of the linear region range. Default: ``1.0``
        {inplace}"""
    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        if max_val <= min_val:
            raise ValueError(f"Hardtanh: max_val ({max_val}) must be greater than min_val ({min_val})")
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.hardtanh(x, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + (", inplace=True" if self.inplace else "")


class ReLU6(Hardtanh):
    r"""Applies the ReLU6 function element-wise: :math:`\text{ReLU6}(x) = \min(\max(0,x), 6)`.

    Args:
        inplace (bool): can optionally do the operation in-place. Default: ``False``"""
    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class LogSigmoid(Module):
    """Applies the Logsigmoid function element-wise."""
    def forward(self, x: Tensor) -> Tensor:
        return F.logsigmoid(x)


@fill_doc(common_notes)
class SELU(_InplaceActivation):
    """Applies the SELU function element-wise.

    Args:
        {inplace}"""
    def forward(self, x: Tensor) -> Tensor:
        return F.selu(x, self.inplace)

    extra_repr = Module.extra_repr   # (its repr does not show inplace)


class CELU(_AlphaActivation):
    r"""Applies the CELU function element-wise: :math:`\text{CELU}(x) = \max(0,x) + \min(0, \alpha *
    (\exp(x/\alpha) - 1))`.

    Args:
        alpha (float): the :math:`\alpha` value for the formula. Default: ``1.0``
        inplace (bool): can optionally do the operation in-place. Default: ``False``"""

    def forward(self, x: Tensor) -> Tensor:
        return F.celu(x, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}"


class Softsign(Module):
    """Applies the element-wise Softsign function."""
    def forward(self, x: Tensor) -> Tensor:
        return F.softsign(x)


class Tanhshrink(Module):
    """Applies the element-wise Tanhshrink function."""
    def forward(self, x: Tensor) -> Tensor:
        return F.tanhshrink(x)


@fill_doc(common_notes)
class Threshold(Module):
    """Thresholds each element of the input Tensor.

    Args:
        threshold (float): the value to threshold at.
        value (float): the value to replace with.
        {inplace}"""
    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.threshold(x, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}"


class GLU(Module):
    r"""Applies the gated linear unit function :math:`{GLU}(a, b)= a \otimes \sigma(b)` where :math:`a` is
    the first half of the input matrices and :math:`b` is the second half.

    Args:
        dim (int): the dimension on which to split the input. Default: ``-1``"""
    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x: Tensor) -> Tensor:
        return F.glu(x, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class PReLU(Module):
    r"""Applies the element-wise PReLU function: :math:`\text{PReLU}(x) = \max(0,x) + a * \min(0,x)`.

    max(0, x) + a * min(0, x) with a learnable a (one, or one per channel), initialized to init.

    Args:
        num_parameters (int): number of :math:`a` to learn. Although it takes an int as input, there is
            only two values are legitimate: 1, or the number of channels at input. Default: ``1``
        init (float): the initial value of :math:`a`. Default: ``0.25``
        device (device, optional): the device of the parameters and buffers. Default: ``None``
        dtype (dtype, optional): the dtype of the parameters and buffers. Default: ``None``"""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: _device_t = None,
                 dtype: _dtype_t = None) -> None:
        super().__init__()
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(full((num_parameters,), init, dtype=dtype, device=device))

    def forward(self, x: Tensor) -> Tensor:
        return F.prelu(x, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class Hardshrink(Module):
    r"""Applies the Hard Shrinkage (Hardshrink) function element-wise.

    Args:
        lambd (float): the :math:`\lambda` value for the shrinkage formulation. Default: ``0.5``"""
    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, x: Tensor) -> Tensor:
        return F.hardshrink(x, self.lambd)


class Softshrink(Hardshrink):
    r"""Applies the soft shrinkage function element-wise.

    Args:
        lambd (float): the :math:`\lambda` value for the shrinkage formulation. Default: ``0.5``"""
    def forward(self, x: Tensor) -> Tensor:
        return F.softshrink(x, self.lambd)


@fill_doc(softmax_notes)
class Softmin(_SoftmaxNd):
    """Applies the Softmin function to an n-dimensional input Tensor.

    Args:
        {softmax_dim}"""
    def forward(self, x: Tensor) -> Tensor:
        return F.softmin(x, self.dim)

    extra_repr = Module.extra_repr   # (its repr does not show dim)


@fill_doc(common_notes)
class Hardsigmoid(_InplaceActivation):
    """Applies the Hardsigmoid function element-wise.

    Args:
        {inplace}"""
    def forward(self, x: Tensor) -> Tensor:
        return F.hardsigmoid(x, self.inplace)

    extra_repr = Module.extra_repr   # (its repr does not show inplace)


# PyTorch defines MultiheadAttention in torch.nn.modules.activation; programs import it from there.
class RReLU(Module):
    r"""Applies the randomized leaky rectified linear unit function, element-wise:
    ``x`` if ``x >= 0`` else ``a * x``, with ``a`` drawn from :math:`\mathcal{U}(\text{lower}, \text{upper})`
    in training and ``(lower + upper) / 2`` in evaluation.

    Args:
        lower: lower bound of the uniform distribution. Default: :math:`\frac{1}{8}`
        upper: upper bound of the uniform distribution. Default: :math:`\frac{1}{3}`
        inplace: can optionally do the operation in-place. Default: ``False``

    Shape:
        - Input: :math:`(*)`, where :math:`*` means any number of dimensions.
        - Output: :math:`(*)`, same shape as the input.
    """

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, inplace: bool = False) -> None:
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + (", inplace=True" if self.inplace else "")


class Softmax2d(Module):
    r"""Applies SoftMax over features to each spatial location: softmax over the channel dim
    of :math:`(N, C, H, W)` or :math:`(C, H, W)` input.

    Args:
        (none)

    Shape:
        - Input: :math:`(N, C, H, W)` or :math:`(C, H, W)`.
        - Output: same shape as the input, values in the range [0, 1].
    """

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3)

from tinytorch.nn.modules.attention import MultiheadAttention  # noqa: E402,F401
