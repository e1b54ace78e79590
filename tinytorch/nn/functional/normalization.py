"""Normalization layers of ``nn.functional``: batch_norm (running statistics), instance_norm,
group_norm, and the layer_norm / rms_norm kernels of ``tinytorch._ops.norm``."""
from __future__ import annotations

from tinytorch._ops.norm import batch_norm_fused as _batch_norm_fused, layer_norm as _layer_norm, rms_norm  # noqa: F401
from tinytorch.autograd.grad_mode import no_grad
from tinytorch.nn.functional.padding import pad
from tinytorch._tensor.tensor import Tensor


def layer_norm(input: Tensor, normalized_shape, weight=None, bias=None, eps: float = 1e-5) -> Tensor:
    r"""Apply Layer Normalization for last certain number of dimensions.

    Args:
        input (Tensor): the input tensor.
        normalized_shape (int or list or Size): input shape from an expected input of size :math:`[*
            \times \text{normalized\_shape}[0] \times \dots]`; the normalization is over the last
            dimensions of that shape.
        weight (Tensor): the weight tensor. Default: ``None``
        bias (Tensor, optional): the optional bias tensor. Default: ``None``
        eps (float): a value added for numerical stability. Default: ``1e-05``"""
    return _layer_norm(input, normalized_shape, weight, bias, eps)


def _fusable(input: Tensor, weight, bias, running_mean, running_var, training: bool) -> bool:
    """Whether the fused kernels (CPU and CUDA) take this batch_norm: (N, C, *) input, every tensor
    on its device, and the affine parameters in its dtype (else the composite form below, which
    promotes)."""
    if input.device.type not in ("cpu", "cuda") or input.dim() < 2 or not input.is_floating_point():
        return False
    if not training and (running_mean is None or running_var is None):
        return False
    return all(t is None or (t.device == input.device and t.dtype == input.dtype) for t in (weight, bias)) and \
        all(t is None or t.device == input.device for t in (running_mean, running_var))


def _update_running_stats(running_mean, running_var, mean: Tensor, var: Tensor, n: int, momentum: float) -> None:
    """running = (1 - momentum) * running + momentum * batch stat; the variance unbiased (n / (n - 1))."""
    if running_mean is None:
        return
    with no_grad():
        running_mean.mul_(1 - momentum).add_(mean.detach().to(running_mean.dtype), alpha=momentum)
        running_var.mul_(1 - momentum).add_(var.detach().to(running_var.dtype) * (n / (n - 1)), alpha=momentum)


