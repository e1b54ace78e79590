"""Losses of ``nn.functional`` (PyTorch's formulas, reductions and legacy ``size_average`` /
``reduce`` flags): nll_loss and cross_entropy call their kernels in ``tinytorch._ops.loss``, the
rest are composed from ops."""
from __future__ import annotations

import math

from tinytorch._tensor.creation import full as _full  # (poisson_nll_loss has an argument named full)
from tinytorch._ops.elementwise import minimum, where
from tinytorch._ops import loss as _LOSS
from tinytorch.nn.functional.activation import logsigmoid, softplus
from tinytorch.nn.functional.distance import cosine_similarity, pairwise_distance
from tinytorch.nn.functional.embedding import one_hot
from tinytorch.nn.modules._doc_notes import fill_doc, loss_notes
from tinytorch._core.dtype import bfloat16, float16, float32
from tinytorch._tensor import autocast as _autocast
from tinytorch._tensor.tensor import Tensor


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


def _weighted_reduce(name: str, loss: Tensor, weight: Tensor, input: Tensor, reduction: str) -> Tensor:
    """PyTorch's weighted mse_loss and l1_loss: ``loss * weight``, whose mean divides by the summed weights."""
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError(f"{name}: Weights and input must have the same size (weight {list(weight.shape)}, "
                         f"input {list(input.shape)}).")
    loss = loss * weight
    if reduction == "mean":
        return loss.sum() / weight.sum()
    return _reduce(loss, reduction)


def _legacy_reduction(size_average, reduce, reduction: str) -> str:
    """PyTorch's deprecated size_average/reduce flags, when given, override ``reduction``."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    return "mean" if size_average and reduce else ("sum" if reduce else "none")


def _finish(loss: Tensor, size_average, reduce, reduction: str) -> Tensor:
    return _reduce(loss, _legacy_reduction(size_average, reduce, reduction))


# ------------------------------------------------------------------ regression

@fill_doc(loss_notes)
def mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
             weight=None) -> Tensor:
    """Compute the element-wise mean squared error, with optional weighting (with ``weight``, the mean
    is ``sum(weight * (input - target)^2) / sum(weight)``, as PyTorch's).

    Args:
        {input_target}
        {reduction_args}
        {weight}"""
    loss = (input - target).square()
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _reduce(loss, reduction) if weight is None else _weighted_reduce("mse_loss", loss, weight, input, reduction)


@fill_doc(loss_notes)
def l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
            weight=None) -> Tensor:
    """Compute the L1 loss, with optional weighting: the mean element-wise absolute value difference
    (with ``weight``, ``sum(weight * |input - target|) / sum(weight)``).

    Args:
        {input_target}
        {reduction_args}
        weight (Tensor, optional): Weights for each sample, of the input's shape. Default: ``None``"""
    loss = (input - target).abs()
    reduction = _legacy_reduction(size_average, reduce, reduction)
    return _reduce(loss, reduction) if weight is None else _weighted_reduce("l1_loss", loss, weight, input, reduction)


@fill_doc(loss_notes)
def smooth_l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
                   beta: float = 1.0) -> Tensor:
    """Compute the Smooth L1 loss.

    Args:
        {input_target}
        {reduction_args}
        {beta}"""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if beta < 0:
        raise ValueError("smooth_l1_loss does not support negative values for beta.")
    d = (input - target).abs()
    if beta == 0:
        return _reduce(d, reduction)
    return _reduce(where(d < beta, d.square() * (0.5 / beta), d - 0.5 * beta), reduction)


@fill_doc(loss_notes)
def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0, weight=None) -> Tensor:
    """Compute the Huber loss, with optional weighting.

    Args:
        {input_target}
        {reduction}
        {delta}
        {weight}"""
    d = (input - target).abs()
    loss = where(d < delta, d.square() * 0.5, (d - 0.5 * delta) * delta)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@fill_doc(loss_notes)
