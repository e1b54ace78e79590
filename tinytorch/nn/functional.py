"""``nn.functional``: stateless layers, activations and losses (PyTorch's names and defaults)."""
from __future__ import annotations

import math
from typing import Optional

import tinytorch
from tinytorch._ops import elementwise as _E
from tinytorch._ops import nn as _N
from tinytorch._ops import reduce as _R
from tinytorch._ops.nn import (  # noqa: F401
    adaptive_avg_pool2d, avg_pool2d, conv1d, conv2d, conv_transpose1d, conv_transpose2d, dropout,
    embedding as _embedding, linear, max_pool2d,
)
from tinytorch._ops.reduce import layer_norm as _layer_norm, log_softmax as _log_softmax, rms_norm, \
    softmax as _softmax
from tinytorch.tensor import Tensor
from tinytorch.nn._interpolate import interpolate  # noqa: F401
from tinytorch.nn._more_losses import (  # noqa: F401
    gaussian_nll_loss, hinge_embedding_loss, margin_ranking_loss, multi_margin_loss, multilabel_soft_margin_loss,
    poisson_nll_loss, soft_margin_loss, triplet_margin_loss,
)
from tinytorch.nn._more_functional import (  # noqa: F401
    adaptive_max_pool1d, adaptive_max_pool2d, celu, fold, hardshrink, hardsigmoid, softmin, softshrink, unfold, dropout1d, dropout2d, glu, instance_norm, pairwise_distance, pixel_shuffle, pixel_unshuffle, prelu, selu,
    softsign, tanhshrink, threshold,
)

# ------------------------------------------------------------------ activations
# PyTorch's signatures: ``inplace=True`` writes the result into the input.

def _maybe_inplace(x: Tensor, y: Tensor, inplace: bool) -> Tensor:
    if not inplace:
        return y
    x.copy_(y)
    return x


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    return input.relu_() if inplace else _E.relu(input)


def relu_(input: Tensor) -> Tensor:
    return input.relu_()


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    return hardtanh(input, 0.0, 6.0, inplace)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> Tensor:
    return input.clamp_(min_val, max_val) if inplace else input.clamp(min_val, max_val)


def sigmoid(input: Tensor) -> Tensor:
    return _E.sigmoid(input)


def tanh(input: Tensor) -> Tensor:
    return _E.tanh(input)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, _E.silu(input), inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, _E.mish(input), inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, _E.hardswish(input), inplace)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    return _E.softplus(input, beta, threshold)


def logsigmoid(input: Tensor) -> Tensor:
    return -_E.softplus(-input)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    return _E.gelu(input, approximate)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    return _E.leaky_relu_(input, negative_slope) if inplace else _E.leaky_relu(input, negative_slope)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    return _maybe_inplace(input, _E.elu(input, alpha), inplace)


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
    """Rows of ``weight`` at ``input``; with max_norm, the referenced rows whose norm exceeds it are
    renormalized in place first (as PyTorch's embedding_renorm_); scale_grad_by_freq divides each
    row's gradient by the number of times the mini-batch uses it."""
    if sparse:
        raise NotImplementedError("embedding: sparse gradients are not implemented (tinytorch has no sparse tensors)")
    if padding_idx is not None:
        if padding_idx < 0:
            padding_idx += weight.shape[0]
        if not 0 <= padding_idx < weight.shape[0]:
            raise ValueError("Padding_idx must be within num_embeddings")
    if max_norm is not None:
        _embedding_renorm_(weight, input, float(max_norm), float(norm_type))
    return _embedding(input, weight, padding_idx, scale_grad_by_freq)


def _embedding_renorm_(weight: Tensor, input: Tensor, max_norm: float, norm_type: float) -> None:
    import numpy as np
    rows = np.unique(input.detach().cpu().numpy().reshape(-1))
    if rows.size == 0:
        return
    if rows.min() < 0 or rows.max() >= weight.shape[0]:
        raise IndexError(f"embedding: index out of range for num_embeddings {weight.shape[0]}")
    with tinytorch.no_grad():
        idx = tinytorch.tensor(rows.astype(np.int64))
        sel = weight.detach()[idx]
        norms = _R.norm(sel.double(), norm_type, 1, keepdim=True)
        scale = _E.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0).to(weight.dtype)
        w = weight.detach()
        w[idx] = sel * scale


def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """1-D max pooling over (N, C, L) or (C, L), as a 2-D pooling over a height of 1."""
    one = lambda v: v if isinstance(v, int) else v[0]  # noqa: E731
    s = None if stride is None else (1, one(stride))
    r = max_pool2d(input.unsqueeze(-2), (1, one(kernel_size)), s, (0, one(padding)), (1, one(dilation)), ceil_mode,
                   return_indices)
    if return_indices:
        return r[0].squeeze(-2), r[1].squeeze(-2)
    return r.squeeze(-2)


