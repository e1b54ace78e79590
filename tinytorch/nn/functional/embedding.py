"""Embedding lookups of ``nn.functional``: embedding (max_norm renormalization,
scale_grad_by_freq, padding_idx), embedding_bag (its reduction in tinytorch/_composites/embedding_bag.py)
and one_hot."""
from __future__ import annotations

from typing import Optional

import numpy as np

from tinytorch._tensor.creation import arange, tensor, zeros
from tinytorch._core.dtype import int64
from tinytorch._composites.embedding_bag import bag_reduce
from tinytorch._ops import elementwise as _E
from tinytorch._ops import reduce as _R
from tinytorch._ops.embedding import embedding as _embedding
from tinytorch._ops.index import one_hot as _one_hot
from tinytorch.autograd.grad_mode import no_grad
from tinytorch._tensor.tensor import Tensor
from tinytorch.nn.modules._doc_notes import embedding_notes, fill_doc


@fill_doc(embedding_notes)
def embedding(input: Tensor, weight: Tensor, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False) -> Tensor:
    """Generate a simple lookup table that looks up embeddings in a fixed dictionary and size.

    Rows of ``weight`` at ``input``; with max_norm, the referenced rows whose norm exceeds it are
    renormalized in place first (as PyTorch's embedding_renorm_); scale_grad_by_freq divides each
    row's gradient by the number of times the mini-batch uses it.

    Args:
        input (Tensor): tensor containing indices into the embedding matrix.
        {weight_matrix}
        {padding_idx}
        {max_norm_args}
        {sparse}"""
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
    rows = np.unique(input.detach().cpu().numpy().reshape(-1))
    if rows.size == 0:
        return
    if rows.min() < 0 or rows.max() >= weight.shape[0]:
        raise IndexError(f"embedding: index out of range for num_embeddings {weight.shape[0]}")
    with no_grad():
        idx = tensor(rows.astype(np.int64))
        sel = weight.detach()[idx]
        norms = _R.norm(sel.double(), norm_type, 1, keepdim=True)
        scale = _E.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0).to(weight.dtype)
        w = weight.detach()
        w[idx] = sel * scale


def one_hot(input: Tensor, num_classes: int = -1) -> Tensor:
    """Takes LongTensor with index values of shape ``(*)`` and returns a tensor of shape ``(*,
    num_classes)`` that have zeros everywhere except where the index of last dimension matches the
    corresponding value of the input tensor, in which case it will be 1.

    Args:
        input (Tensor): class values of any shape (int64).
        num_classes (int): Number of classes, :math:`C`. Default: ``-1``"""
    return _one_hot(input, num_classes)


_MODE_CODES = {"sum": 0, "mean": 1, "max": 2}


@fill_doc(embedding_notes)
def embedding_bag(input: Tensor, weight: Tensor, offsets: Optional[Tensor] = None, max_norm: Optional[float] = None,
                  norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Optional[Tensor] = None, include_last_offset: bool = False,
                  padding_idx: Optional[int] = None) -> Tensor:
    """Compute sums, means or maxes of `bags` of embeddings.

    Bags of rows of ``weight`` reduced without materialising the per-index rows as a (B, L, E)
    tensor: a 2-D ``input`` (B, L) holds one bag per row; a 1-D ``input`` is cut into bags at
    ``offsets``. Empty bags give zeros; ``padding_idx`` entries are left out of the bag (and of the
    mean's count).

    Args:
        input (Tensor): tensor containing bags of indices into the embedding matrix.
        {weight_matrix}
        offsets (Tensor, optional): only used when :attr:`input` is 1D. :attr:`offsets` determines the
            starting index position of each bag (sequence) in :attr:`input`. Default: ``None``
        {max_norm}
        norm_type (float, optional): The p of the p-norm to compute for the :attr:`max_norm` option.
            Default: ``2``
        {scale_grad_by_freq}
        {bag_mode}
        {sparse}
        per_sample_weights (Tensor, optional): a tensor of float / double weights, or None to indicate
            all weights should be taken to be 1. If specified, :attr:`per_sample_weights` must have
            exactly the same shape as input and is treated as having the same :attr:`offsets`, if those
            are not None. Only supported for ``mode='sum'``. Default: ``None``
        {include_last_offset}
        {padding_idx}"""
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        bags, length = input.shape
        offsets = arange(0, bags * length, length, device=input.device) if length else \
            zeros(bags, dtype=int64, device=input.device)
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
        include_last_offset = False
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode not in _MODE_CODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  f"GitHub.")
    if max_norm is not None:
        _embedding_renorm_(weight, input, float(max_norm), float(norm_type))
    return bag_reduce(weight, input, offsets, scale_grad_by_freq, _MODE_CODES[mode], sparse, per_sample_weights,
                      include_last_offset, padding_idx, False)[0]