def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False, size_average=None,
                     eps: float = 1e-8, reduce=None, reduction: str = "mean") -> Tensor:
    r"""Compute the Poisson negative log likelihood loss.

    exp(input) - target * input (log_input), or input - target * log(input + eps); with full,
    plus Stirling's term target * log(target) - target + log(2 pi target) / 2 where target > 1.

    Args:
        {input_target}
        {poisson_nll_args}"""
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        safe = where(target > 1, target, 1.0)   # (log of 1 where the term is dropped)
        stirling = safe * safe.log() - safe + 0.5 * (2 * math.pi * safe).log()
        loss = loss + where(target > 1, stirling, 0.0)
    return _finish(loss, size_average, reduce, reduction)


@fill_doc(loss_notes)
def gaussian_nll_loss(input: Tensor, target: Tensor, var, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:
    """Gaussian negative log likelihood loss.

    (log(max(var, eps)) + (input - target)^2 / max(var, eps)) / 2 (+ log(2 pi) / 2 with full).

    Args:
        {input_target}
        var (Tensor or float): tensor of positive variance(s), one for each of the expectations in the
            input (heteroscedastic), or a single one (homoscedastic).
        {gaussian_nll_args}"""
    if not isinstance(var, Tensor):
        var = _full((), float(var), dtype=input.dtype, device=input.device)
    if var.dim() == input.dim() - 1 or (var.dim() == input.dim() and var.shape[-1] == 1 and input.shape[-1] != 1):
        var = var if var.dim() == input.dim() else var.unsqueeze(-1)
    if bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    var = var.clamp(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _finish(loss, None, None, reduction)


# ------------------------------------------------------------------ classification

@fill_doc(loss_notes)
def nll_loss(input: Tensor, target: Tensor, weight=None, size_average=None, ignore_index: int = -100, reduce=None,
             reduction: str = "mean") -> Tensor:
    r"""Compute the negative log likelihood loss.

    Negative log likelihood over log-probabilities ``input`` (N, C, *) or (C,) and class indices.

    Args:
        input (Tensor): log-probabilities, :math:`(N, C)` where `C = number of classes`, :math:`(C)`, or
            :math:`(N, C, d_1, ..., d_K)` in case of K-dimensional loss.
        target (Tensor): :math:`(N)` where each value is :math:`0 \leq \text{{targets}}[i] \leq C-1`, or
            :math:`(N, d_1, ..., d_K)` for K-dimensional loss.
        {class_index_args}"""
    return _LOSS.nll_loss(input, target, weight, ignore_index, _legacy_reduction(size_average, reduce, reduction))


@fill_doc(loss_notes)
def cross_entropy(input: Tensor, target: Tensor, weight=None, size_average=None, ignore_index: int = -100,
                  reduce=None, reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """Compute the cross entropy loss between input logits and target.

    Cross entropy between logits (N, C, *) or (C,) and class indices or class probabilities.

    Args:
        input (Tensor): predicted unnormalized logits, :math:`(C)`, :math:`(N, C)` or :math:`(N, C, d_1,
            ..., d_K)`.
        target (Tensor): ground truth class indices (:math:`(N)` or :math:`(N, d_1, ..., d_K)`, values
            in :math:`[0, C)`) or class probabilities (the input's shape).
        {class_index_args}
        {label_smoothing}"""
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    return _LOSS.cross_entropy(input, target, weight, ignore_index, _legacy_reduction(size_average, reduce, reduction),
                            label_smoothing)


def _cross_entropy_in_float32(device_type: str, cast, input, target, weight=None, size_average=None, ignore_index: int = -100,
                              reduce=None, reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """cross_entropy under autocast's float32 policy: float16/bfloat16 logits on the autocast device
    go to the fused kernel as they are, with a float32 loss (see _tensor/autocast.py, FP32_READERS)."""
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    low = isinstance(input, Tensor) and input.device.type == device_type and input.dtype in (float16, bfloat16)
    return _LOSS.cross_entropy(input if low else cast(input), target, cast(weight), ignore_index,
                               _legacy_reduction(size_average, reduce, reduction), label_smoothing,
                               float32 if low else None)


_autocast.FP32_READERS["cross_entropy"] = _cross_entropy_in_float32


@fill_doc(loss_notes)
def binary_cross_entropy(input: Tensor, target: Tensor, weight=None, size_average=None, reduce=None,
                         reduction: str = "mean") -> Tensor:
    """Compute Binary Cross Entropy between the target and input probabilities.

    Args:
        {input_target}
        {weighted_reduction_args}"""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_same_shape("binary_cross_entropy", input, target)
    # PyTorch clamps the log terms at -100
    loss = -(target * input.log().clamp(min=-100) + (1 - target) * (1 - input).log().clamp(min=-100))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


@fill_doc(loss_notes)
def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight=None, size_average=None, reduce=None,
                                     reduction: str = "mean", pos_weight=None) -> Tensor:
    """Compute Binary Cross Entropy between target and input logits.

    Args:
        {input_target}
        {weighted_reduction_args}
        {pos_weight}"""
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


@fill_doc(loss_notes)
def kl_div(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
           log_target: bool = False) -> Tensor:
    """Compute the KL Divergence loss.

    Args:
        {input_target}
        {reduction_args}
        {log_target}"""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = where(target > 0, target * (target.clamp(min=1e-38).log() - input), 0.0)
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.dim() else 1)
    return _reduce(loss, reduction)


@fill_doc(loss_notes)
def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight=None, size_average=None, reduce=None,
                                reduction: str = "mean") -> Tensor:
    """Compute the multilabel soft margin loss.

    -mean over classes of target * log(sigmoid(x)) + (1 - target) * log(sigmoid(-x)).

    Args:
        {input_target}
        {weighted_reduction_args}"""
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    return _finish(loss.mean(-1), size_average, reduce, reduction)


@fill_doc(loss_notes)
def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0, weight=None,
                      size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """Compute the multi margin loss, with optional weighting.

    sum over classes j != y of max(0, margin - x[y] + x[j])^p / C (times weight[y]).

    Args:
        {input_target}
        {multi_margin_args}"""
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    x = input if input.dim() == 2 else input.unsqueeze(0)
    t = (target if target.dim() == 1 else target.reshape(1)).long()
    c = x.shape[1]
    picked = x.gather(1, t.unsqueeze(1))
    hinge = (margin - picked + x).clamp(min=0) ** p
    if weight is not None:
        hinge = hinge * weight.index_select(0, t).unsqueeze(1)
    others = one_hot(t, c).logical_not()
    loss = (hinge * others).sum(1) / c
    return _finish(loss if input.dim() == 2 else loss.squeeze(0), size_average, reduce, reduction)


# ------------------------------------------------------------------ margins and embeddings

@fill_doc(loss_notes)
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0, size_average=None,
                        reduce=None, reduction: str = "mean") -> Tensor:
    """Compute the margin ranking loss.

    max(0, -target * (input1 - input2) + margin).

    Args:
        {pair_input_target}
        {margin_zero}
        {reduction_args}"""
    return _finish((-target * (input1 - input2) + margin).clamp(min=0), size_average, reduce, reduction)


