"""``F.linear_cross_entropy`` / ``LinearCrossEntropyOptions``: cross entropy of ``linear(input, W)``.

With ``options=None`` it is that composition (the reference path). With options, the batch is
processed ``batch_chunk_size`` rows at a time so the full (N, C) logits never exist at once: each
chunk's summed loss and its gradients with respect to the input rows, the weight and the bias are
computed in the forward (one chunk's graph at a time) and the backward scales them by the
incoming gradient, as PyTorch's chunked path does (so no double backward through it). Supported
there: 2-D input, class-index targets (N,), a (C, in) weight and (C,) bias, reduction 'mean' or
'sum'; anything else falls back to the reference path with a warning, as PyTorch's."""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Optional

from tinytorch._ops.shape import cat
from tinytorch.autograd import grad as _grad
from tinytorch.autograd.function import Function
from tinytorch.autograd.grad_mode import enable_grad
from tinytorch.nn.functional.linear import linear
from tinytorch.nn.functional.loss import cross_entropy
from tinytorch.nn.modules._doc_notes import fill_doc, loss_notes
from tinytorch._tensor.tensor import Tensor

__all__ = ["LinearCrossEntropyOptions", "linear_cross_entropy"]

_ROWS_BUDGET = 1 << 22      # logits elements per chunk when batch_chunk_size is None (16 MiB in float32)


@dataclass
class LinearCrossEntropyOptions:
    """Configuration for the chunked implementation of :func:`linear_cross_entropy`: the batch is
    processed in pieces of ``batch_chunk_size`` rows (chosen from the class count when ``None``).
    ``chunking_method``, ``acc_policy`` and ``acc_dtype`` are accepted for PyTorch compatibility;
    tinytorch accumulates in the input's dtype (float32 and float64 kernels accumulate in float32
    or wider)."""
    allow_retain_graph: bool = False
    batch_chunk_size: Optional[int] = None
    chunking_method: Optional[str] = "auto"
    acc_policy: str = "auto"
    acc_dtype: Any = None


class _ChunkedLinearCrossEntropy(Function):
    @staticmethod
    def forward(ctx, input, weight, bias, target, class_weight, reduction, ignore_index, label_smoothing, chunk):
        n = input.shape[0]
        total = None
        gx, gw, gb = [], None, None
        w_leaf = weight.detach().requires_grad_(True)
        b_leaf = None if bias is None else bias.detach().requires_grad_(True)
        for start in range(0, n, chunk):
            x = input[start:start + chunk].detach().requires_grad_(True)
            with enable_grad():
                loss = cross_entropy(linear(x, w_leaf, b_leaf), target[start:start + chunk], class_weight,
                                     ignore_index=ignore_index, reduction="sum", label_smoothing=label_smoothing)
                grads = _grad(loss, [x, w_leaf] + ([b_leaf] if b_leaf is not None else []))
            total = loss.detach() if total is None else total + loss.detach()
            gx.append(grads[0])
            gw = grads[1] if gw is None else gw + grads[1]
            if b_leaf is not None:
                gb = grads[2] if gb is None else gb + grads[2]
        scale = 1.0
        if reduction == "mean":
            keep = target != ignore_index
            if class_weight is None:
                denom = keep.sum().to(total.dtype)
            else:
                denom = (class_weight.index_select(0, target.clamp(0, weight.shape[0] - 1)) * keep).sum()
            scale = 1.0 / denom
        ctx.save_for_backward(cat(gx, 0) * scale, gw * scale, None if gb is None else gb * scale)
        return total * scale

    @staticmethod
    def backward(ctx, g):
        gx, gw, gb = ctx.saved_tensors
        return g * gx, g * gw, None if gb is None else g * gb, None, None, None, None, None, None


def _chunk_rows(options: LinearCrossEntropyOptions, num_classes: int) -> int:
    if options.batch_chunk_size is not None:
        if options.batch_chunk_size <= 0:
            raise ValueError(f"batch_chunk_size must be positive, got {options.batch_chunk_size}")
        return int(options.batch_chunk_size)
    return max(1, _ROWS_BUDGET // max(num_classes, 1))


@fill_doc(loss_notes)
def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *, linear_bias: Optional[Tensor] = None,
                         weight: Optional[Tensor] = None, reduction: str = "mean", ignore_index: Optional[int] = None,
                         label_smoothing: float = 0.0,
                         options: Optional[LinearCrossEntropyOptions] = None) -> Tensor:
    r"""Compute the cross entropy loss between inputs, transformed linearly, and target.

    Cross entropy of ``linear(input, linear_weight, linear_bias)`` against ``target``; a
    (C, d_1, ..., d_K, in_features) weight gives K-dimensional logits (N, C, d_1, ..., d_K).

    Args:
        input (Tensor): the input tensor.
        linear_weight (Tensor): linear weight, :math:`(C, in\_features)` or :math:`(C, d_1, ..., d_K,
            in\_features)`.
        target (Tensor): the target tensor, same shape as the input unless stated.
        linear_bias (Tensor, optional): bias added to the linear projection (shape ``(C,)`` or ``(C,
            d_1, ..., d_K)``, matching :attr:`linear_weight`). Default: ``None``
        {linear_cross_entropy_weight}
        {reduction}
        {linear_cross_entropy_args}"""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    ignore = -100 if ignore_index is None else ignore_index
    class_index = not target.dtype.is_floating_point
    if options is not None:
        supported = (input.dim() == 2 and linear_weight.dim() == 2 and class_index and target.dim() == 1
                     and reduction in ("mean", "sum") and (linear_bias is None or linear_bias.dim() == 1))
        if supported:
            if input.shape[0] != target.shape[0]:
                raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                                 f"({target.shape[0]}).")
            chunk = _chunk_rows(options, linear_weight.shape[0])
            return _ChunkedLinearCrossEntropy.apply(input, linear_weight, linear_bias, target, weight, reduction,
                                                    ignore, label_smoothing, chunk)
        warnings.warn("linear_cross_entropy: this configuration is not supported by the chunked path "
                      "(it needs 2-D input, class-index targets (N,), a (C, in_features) weight and reduction "
                      "'mean' or 'sum'); using the reference implementation")
    in_features = linear_weight.shape[-1]
    logits = linear(input, linear_weight.reshape(-1, in_features),
                    None if linear_bias is None else linear_bias.reshape(-1))
    if linear_weight.dim() > 2:                       # (N, C * prod(d)) -> (N, C, d_1, ..., d_K)
        if input.dim() != 2:
            raise ValueError(f"linear_cross_entropy: a {linear_weight.dim()}-D linear_weight needs a batched 2-D "
                             f"input, got {list(input.shape)}")
        logits = logits.reshape(input.shape[0], *linear_weight.shape[:-1])
    return cross_entropy(logits, target, weight, ignore_index=ignore, reduction=reduction,
                         label_smoothing=label_smoothing)