def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    one = lambda v: v if isinstance(v, int) else v[0]  # noqa: E731
    s = None if stride is None else (1, one(stride))
    return avg_pool2d(input.unsqueeze(-2), (1, one(kernel_size)), s, (0, one(padding)), ceil_mode,
                      count_include_pad).squeeze(-2)


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    one = output_size if isinstance(output_size, int) else output_size[0]
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, one)).squeeze(-2)


def one_hot(x: Tensor, num_classes: int = -1) -> Tensor:
    from tinytorch._ops.index import one_hot as _one_hot
    return _one_hot(x, num_classes)


def normalize(x: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    return x / _R.norm(x, p, dim, keepdim=True).clamp(min=eps)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    n1 = _R.norm(x1, 2, dim).clamp(min=eps)
    n2 = _R.norm(x2, 2, dim).clamp(min=eps)
    return (x1 * x2).sum(dim) / (n1 * n2)


# reflect/replicate/circular pad the last k dims of a (k+1)-D (unbatched) or (k+2)-D input.
_PAD_INPUT_DIMS = {1: (2, 3), 2: (3, 4), 3: (4, 5)}


def _pad_index(n: int, lo: int, hi: int, mode: str) -> list[int]:
    """Source positions of padded positions -lo .. n+hi-1 of a dim of size n (negative pads crop)."""
    if mode == "reflect":
        return [-j if j < 0 else 2 * (n - 1) - j if j >= n else j for j in range(-lo, n + hi)]
    if mode == "replicate":
        return [min(max(j, 0), n - 1) for j in range(-lo, n + hi)]
    # circular wraps within what the negative pads leave, as PyTorch's
    c_lo, c_hi = max(-lo, 0), max(-hi, 0)
    m = n - c_lo - c_hi
    return [c_lo + t % m for t in range(-max(lo, 0), m + max(hi, 0))]


def _pad_constant(x: Tensor, pairs, value: float) -> Tensor:
    for d, lo, hi in pairs:  # negative pads crop first
        if lo < 0 or hi < 0:
            start, stop = max(-lo, 0), x.shape[d] - max(-hi, 0)
            if stop < start:
                raise ValueError(f"pad: cropping ({max(-lo, 0)}, {max(-hi, 0)}) from dimension {d} of input "
                                 f"{list(x.shape)} leaves less than nothing")
            x = x.narrow(d, start, stop - start)
    shape, sl = list(x.shape), [slice(None)] * x.dim()
    for d, lo, hi in pairs:
        shape[d] += max(lo, 0) + max(hi, 0)
        sl[d] = slice(max(lo, 0), max(lo, 0) + x.shape[d])
    out = tinytorch.full(shape, value, dtype=x.dtype, device=x.device)
    out[tuple(sl)] = x
    return out


def pad(x: Tensor, pad, mode: str = "constant", value: Optional[float] = None) -> Tensor:
    """Pads tensor.

    ``pad = (left_last, right_last, left_prev, right_prev, ...)`` pads the last ``len(pad) // 2``
    dimensions; negative values crop. ``mode``: ``'constant'`` (fill with ``value``, default 0),
    ``'reflect'`` (mirror without repeating the edge), ``'replicate'`` (repeat the edge) or
    ``'circular'`` (wrap around). The last three pad the last 1, 2 or 3 dimensions of a 2-D/3-D,
    3-D/4-D or 4-D/5-D input, as PyTorch's. Differentiable in every mode."""
    pad = [int(v) for v in pad]
    k = len(pad) // 2
    if len(pad) % 2:
        raise ValueError("Padding length must be divisible by 2")
    if k > x.dim():
        raise ValueError(f"Padding length should be less than or equal to two times the input dimension but got "
                         f"padding length {len(pad)} and input of dimension {x.dim()}")
    pairs = [(x.dim() - 1 - i, pad[2 * i], pad[2 * i + 1]) for i in range(k)]  # (dim, before, after)
    if mode == "constant":
        return _pad_constant(x, pairs, 0.0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"pad: mode {mode!r} is not implemented (constant, reflect, replicate, circular)")
    if value is not None and value != 0:
        raise ValueError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if k not in _PAD_INPUT_DIMS:
        raise NotImplementedError(f"pad: {mode} padding pads the last 1, 2 or 3 dimensions, got {k}")
    if x.dim() not in _PAD_INPUT_DIMS[k]:
        a, b = _PAD_INPUT_DIMS[k]
        raise NotImplementedError(f"pad: {mode} padding of the last {k} dimension(s) needs a {a}-D or {b}-D input, "
                                  f"got {list(x.shape)}")
    for d, lo, hi in pairs:
        n = x.shape[d]
        too_big = (lo >= n or hi >= n) if mode == "reflect" else (lo > n or hi > n) if mode == "circular" else n == 0
        if too_big or n - max(-lo, 0) - max(-hi, 0) <= 0:
            limit = {"reflect": "be less than", "circular": "be at most"}.get(mode, "need a non-empty")
            raise ValueError(f"pad: {mode} padding ({lo}, {hi}) at dimension {d} of input {list(x.shape)}: pads "
                             f"must {limit} the corresponding input dimension")
        idx = tinytorch.tensor(_pad_index(n, lo, hi, mode), dtype=tinytorch.int64, device=x.device)
        x = x.index_select(d, idx)
    return x


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


def _legacy_reduction(size_average, reduce, reduction: str) -> str:
    """PyTorch's deprecated size_average/reduce flags, when given, override ``reduction``."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return "mean" if size_average and reduce else ("sum" if reduce else "none")


def mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
             weight=None) -> Tensor:
    loss = (input - target).square()
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, _legacy_reduction(size_average, reduce, reduction))


def l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    return _reduce((input - target).abs(), _legacy_reduction(size_average, reduce, reduction))


def smooth_l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if beta < 0:
        raise ValueError("smooth_l1_loss does not support negative values for beta.")
    d = (input - target).abs()
    if beta == 0:
        return _reduce(d, reduction)
    return _reduce(_E.where(d < beta, d.square() * (0.5 / beta), d - 0.5 * beta), reduction)


def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0, weight=None) -> Tensor:
    d = (input - target).abs()
    loss = _E.where(d < delta, d.square() * 0.5, (d - 0.5 * delta) * delta)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def nll_loss(input: Tensor, target: Tensor, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
             reduction: str = "mean") -> Tensor:
    """Negative log likelihood over log-probabilities ``input`` (N, C, *) or (C,) and class indices."""
    return _N.nll_loss(input, target, weight, ignore_index, _legacy_reduction(size_average, reduce, reduction))


def cross_entropy(input: Tensor, target: Tensor, weight=None, size_average=None, ignore_index: int = -100,
                  reduce=None, reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """Cross entropy between logits (N, C, *) or (C,) and class indices or class probabilities."""
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    return _N.cross_entropy(input, target, weight, ignore_index, _legacy_reduction(size_average, reduce, reduction),
                            label_smoothing)


def binary_cross_entropy(input: Tensor, target: Tensor, weight=None, size_average=None, reduce=None,
                         reduction: str = "mean") -> Tensor:
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_same_shape("binary_cross_entropy", input, target)
    # PyTorch clamps the log terms at -100
    loss = -(target * input.log().clamp(min=-100) + (1 - target) * (1 - input).log().clamp(min=-100))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight=None, size_average=None, reduce=None,
                                     reduction: str = "mean", pos_weight=None) -> Tensor:
    reduction = _legacy_reduction(size_average, reduce, reduction)
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


def kl_div(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
           log_target: bool = False) -> Tensor:
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = _E.where(target > 0, target * (target.clamp(min=1e-38).log() - input), 0.0)
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.dim() else 1)
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0, size_average=None,
                          reduce=None, reduction: str = "mean") -> Tensor:
    reduction = _legacy_reduction(size_average, reduce, reduction)
    cos = cosine_similarity(input1, input2, dim=-1 if input1.dim() == 1 else 1)
    loss = _E.where(target == 1, 1 - cos, (cos - margin).clamp(min=0))
    return _reduce(loss, reduction)


# ------------------------------------------------------------------ attention

def _repeat_kv_heads(query: Tensor, kv: Tensor) -> Tensor:
    """Grouped-query attention: each of kv's Hkv heads (dim -3) serves Hq // Hkv query heads, as
    kv.repeat_interleave(Hq // Hkv, -3)."""
    if query.dim() < 3 or kv.dim() < 3:
        raise ValueError(f"scaled_dot_product_attention: enable_gqa=True needs (..., heads, L, E) inputs, got query "
                         f"{list(query.shape)} and key/value {list(kv.shape)}")
    hq, hkv = query.shape[-3], kv.shape[-3]
    if hq % hkv:
        raise ValueError(f"scaled_dot_product_attention: enable_gqa=True needs the number of query heads ({hq}) to be "
                         f"a multiple of the key/value heads ({hkv})")
    if hq == hkv:
        return kv
    shape = list(kv.shape)
    grouped = kv.unsqueeze(-3).expand(*shape[:-2], hq // hkv, *shape[-2:])
    return grouped.reshape(*shape[:-3], hq, *shape[-2:])


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask=None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale=None, enable_gqa: bool = False) -> Tensor:
    """softmax(Q K^T * scale + mask) V over the last two dims; bool masks mark positions to keep
    (True = take part), float masks are added; is_causal applies a top-left aligned lower-triangular mask."""
    if enable_gqa:
        key, value = _repeat_kv_heads(query, key), _repeat_kv_heads(query, value)
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