@fill_doc(loss_notes)
def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average=None, reduce=None,
                         reduction: str = "mean") -> Tensor:
    """Compute the hinge embedding loss.

    x where target is 1, max(0, margin - x) where target is -1.

    Args:
        {input_target}
        {margin_one}
        {reduction_args}"""
    loss = where(target == 1, input, 0.0) + where(target == -1, (margin - input).clamp(min=0), 0.0)
    return _finish(loss, size_average, reduce, reduction)


@fill_doc(loss_notes)
def soft_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """Compute the soft margin loss.

    log(1 + exp(-target * input)).

    Args:
        {input_target}
        {reduction_args}"""
    return _finish(softplus(-target * input), size_average, reduce, reduction)


@fill_doc(loss_notes)
def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2.0,
                        eps: float = 1e-6, swap: bool = False, size_average=None, reduce=None,
                        reduction: str = "mean") -> Tensor:
    """Compute the triplet loss between given input tensors and a margin greater than 0.

    max(d(a, p) - d(a, n) + margin, 0) with the pairwise p-distance d (swap: the smaller of
    d(a, n) and d(p, n)).

    Args:
        anchor (Tensor): the anchor input tensor.
        positive (Tensor): the positive input tensor.
        negative (Tensor): the negative input tensor.
        {triplet_margin_args}"""
    d_ap = pairwise_distance(anchor, positive, p, eps)
    d_an = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_an = minimum(d_an, pairwise_distance(positive, negative, p, eps))
    return _finish((d_ap - d_an + margin).clamp(min=0), size_average, reduce, reduction)