def batch_norm(input: Tensor, running_mean, running_var, weight=None, bias=None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Apply Batch Normalization for each channel across a batch of data.

    Batch normalization over dim 1 of (N, C, *) input; updates running stats in training.

    Args:
        input (Tensor): the input tensor.
        running_mean (Tensor, optional): the running mean, updated in place in training.
        running_var (Tensor, optional): the running variance, updated in place in training.
        weight (Tensor): the weight tensor. Default: ``None``
        bias (Tensor, optional): the optional bias tensor. Default: ``None``
        training (bool): normalize with the batch statistics and update the running ones. Default:
            ``False``
        momentum (float, optional): the value used for the running_mean and running_var computation. Can
            be set to ``None`` for cumulative moving average (i.e. simple average). Default: ``0.1``
        eps (float): a value added for numerical stability. Default: ``1e-05``"""
    dims = [0] + list(range(2, input.dim()))
    shape = [1, input.shape[1]] + [1] * (input.dim() - 2)
    if training:
        n = input.numel() // input.shape[1]
        if n <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {list(input.shape)}")
    if _fusable(input, weight, bias, running_mean, running_var, training):
        y, mean, var = _batch_norm_fused(input, weight, bias, running_mean, running_var, training, eps)
        if training:
            _update_running_stats(running_mean, running_var, mean, var, n, momentum)
        return y
    if training:
        mean = input.mean(dims)
        var = input.var(dims, correction=0)
        _update_running_stats(running_mean, running_var, mean, var, n, momentum)
    else:
        mean, var = running_mean, running_var
    y = (input - mean.reshape(shape)) * (var.reshape(shape) + eps).rsqrt()
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y


def instance_norm(input: Tensor, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats: bool = True, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Apply Instance Normalization independently for each channel in every data sample within a batch.

    Normalizes each channel of each sample over its spatial dims: batch_norm on the
    (1, N * C, *) view with the per-channel tensors repeated N times, as PyTorch's; running
    stats, when given, are updated with the per-sample stats averaged over the batch.

    Args:
        input (Tensor): the input tensor.
        running_mean (Tensor, optional): the running mean, updated in place in training. Default:
            ``None``
        running_var (Tensor, optional): the running variance, updated in place in training. Default:
            ``None``
        weight (Tensor): the weight tensor. Default: ``None``
        bias (Tensor, optional): the optional bias tensor. Default: ``None``
        use_input_stats (bool): normalize with the input's statistics (else with the running ones).
            Default: ``True``
        momentum (float, optional): the value used for the running_mean and running_var computation. Can
            be set to ``None`` for cumulative moving average (i.e. simple average). Default: ``0.1``
        eps (float): a value added for numerical stability. Default: ``1e-05``"""
    if input.dim() < 3:
        raise ValueError(f"instance_norm: expected (N, C, *) input, got {list(input.shape)}")
    if not use_input_stats and (running_mean is None or running_var is None):
        raise ValueError("instance_norm: Expected running_mean and running_var to be defined when use_input_stats "
                         "is false")
    n, c = input.shape[0], input.shape[1]
    rep = lambda t: None if t is None else t.repeat(n)  # noqa: E731
    rm, rv = rep(running_mean), rep(running_var)
    out = batch_norm(input.reshape(1, n * c, *input.shape[2:]), rm, rv, rep(weight), rep(bias), use_input_stats,
                     momentum, eps)
    if use_input_stats and running_mean is not None:
        with no_grad():
            running_mean.copy_(rm.view(n, c).mean(0))
            running_var.copy_(rv.view(n, c).mean(0))
    return out.reshape(input.shape)


def group_norm(input: Tensor, num_groups: int, weight=None, bias=None, eps: float = 1e-5) -> Tensor:
    """Apply Group Normalization for last certain number of dimensions.

    Args:
        input (Tensor): the input tensor.
        num_groups (int): number of groups to separate the channels into.
        weight (Tensor): the weight tensor. Default: ``None``
        bias (Tensor, optional): the optional bias tensor. Default: ``None``
        eps (float): a value added for numerical stability. Default: ``1e-05``"""
    n, c = input.shape[0], input.shape[1]
    if c % num_groups:
        raise ValueError(f"group_norm: num_channels ({c}) must be divisible by num_groups ({num_groups})")
    g = input.reshape(n, num_groups, -1)
    y = _layer_norm(g, [g.shape[-1]], None, None, eps).reshape(input.shape)
    shape = [1, c] + [1] * (input.dim() - 2)
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> Tensor:
    """Applies local response normalization over an input signal: each element is divided by
    ``(k + alpha / size * sum of squares over the size neighbouring channels) ** beta``, the
    channels zero-padded at the edges (``size // 2`` before, ``(size - 1) // 2`` after).

    Args:
        input (Tensor): input of shape :math:`(N, C, *)`, at least 3-D.
        size (int): amount of neighbouring channels used for normalization
        alpha (float): multiplicative factor. Default: 0.0001
        beta (float): exponent. Default: 0.75
        k (float): additive factor. Default: 1
    """
    if input.dim() < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.dim()} dimensions)")
    if input.numel() == 0:
        return input
    c = input.shape[1]
    sq = input * input
    pads = [0, 0] * (input.dim() - 2) + [size // 2, (size - 1) // 2]
    padded = pad(sq, pads)                                  # channels padded
    div = padded.narrow(1, 0, c)
    for j in range(1, size):
        div = div + padded.narrow(1, j, c)
    return input / (div * (alpha / size) + k).pow(beta)
