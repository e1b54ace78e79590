"""``nn.functional``: stateless layers, activations and losses (PyTorch's names and defaults)."""
from __future__ import annotations

import math

import tinytorch
from tinytorch._ops import elementwise as _E
from tinytorch._ops import nn as _N
from tinytorch._ops import reduce as _R
from tinytorch._ops.nn import (  # noqa: F401
    adaptive_avg_pool2d, avg_pool2d, conv1d, conv2d, cross_entropy, dropout, embedding as _embedding, linear,
    max_pool2d, nll_loss,
)
from tinytorch._ops.reduce import layer_norm as _layer_norm, log_softmax as _log_softmax, rms_norm, \
    softmax as _softmax
from tinytorch.tensor import Tensor

# ------------------------------------------------------------------ activations

relu = _E.relu
sigmoid = _E.sigmoid
tanh = _E.tanh
silu = _E.silu
mish = _E.mish
hardswish = _E.hardswish
softplus = _E.softplus


def relu_(x: Tensor) -> Tensor:
    return x.relu_()


def gelu(x: Tensor, approximate: str = "none") -> Tensor:
    return _E.gelu(x, approximate)


def leaky_relu(x: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    return _E.leaky_relu_(x, negative_slope) if inplace else _E.leaky_relu(x, negative_slope)


def elu(x: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return _E.elu(x, alpha)


def _dim(dim, x: Tensor, name: str) -> int:
    if dim is None:  # PyTorch's legacy implicit choice
        return 0 if x.dim() in (0, 1, 3) else 1
    return dim


def softmax(x: Tensor, dim=None, dtype=None) -> Tensor:
    return _softmax(x, _dim(dim, x, "softmax"), dtype)


def log_softmax(x: Tensor, dim=None, dtype=None) -> Tensor:
    return _log_softmax(x, _dim(dim, x, "log_softmax"), dtype)


def layer_norm(x: Tensor, normalized_shape, weight=None, bias=None, eps: float = 1e-5) -> Tensor:
    return _layer_norm(x, normalized_shape, weight, bias, eps)


def embedding(input: Tensor, weight: Tensor, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False) -> Tensor:
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError("embedding: max_norm, scale_grad_by_freq and sparse are not implemented")
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    return _embedding(input, weight, padding_idx)


def one_hot(x: Tensor, num_classes: int = -1) -> Tensor:
    from tinytorch._ops.index import one_hot as _one_hot
    return _one_hot(x, num_classes)


def normalize(x: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    return x / _R.norm(x, p, dim, keepdim=True).clamp(min=eps)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    n1 = _R.norm(x1, 2, dim).clamp(min=eps)
    n2 = _R.norm(x2, 2, dim).clamp(min=eps)
    return (x1 * x2).sum(dim) / (n1 * n2)


def pad(x: Tensor, pad, mode: str = "constant", value: float = 0.0) -> Tensor:
    """Pads the last len(pad)//2 dims: pad = (left_last, right_last, left_prev, right_prev, ...)."""
    if mode != "constant":
        raise NotImplementedError(f"pad: mode {mode!r} is not implemented (only 'constant')")
    if len(pad) % 2:
        raise ValueError("Padding length must be divisible by 2")
    shape = list(x.shape)
    index = []
    for i in range(len(pad) // 2):
        d = len(shape) - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if lo < 0 or hi < 0:
            raise NotImplementedError("pad: negative padding is not implemented")
        shape[d] += lo + hi
    out = tinytorch.full(shape, value, dtype=x.dtype, device=x.device)
    sl = [slice(None)] * len(shape)
    for i in range(len(pad) // 2):
        d = len(shape) - 1 - i
        sl[d] = slice(pad[2 * i], pad[2 * i] + x.shape[d])
    out[tuple(sl)] = x
    return out


# ------------------------------------------------------------------ normalization

def batch_norm(x: Tensor, running_mean, running_var, weight=None, bias=None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Batch normalization over dim 1 of (N, C, *) input; updates running stats in training."""
    dims = [0] + list(range(2, x.dim()))
    shape = [1, x.shape[1]] + [1] * (x.dim() - 2)
    if training:
        n = x.numel() // x.shape[1]
        if n <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {list(x.shape)}")
        mean = x.mean(dims)
        var = x.var(dims, correction=0)
        if running_mean is not None:
            with tinytorch.no_grad():
                running_mean.mul_(1 - momentum).add_(mean.detach().to(running_mean.dtype), alpha=momentum)
                running_var.mul_(1 - momentum).add_(var.detach().to(running_var.dtype) * (n / (n - 1)),
                                                    alpha=momentum)
    else:
        mean, var = running_mean, running_var
    y = (x - mean.reshape(shape)) * (var.reshape(shape) + eps).rsqrt()
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y


def group_norm(x: Tensor, num_groups: int, weight=None, bias=None, eps: float = 1e-5) -> Tensor:
    n, c = x.shape[0], x.shape[1]
    if c % num_groups:
        raise ValueError(f"group_norm: num_channels ({c}) must be divisible by num_groups ({num_groups})")
    g = x.reshape(n, num_groups, -1)
    y = _layer_norm(g, [g.shape[-1]], None, None, eps).reshape(x.shape)
    shape = [1, c] + [1] * (x.dim() - 2)
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    return y


# ------------------------------------------------------------------ losses

def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _check_same_shape(name: str, input: Tensor, target: Tensor) -> None:
    if tuple(input.shape) != tuple(target.shape):
        raise ValueError(f"{name}: Using a target size ({list(target.shape)}) that is different to the input size "
                         f"({list(input.shape)}) is not supported. Please ensure they have the same size.")


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    return _reduce((input - target).square(), reduction)


def l1_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    return _reduce((input - target).abs(), reduction)


def smooth_l1_loss(input: Tensor, target: Tensor, reduction: str = "mean", beta: float = 1.0) -> Tensor:
    d = (input - target).abs()
    if beta == 0:
        return _reduce(d, reduction)
    return _reduce(_E.where(d < beta, d.square() * (0.5 / beta), d - 0.5 * beta), reduction)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0) -> Tensor:
    d = (input - target).abs()
    return _reduce(_E.where(d < delta, d.square() * 0.5, (d - 0.5 * delta) * delta), reduction)


def binary_cross_entropy(input: Tensor, target: Tensor, weight=None, reduction: str = "mean") -> Tensor:
    _check_same_shape("binary_cross_entropy", input, target)
    # PyTorch clamps the log terms at -100
    loss = -(target * input.log().clamp(min=-100) + (1 - target) * (1 - input).log().clamp(min=-100))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight=None, reduction: str = "mean",
                                     pos_weight=None) -> Tensor:
    _check_same_shape("binary_cross_entropy_with_logits", input, target)
    # log(1 + exp(-|x|)) keeps it stable for large |x|
    log_sig = -softplus(-input)          # log(sigmoid(x))
    log_one_minus = -softplus(input)     # log(1 - sigmoid(x))
    if pos_weight is not None:
        loss = -(pos_weight * target * log_sig + (1 - target) * log_one_minus)
    else:
        loss = -(target * log_sig + (1 - target) * log_one_minus)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def kl_div(input: Tensor, target: Tensor, reduction: str = "mean", log_target: bool = False) -> Tensor:
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = _E.where(target > 0, target * (target.clamp(min=1e-38).log() - input), 0.0)
    if reduction == "batchmean":
        return loss.sum() / input.shape[0]
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: str = "mean") -> Tensor:
    cos = cosine_similarity(input1, input2, dim=-1 if input1.dim() == 1 else 1)
    loss = _E.where(target == 1, 1 - cos, (cos - margin).clamp(min=0))
    return _reduce(loss, reduction)


# ------------------------------------------------------------------ attention

def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask=None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale=None) -> Tensor:
    """softmax(Q K^T * scale + mask) V over the last two dims; bool masks mark positions to keep."""
    L, S = query.shape[-2], key.shape[-2]
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = (query @ key.transpose(-2, -1)) * scale
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("scaled_dot_product_attention: attn_mask and is_causal cannot both be set")
        keep = tinytorch.ones(L, S, dtype=tinytorch.bool, device=query.device).tril()
        scores = scores.masked_fill(keep.logical_not(), float("-inf"))
    elif attn_mask is not None:
        if attn_mask.dtype == tinytorch.bool:
            scores = scores.masked_fill(attn_mask.logical_not(), float("-inf"))
        else:
            scores = scores + attn_mask
    attn = _softmax(scores, -1)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    return attn @ value