@fill_doc(loss_notes)
def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0, size_average=None,
                          reduce=None, reduction: str = "mean") -> Tensor:
    """Compute the cosine embedding loss.

    Args:
        {pair_input_target}
        {margin_zero}
        {reduction_args}"""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    cos = cosine_similarity(input1, input2, dim=-1 if input1.dim() == 1 else 1)
    loss = where(target == 1, 1 - cos, (cos - margin).clamp(min=0))
    return _reduce(loss, reduction)


@fill_doc(loss_notes)
def multilabel_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                           reduction: str = "mean") -> Tensor:
    """Multi-class multi-classification hinge loss (margin-based loss).

    For each sample, ``target`` holds the indices of its classes, ended by the first ``-1``:
    ``loss = sum_{{j in targets, i not in targets}} max(0, 1 - (x[j] - x[i])) / C``.

    Args:
        input (Tensor): :math:`(C)` or :math:`(N, C)`.
        target (Tensor): class indices of the same shape, padded with -1.
        {short_reduction_args}
    """
    if input.dim() not in (1, 2) or list(target.shape) != list(input.shape):
        raise RuntimeError(f"multilabel_margin_loss: expected input of shape (C) or (N, C) and a target of the same "
                           f"shape, got input {list(input.shape)} and target {list(target.shape)}")
    if target.dtype.is_floating_point:
        raise RuntimeError(f"multilabel_margin_loss: expected an integer target, got {target.dtype}")
    one = input.dim() == 1
    x = input.unsqueeze(0) if one else input              # (N, C)
    y = target.unsqueeze(0) if one else target
    c = x.shape[1]
    if y.numel() and (int(y.max()) >= c or int(y.min()) < -1):
        raise RuntimeError(f"multilabel_margin_loss: target index out of range [-1, {c - 1}]")
    valid = (y >= 0).long().cumprod(1).bool()               # entries before the first -1
    yc = y.clamp(min=0)
    is_target = (one_hot(yc, c) * valid.long().unsqueeze(-1)).sum(1) > 0   # (N, C)
    x_y = x.gather(1, yc)                                                 # (N, C): x at each target slot
    hinge = (1.0 - x_y.unsqueeze(2) + x.unsqueeze(1)).clamp(min=0)         # (N, slot j, class i)
    mask = valid.unsqueeze(2) & (~is_target).unsqueeze(1)
    loss = where(mask, hinge, hinge * 0.0).sum((1, 2)) / c
    if one:
        loss = loss.squeeze(0)
    return _finish(loss, size_average, reduce, reduction)


@fill_doc(loss_notes)
def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function=None, margin: float = 1.0, swap: bool = False,
                                      reduction: str = "mean") -> Tensor:
    """Triplet margin loss with a custom distance: ``max(d(a, p) - d(a, n) + margin, 0)``.

    Args:
        anchor (Tensor): the anchor input tensor, :math:`(N, D)` or :math:`(D)`.
        positive (Tensor): the positive input tensor, same shape.
        negative (Tensor): the negative input tensor, same shape.
        {distance_function}
        {distance_margin}
        swap (bool, optional): Whether to use the distance swap described in the paper
            `Learning shallow convolutional feature descriptors with triplet losses`. Default: ``False``.
        {short_reduction}
    """
    if margin <= 0:
        raise ValueError(f"triplet_margin_with_distance_loss: expected margin to be greater than 0, got {margin} "
                         "instead")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    dist = distance_function if distance_function is not None else pairwise_distance
    d_ap, d_an = dist(anchor, positive), dist(anchor, negative)
    if swap:
        d_an = minimum(d_an, dist(positive, negative))
    return _reduce((d_ap - d_an + margin).clamp(min=0), reduction)
