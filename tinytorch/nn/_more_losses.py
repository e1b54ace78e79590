"""More losses for ``nn.functional``, composed from ops (PyTorch's formulas and reductions):
margin_ranking_loss, hinge_embedding_loss, soft_margin_loss, triplet_margin_loss,
poisson_nll_loss, gaussian_nll_loss, multilabel_soft_margin_loss, multi_margin_loss."""
from __future__ import annotations

import math

import tinytorch
from tinytorch.tensor import Tensor


def _finish(loss: Tensor, size_average, reduce, reduction: str) -> Tensor:
    from tinytorch.nn.functional import _legacy_reduction, _reduce
    return _reduce(loss, _legacy_reduction(size_average, reduce, reduction))


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0, size_average=None,
                        reduce=None, reduction: str = "mean") -> Tensor:
    """max(0, -target * (input1 - input2) + margin)."""
    return _finish((-target * (input1 - input2) + margin).clamp(min=0), size_average, reduce, reduction)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average=None, reduce=None,
                         reduction: str = "mean") -> Tensor:
    """x where target is 1, max(0, margin - x) where target is -1."""
    loss = tinytorch.where(target == 1, input, 0.0) + tinytorch.where(target == -1, (margin - input).clamp(min=0), 0.0)
    return _finish(loss, size_average, reduce, reduction)


def soft_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """log(1 + exp(-target * input))."""
    from tinytorch.nn.functional import softplus
    return _finish(softplus(-target * input), size_average, reduce, reduction)


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2.0,
                        eps: float = 1e-6, swap: bool = False, size_average=None, reduce=None,
                        reduction: str = "mean") -> Tensor:
    """max(d(a, p) - d(a, n) + margin, 0) with the pairwise p-distance d (swap: the smaller of
    d(a, n) and d(p, n))."""
    from tinytorch.nn.functional import pairwise_distance
    d_ap = pairwise_distance(anchor, positive, p, eps)
    d_an = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_an = tinytorch.minimum(d_an, pairwise_distance(positive, negative, p, eps))
    return _finish((d_ap - d_an + margin).clamp(min=0), size_average, reduce, reduction)


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False, size_average=None,
                     eps: float = 1e-8, reduce=None, reduction: str = "mean") -> Tensor:
    """exp(input) - target * input (log_input), or input - target * log(input + eps); with full,
    plus Stirling's term target * log(target) - target + log(2 pi target) / 2 where target > 1."""
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        safe = tinytorch.where(target > 1, target, 1.0)   # (log of 1 where the term is dropped)
        stirling = safe * safe.log() - safe + 0.5 * (2 * math.pi * safe).log()
        loss = loss + tinytorch.where(target > 1, stirling, 0.0)
    return _finish(loss, size_average, reduce, reduction)


def gaussian_nll_loss(input: Tensor, target: Tensor, var, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:
    """(log(max(var, eps)) + (input - target)^2 / max(var, eps)) / 2 (+ log(2 pi) / 2 with full)."""
    if not isinstance(var, Tensor):
        var = tinytorch.full((), float(var), dtype=input.dtype, device=input.device)
    if var.dim() == input.dim() - 1 or (var.dim() == input.dim() and var.shape[-1] == 1 and input.shape[-1] != 1):
        var = var if var.dim() == input.dim() else var.unsqueeze(-1)
    if bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    var = var.clamp(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _finish(loss, None, None, reduction)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight=None, size_average=None, reduce=None,
                                reduction: str = "mean") -> Tensor:
    """-mean over classes of target * log(sigmoid(x)) + (1 - target) * log(sigmoid(-x))."""
    from tinytorch.nn.functional import logsigmoid
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    return _finish(loss.mean(-1), size_average, reduce, reduction)


def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0, weight=None,
                      size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """sum over classes j != y of max(0, margin - x[y] + x[j])^p / C (times weight[y])."""
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    x = input if input.dim() == 2 else input.unsqueeze(0)
    t = (target if target.dim() == 1 else target.reshape(1)).long()
    c = x.shape[1]
    picked = x.gather(1, t.unsqueeze(1))
    hinge = (margin - picked + x).clamp(min=0) ** p
    if weight is not None:
        hinge = hinge * weight.index_select(0, t).unsqueeze(1)
    others = tinytorch.nn.functional.one_hot(t, c).logical_not()
    loss = (hinge * others).sum(1) / c
    return _finish(loss if input.dim() == 2 else loss.squeeze(0), size_average, reduce, reduction)
