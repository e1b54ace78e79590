"""Activation modules: each one nn.functional call (``FunctionalLayer``), but PReLU's learnt slope,
RReLU's training flag and Softmax2d's input check."""
from __future__ import annotations

from typing import Optional

from tinytorch._tensor.tensor import Tensor
from tinytorch.autograd.grad_mode import no_grad
from tinytorch._tensor.creation import full
from tinytorch.nn import functional as F
from tinytorch.nn.modules._doc_notes import common_notes, fill_doc, softmax_notes
from tinytorch.nn.modules._functional_layer import FunctionalLayer
from tinytorch.nn.modules.module import Module
from tinytorch.nn.parameter import Parameter
from tinytorch.nn.common_types import _device_t, _dtype_t


class _InplaceActivation(FunctionalLayer):
    """An element-wise activation whose one argument is ``inplace``."""
    inplace: bool = False


class _AlphaActivation(FunctionalLayer):
    """ELU and CELU: ``alpha`` and ``inplace``."""
    alpha: float = 1.0
    inplace: bool = False


class _SoftmaxNd(FunctionalLayer):
    """Softmax, LogSoftmax and Softmin: the one argument is ``dim``."""
    dim: Optional[int] = None


@fill_doc(common_notes)
class ReLU(_InplaceActivation, function=F.relu):
    """Applies the rectified linear unit function element-wise.

    Args:
        {inplace}"""


class GELU(FunctionalLayer, function=F.gelu):
    r"""Applies the Gaussian Error Linear Units function: :math:`\text{GELU}(x) = x * \Phi(x)`.

    Args:
        approximate (str, optional): the gelu approximation algorithm to use: ``'none'`` | ``'tanh'``.
            Default: ``'none'``"""
    approximate: str = "none"


@fill_doc(common_notes)
class SiLU(_InplaceActivation, function=F.silu):
    """Applies the Sigmoid Linear Unit (SiLU) function, element-wise.

    Args:
        {inplace}"""


class Tanh(FunctionalLayer, function=F.tanh):
    """Applies the Hyperbolic Tangent (Tanh) function element-wise."""


class Sigmoid(FunctionalLayer, function=F.sigmoid):
    """Applies the Sigmoid function element-wise."""


@fill_doc(common_notes)
class Mish(_InplaceActivation, function=F.mish):
    """Applies the Mish function, element-wise.

    Args:
        {inplace}"""


@fill_doc(common_notes)
class Hardswish(_InplaceActivation, function=F.hardswish):
    """Applies the Hardswish function, element-wise.

    Args:
        {inplace}"""


@fill_doc(softmax_notes)
class Softmax(_SoftmaxNd, function=F.softmax):
    """Applies the Softmax function to an n-dimensional input Tensor, rescaling them so that the elements
    of the n-dimensional output Tensor lie in the range [0,1] and sum to 1.

    Args:
        {softmax_dim}"""


class LogSoftmax(_SoftmaxNd, function=F.log_softmax):
    r"""Applies the :math:`\log(\text{Softmax}(x))` function to an n-dimensional input Tensor.

    Args:
        dim (int): a dimension along which the softmax will be computed (so every slice along dim will
            sum to 1). Default: ``None``"""


@fill_doc(common_notes)
class LeakyReLU(FunctionalLayer, function=F.leaky_relu):
    """Applies the LeakyReLU function element-wise.

    Args:
        negative_slope (float): controls the angle of the negative slope (which is used for negative
            input values). Default: ``0.01``
        {inplace}"""
    negative_slope: float = 0.01
    inplace: bool = False


@fill_doc(common_notes)
class ELU(_AlphaActivation, function=F.elu):
    r"""Applies the Exponential Linear Unit (ELU) function, element-wise.

    Args:
        alpha (float): the :math:`\alpha` value for the formula. Default: ``1.0``
        {inplace}"""


class Softplus(FunctionalLayer, function=F.softplus):
    r"""Applies the Softplus function element-wise.

    Args:
        beta (float): the :math:`\beta` value for the formula. Default: ``1.0``
        threshold (float): values above this revert to a linear function. Default: ``20.0``"""
    beta: float = 1.0
    threshold: float = 20.0


