"""Activations and the softmax family of ``nn.functional`` (PyTorch's signatures): the ones with
a kernel call ``tinytorch._ops.elementwise``, the rest are composed from ops (every device and
dtype, autograd for free). ``inplace=True`` writes the result into the input and returns it."""
from __future__ import annotations

from tinytorch._core.graph import is_grad_enabled
from tinytorch._tensor.creation import empty, zeros_like
from tinytorch._ops.elementwise import where
from tinytorch._ops import elementwise as _E
from tinytorch._ops.norm import log_softmax as _log_softmax, softmax as _softmax
from tinytorch._composites.pointwise import hardshrink, prelu  # noqa: F401  (tinytorch.prelu is the same)
from tinytorch._tensor.tensor import Tensor
from tinytorch.nn.modules._doc_notes import fill_doc, softmax_notes

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _maybe_inplace(x: Tensor, y: Tensor, inplace: bool) -> Tensor:
    if not inplace:
        return y
    x.copy_(y)
    return x


def _write_into(input: Tensor, fn) -> Tensor:
    """``inplace=True`` for a function without an in-place kernel: ``fn`` runs out of place and its
    result is copied into ``input`` (which is returned). When autograd records, ``fn`` reads a clone,
    so what its backward saved is not the tensor being overwritten (PyTorch's in-place variants
    differentiate through non-leaf inputs; a leaf that requires grad raises in ``copy_``)."""
    src = input.clone() if input.requires_grad and is_grad_enabled() else input
    return input.copy_(fn(src))


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """Applies the rectified linear unit function element-wise.

    Args:
        input (Tensor): the input tensor.
        inplace (bool): can optionally do the operation in-place. Default: ``False``"""
    return input.relu_() if inplace else _E.relu(input)


def relu_(input: Tensor) -> Tensor:
    """In-place version of :func:`relu`.

    Args:
        input (Tensor): the input tensor."""
    return input.relu_()


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    r"""Applies the element-wise function :math:`\text{ReLU6}(x) = \min(\max(0,x), 6)`.

    Args:
        input (Tensor): the input tensor.
        inplace (bool): can optionally do the operation in-place. Default: ``False``"""
    return hardtanh(input, 0.0, 6.0, inplace)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    """Apply the HardTanh function element-wise.

    Args:
        input (Tensor): the input tensor.
        min_val (float): minimum value of the linear region range. Default: ``-1.0``
        max_val (float): maximum value of the linear region range. Default: ``1.0``
        inplace (bool): can optionally do the operation in-place. Default: ``False``"""
    return input.clamp_(min_val, max_val) if inplace else input.clamp(min_val, max_val)