@fill_doc(common_notes)
class Hardtanh(FunctionalLayer, function=F.hardtanh):
    """Applies the HardTanh function element-wise.

    Args:
        min_val (float): minimum value of the linear region range. Default: ``-1.0``
        max_val (float): maximum value of the linear region range. Default: ``1.0``
        {inplace}"""
    min_val: float = -1.0
    max_val: float = 1.0
    inplace: bool = False

    def _check_arguments(self) -> None:
        if self.max_val <= self.min_val:
            raise ValueError(f"Hardtanh: max_val ({self.max_val}) must be greater than min_val ({self.min_val})")


class ReLU6(Hardtanh, shown=("inplace",)):
    r"""Applies the ReLU6 function element-wise: :math:`\text{ReLU6}(x) = \min(\max(0,x), 6)`.

    Args:
        inplace (bool): can optionally do the operation in-place. Default: ``False``"""
    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)


class LogSigmoid(FunctionalLayer, function=F.logsigmoid):
    """Applies the Logsigmoid function element-wise."""


@fill_doc(common_notes)
class SELU(_InplaceActivation, function=F.selu, shown=()):   # (its repr does not show inplace)
    """Applies the SELU function element-wise.

    Args:
        {inplace}"""


class CELU(_AlphaActivation, function=F.celu, shown=("alpha",)):
    r"""Applies the CELU function element-wise: :math:`\text{CELU}(x) = \max(0,x) + \min(0, \alpha *
    (\exp(x/\alpha) - 1))`.

    Args:
        alpha (float): the :math:`\alpha` value for the formula. Default: ``1.0``
        inplace (bool): can optionally do the operation in-place. Default: ``False``"""


class Softsign(FunctionalLayer, function=F.softsign):
    """Applies the element-wise Softsign function."""


class Tanhshrink(FunctionalLayer, function=F.tanhshrink):
    """Applies the element-wise Tanhshrink function."""


@fill_doc(common_notes)
class Threshold(FunctionalLayer, function=F.threshold, shown=("threshold", "value")):
    """Thresholds each element of the input Tensor.

    Args:
        threshold (float): the value to threshold at.
        value (float): the value to replace with.
        {inplace}"""
    threshold: float
    value: float
    inplace: bool = False


class GLU(FunctionalLayer, function=F.glu):
    r"""Applies the gated linear unit function :math:`{GLU}(a, b)= a \otimes \sigma(b)` where :math:`a` is
    the first half of the input matrices and :math:`b` is the second half.

    Args:
        dim (int): the dimension on which to split the input. Default: ``-1``"""
    dim: int = -1


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

    def reset_parameters(self) -> None:
        """Sets every slope back to ``init``."""
        with no_grad():
            self.weight.fill_(self.init)

    def forward(self, x: Tensor) -> Tensor:
        return F.prelu(x, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class Hardshrink(FunctionalLayer, function=F.hardshrink, shown=()):
    r"""Applies the Hard Shrinkage (Hardshrink) function element-wise.

    Args:
        lambd (float): the :math:`\lambda` value for the shrinkage formulation. Default: ``0.5``"""
    lambd: float = 0.5


class Softshrink(Hardshrink, function=F.softshrink):
    r"""Applies the soft shrinkage function element-wise.

    Args:
        lambd (float): the :math:`\lambda` value for the shrinkage formulation. Default: ``0.5``"""


@fill_doc(softmax_notes)
class Softmin(_SoftmaxNd, function=F.softmin, shown=()):   # (its repr does not show dim)
    """Applies the Softmin function to an n-dimensional input Tensor.

    Args:
        {softmax_dim}"""


@fill_doc(common_notes)
class Hardsigmoid(_InplaceActivation, function=F.hardsigmoid, shown=()):   # (its repr does not show inplace)
    """Applies the Hardsigmoid function element-wise.

    Args:
        {inplace}"""


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