def sigmoid(input: Tensor) -> Tensor:
    r"""Applies the element-wise function :math:`\text{Sigmoid}(x) = \frac{1}{1 + \exp(-x)}`.

    Args:
        input (Tensor): the input tensor."""
    return _E.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    r"""Applies element-wise, :math:`\text{Tanh}(x) = \tanh(x)`.

    Args:
        input (Tensor): the input tensor."""
    return _E.tanh(input)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """Apply the Sigmoid Linear Unit (SiLU) function, element-wise.

    Args:
        input (Tensor): the input tensor.
        inplace (bool): can optionally do the operation in-place. Default: ``False``"""
    return _maybe_inplace(input, _E.silu(input), inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """Apply the Mish function, element-wise.

    Args:
        input (Tensor): the input tensor.
        inplace (bool): can optionally do the operation in-place. Default: ``False``"""
    return _maybe_inplace(input, _E.mish(input), inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """Apply hardswish function, element-wise.

    Args:
        input (Tensor): the input tensor.
        inplace (bool): can optionally do the operation in-place. Default: ``False``"""
    return _maybe_inplace(input, _E.hardswish(input), inplace)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    r"""Applies element-wise, the function :math:`\text{Softplus}(x) = \frac{1}{\beta} * \log(1 + \exp(\beta
    * x))`.

    Args:
        input (Tensor): the input tensor.
        beta (float): the :math:`\beta` value for the formula. Default: ``1.0``
        threshold (float): values above this revert to a linear function. Default: ``20.0``"""
    return _E.softplus(input, beta, threshold)


def logsigmoid(input: Tensor) -> Tensor:
    r"""Applies element-wise :math:`\text{LogSigmoid}(x_i) = \log \left(\frac{1}{1 + \exp(-x_i)}\right)`.

    Args:
        input (Tensor): the input tensor."""
    return -_E.softplus(-input)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    r"""When the approximate argument is 'none', it applies element-wise the function :math:`\text{GELU}(x)
    = x * \Phi(x)` where :math:`\Phi(x)` is the Cumulative Distribution Function for Gaussian
    Distribution. When the approximate argument is 'tanh', Gelu is estimated with tanh.

    Args:
        input (Tensor): the input tensor.
        approximate (str, optional): the gelu approximation algorithm to use: ``'none'`` | ``'tanh'``.
            Default: ``'none'``"""
    return _E.gelu(input, approximate)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    r"""Applies element-wise, :math:`\text{LeakyReLU}(x) = \max(0, x) + \text{negative\_slope} * \min(0,
    x)`.

    Args:
        input (Tensor): the input tensor.
        negative_slope (float): controls the angle of the negative slope (which is used for negative
            input values). Default: ``0.01``
        inplace (bool): can optionally do the operation in-place. Default: ``False``"""
    return _E.leaky_relu_(input, negative_slope) if inplace else _E.leaky_relu(input, negative_slope)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    r"""Apply the Exponential Linear Unit (ELU) function element-wise.

    Args:
        input (Tensor): the input tensor.
        alpha (float): the :math:`\alpha` value for the formula. Default: ``1.0``
        inplace (bool): can optionally do the operation in-place. Default: ``False``"""
    return _maybe_inplace(input, _E.elu(input, alpha), inplace)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    r"""Applies element-wise, :math:`\text{SELU}(x) = scale * (\max(0,x) + \min(0, \alpha * (\exp(x) -
    1)))`, with :math:`\alpha=1.6732632423543772848170429916717` and
    :math:`scale=1.0507009873554804934193349852946`.

    scale * (max(0, x) + min(0, alpha * (exp(x) - 1))), with PyTorch's alpha and scale.

    Args:
        input (Tensor): the input tensor.
        inplace (bool): can optionally do the operation in-place. Default: ``False``"""
    if inplace:
        return _write_into(input, selu)
    return elu(input, _SELU_ALPHA) * _SELU_SCALE


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    r"""Applies element-wise, :math:`\text{CELU}(x) = \max(0,x) + \min(0, \alpha * (\exp(x/\alpha) - 1))`.

    max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).

    Args:
        input (Tensor): the input tensor.
        alpha (float): the :math:`\alpha` value for the formula. Default: ``1.0``
        inplace (bool): can optionally do the operation in-place. Default: ``False``"""
    if alpha == 0:
        raise ValueError("ZeroDivisionError: alpha cannot be 0 for CELU")
    if inplace:
        return _write_into(input, lambda x: celu(x, alpha))
    return elu(input / alpha, 1.0) * alpha


def softsign(input: Tensor) -> Tensor:
    r"""Applies element-wise, the function :math:`\text{SoftSign}(x) = \frac{x}{1 + |x|}`.

    x / (1 + |x|).

    Args:
        input (Tensor): the input tensor."""
    return input / (input.abs() + 1.0)


def tanhshrink(input: Tensor) -> Tensor:
    r"""Applies element-wise, :math:`\text{Tanhshrink}(x) = x - \text{Tanh}(x)`.

    x - tanh(x).

    Args:
        input (Tensor): the input tensor."""
    return input - input.tanh()


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """Apply a threshold to each element of the input Tensor.

    value where x <= threshold, else x (NaN stays NaN, as in PyTorch).

    Args:
        input (Tensor): the input tensor.
        threshold (float): the value to threshold at.
        value (float): the value to replace with.
        inplace (bool): can optionally do the operation in-place. Default: ``False``"""
    if inplace:
        return input.masked_fill_(input <= threshold, value)
    return where(input <= threshold, value, input)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    r"""The gated linear unit. Computes :math:`\text{GLU}(a, b) = a \otimes \sigma(b)` where `input` is
    split in half along `dim` to form `a` and `b`.

    a * sigmoid(b), with a and b the two halves of input along dim.

    Args:
        input (Tensor): the input tensor.
        dim (int): the dimension on which to split the input. Default: ``-1``"""
    if input.shape[dim] % 2:
        raise RuntimeError(f"glu: Halving dimension must be even, but dimension {dim} is size {input.shape[dim]}")
    a, b = input.chunk(2, dim)
    return a * b.sigmoid()


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    r"""Applies the soft shrinkage function elementwise.

    x - lambd above lambd, x + lambd below -lambd, else 0.

    Args:
        input (Tensor): the input tensor.
        lambd (float): the :math:`\lambda` value for the shrinkage formulation. Default: ``0.5``"""
    return input - input.clamp(-lambd, lambd)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """Apply the Hardsigmoid function element-wise.

    relu6(x + 3) / 6.

    Args:
        input (Tensor): the input tensor.
        inplace (bool): can optionally do the operation in-place. Default: ``False``"""
    if inplace:
        return input.add_(3.0).clamp_(0.0, 6.0).div_(6.0)
    return (input + 3.0).clamp(0.0, 6.0) / 6.0


# ------------------------------------------------------------------ softmax family

def _dim(dim, x: Tensor, name: str) -> int:
    if dim is None:  # PyTorch's legacy implicit choice
        return 0 if x.dim() in (0, 1, 3) else 1
    return dim


@fill_doc(softmax_notes)
def softmax(input: Tensor, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:
    r"""Apply a softmax function: :math:`\text{{Softmax}}(x_{{i}}) = \frac{{\exp(x_i)}}{{\sum_j \exp(x_j)}}`, along
    dim, so every slice along dim will sum to 1.

    Args:
        input (Tensor): the input tensor.
        {softmax_dim}
        _stacklevel (int): ignored (the stack level of PyTorch's implicit-dim warning). Default: ``3``
        {softmax_dtype}"""
    return _softmax(input, _dim(dim, input, "softmax"), dtype)


@fill_doc(softmax_notes)
def log_softmax(input: Tensor, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """Apply a softmax followed by a logarithm.

    Args:
        input (Tensor): the input tensor.
        {softmax_dim}
        _stacklevel (int): ignored (the stack level of PyTorch's implicit-dim warning). Default: ``3``
        {softmax_dtype}"""
    return _log_softmax(input, _dim(dim, input, "log_softmax"), dtype)


@fill_doc(softmax_notes)
def softmin(input: Tensor, dim=None, _stacklevel: int = 3, dtype=None) -> Tensor:
    r"""Apply a softmin function: :math:`\text{{Softmin}}(x_{{i}}) = \frac{{\exp(-x_i)}}{{\sum_j \exp(-x_j)}}`.

    softmax(-x) along dim.

    Args:
        input (Tensor): the input tensor.
        dim (int): a dimension along which the softmax will be computed (so every slice along dim will
            sum to 1). Default: ``None``
        _stacklevel (int): ignored (the stack level of PyTorch's implicit-dim warning). Default: ``3``
        {softmax_dtype}"""
    return softmax(-input, _dim(dim, input, "softmin"), dtype=dtype)


# ----------------------------------------------------------------------------- in-place spellings and rrelu
def elu_(input: Tensor, alpha: float = 1.0, scale: float = 1.0, input_scale: float = 1.0) -> Tensor:
    r"""In-place version of :func:`elu`; with PyTorch's kernel parameters, ``scale * x`` for ``x > 0`` and
    ``scale * alpha * (exp(x * input_scale) - 1)`` otherwise.

    Args:
        input (Tensor): the input tensor.
        alpha (float): the :math:`\alpha` value for the formula. Default: ``1.0``
        scale (float): the factor of both branches. Default: ``1.0``
        input_scale (float): the factor of ``x`` inside the exponential. Default: ``1.0``"""
    if scale == 1.0 and input_scale == 1.0:
        return elu(input, alpha, inplace=True)
    return _write_into(input, lambda x: _scaled_elu(x, alpha, scale, input_scale))


def _scaled_elu(x: Tensor, alpha: float, scale: float, input_scale: float) -> Tensor:
    positive = x > 0
    negative = where(positive, 0.0, x)   # the exponential never overflows on the branch not taken
    return where(positive, x * scale, _E.expm1(negative * input_scale) * (alpha * scale))


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    r"""In-place version of :func:`celu`.

    Args:
        input (Tensor): the input tensor.
        alpha (float): the :math:`\alpha` value for the formula. Default: ``1.0``"""
    return celu(input, alpha, inplace=True)


def selu_(input: Tensor) -> Tensor:
    """In-place version of :func:`selu`.

    Args:
        input (Tensor): the input tensor."""
    return selu(input, inplace=True)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    """In-place version of :func:`hardtanh`.

    Args:
        input (Tensor): the input tensor.
        min_val (float): minimum value of the linear region range. Default: ``-1.0``
        max_val (float): maximum value of the linear region range. Default: ``1.0``"""
    return hardtanh(input, min_val, max_val, inplace=True)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """In-place version of :func:`leaky_relu`.

    Args:
        input (Tensor): the input tensor.
        negative_slope (float): controls the angle of the negative slope (which is used for negative
            input values). Default: ``0.01``"""
    return leaky_relu(input, negative_slope, inplace=True)


_threshold = threshold


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    """In-place version of :func:`threshold`.

    Args:
        input (Tensor): the input tensor.
        threshold (float): the value to threshold at.
        value (float): the value to replace with."""
    return _threshold(input, threshold, value, inplace=True)


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """Randomized leaky ReLU: ``x`` where ``x >= 0``, else ``a * x``.

    In training ``a`` is drawn per element from ``U(lower, upper)``; in evaluation it is
    ``(lower + upper) / 2``, as in PyTorch.

    Args:
        input (Tensor): the input tensor.
        lower (float): lower bound of the uniform distribution. Default: 1/8
        upper (float): upper bound of the uniform distribution. Default: 1/3
        training (bool): draw random slopes (True) or use their mean. Default: False
        inplace (bool): can optionally do the operation in-place. Default: False
    """
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    slope = empty(list(input.shape), dtype=input.dtype, device=input.device).uniform_(lower, upper)
    out = where(input >= 0, input, input * slope)
    return input.copy_(out) if inplace else out


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False) -> Tensor:
    """In-place version of :func:`rrelu`.

    Args:
        input (Tensor): the input tensor.
        lower (float): lower bound of the uniform distribution. Default: ``0.125``
        upper (float): upper bound of the uniform distribution. Default: ``0.3333333333333333``
        training (bool): apply the training-mode behaviour if ``True``. Default: ``False``"""
    return rrelu(input, lower, upper, training, inplace=True)


def gumbel_softmax(logits: Tensor, tau: float = 1.0, hard: bool = False, eps: float = 1e-10, dim: int = -1) -> Tensor:
    """Samples from the Gumbel-Softmax distribution and optionally discretizes.

    Args:
        logits (Tensor): ``[..., num_features]`` unnormalized log probabilities
        tau (float): non-negative scalar temperature. Default: 1
        hard (bool): if ``True``, the returned samples are discretized as one-hot vectors, but
            differentiated as if they were the soft sample in autograd. Default: False
        eps (float): deprecated, has no effect. Default: 1e-10
        dim (int): a dimension along which softmax will be computed. Default: -1

    Returns:
        Sampled tensor of same shape as ``logits`` from the Gumbel-Softmax distribution.
    """
    u = empty(list(logits.shape), dtype=logits.dtype, device=logits.device).uniform_(0.0, 1.0)
    gumbels = -(-(u.clamp(min=1e-20)).log()).log()  # -log(Exp(1)), Exp(1) = -log(U)
    y_soft = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = zeros_like(logits).scatter(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft  # the straight-through estimator
