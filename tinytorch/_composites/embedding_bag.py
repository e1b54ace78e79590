"""embedding_bag composed from the embedding lookup and a scatter reduction (every device; autograd
records the parts, so gradients reach the weight and per_sample_weights).

The bag of every index is worked out on the host from ``offsets`` (the indices are copied there
once, to check them and to drop ``padding_idx`` entries), then the looked-up rows are summed
(``index_add``), averaged, or maxed (``scatter_reduce(amax)``) into their bags. Empty bags give
zeros, as PyTorch's. ``tinytorch.embedding_bag`` has PyTorch's ATen signature and returns its
four tensors; ``nn.functional.embedding_bag`` is the user-facing form."""
from __future__ import annotations

from typing import Optional, Tuple

import numpy as np

from tinytorch._tensor.creation import tensor as _tensor, zeros
from tinytorch._composites.indexing import index_add, scatter_reduce
from tinytorch._ops.embedding import embedding as _lookup
from tinytorch._tensor.tensor import Tensor

__all__ = ["embedding_bag"]

MODES = ("sum", "mean", "max")


def bag_layout(indices: np.ndarray, offsets: np.ndarray, include_last_offset: bool) -> Tuple[np.ndarray, int]:
    """(bag of every index, number of bags), checking offsets as PyTorch does."""
    n = indices.shape[0]
    if offsets.size and offsets[0] != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {int(offsets[0])}")
    if offsets.size and offsets[-1] > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got offsets[-1] of "
                           f"{int(offsets[-1])}")
    if np.any(np.diff(offsets) < 0):
        raise RuntimeError(f"embedding_bag: offsets must be non-decreasing, got {offsets.tolist()}")
    bags = max(offsets.size - 1, 0) if include_last_offset else offsets.size
    # index i belongs to the last bag whose offset is <= i; with include_last_offset the indices
    # past offsets[-1] belong to no bag (-1)
    bag = np.searchsorted(offsets, np.arange(n), side="right") - 1
    if include_last_offset:
        bag[bag >= bags] = -1
    return bag.astype(np.int64), bags


def embedding_bag(weight: Tensor, indices: Tensor, offsets: Tensor, scale_grad_by_freq: bool = False,
                  mode: int = 0, sparse: bool = False, per_sample_weights: Optional[Tensor] = None,
                  include_last_offset: bool = False, padding_idx: Optional[int] = None
                  ) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    """Bags of rows of ``weight`` (V, E) reduced by ``mode`` (0 sum, 1 mean, 2 max).

    Returns ``(output (B, E), offset2bag (L,), bag_size (B,), max_indices)``: the bag of every
    index, the number of (non-padding) indices in every bag, and for mode 2 the row each maximum
    came from, (B, E) (-1 in empty bags); for modes 0 and 1 ``max_indices`` is ``bag_size``. The
    first output is ``nn.functional.embedding_bag``'s.

    Args:
        weight (Tensor): the embedding matrix (num_embeddings, embedding_dim).
        indices (Tensor): 1-D tensor of indices into the embedding matrix, cut into bags at
            :attr:`offsets`.
        offsets (Tensor): the starting position of each bag in :attr:`indices`.
        scale_grad_by_freq (bool): scale gradients by the inverse of frequency of the words in the
            mini-batch. Default: ``False``
        mode (int): 0 (sum), 1 (mean) or 2 (max). Default: ``0``
        sparse (bool): sparse gradients (not supported: raises NotImplementedError). Default: ``False``
        per_sample_weights (Tensor, optional): a weight per index, multiplying its row (sum mode).
            Default: ``None``
        include_last_offset (bool): if ``True``, offsets has one more element, the end of the last bag
            (CSR format). Default: ``False``
        padding_idx (int, optional): an index left out of every bag. Default: ``None``"""
    return bag_reduce(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights,
                      include_last_offset, padding_idx, True)


def bag_reduce(weight: Tensor, indices: Tensor, offsets: Tensor, scale_grad_by_freq: bool, mode: int, sparse: bool,
               per_sample_weights: Optional[Tensor], include_last_offset: bool, padding_idx: Optional[int],
               bookkeeping: bool) -> Tuple[Tensor, ...]:
    """embedding_bag's work; ``bookkeeping=False`` returns only the output (no host copy of the rows)."""
    if sparse:
        raise NotImplementedError("embedding_bag: sparse gradients are not implemented (tinytorch has no sparse "
                                  "tensors)")
    if mode not in (0, 1, 2):
        raise ValueError(f"embedding_bag: mode has to be 0 (sum), 1 (mean) or 2 (max), got {mode}")
    if indices.dtype.is_floating_point or indices.dtype.name not in ("int64", "int32"):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {indices.dtype} instead (while checking arguments for embedding_bag)")
    if weight.dim() != 2 or indices.dim() != 1 or offsets.dim() != 1:
        raise ValueError(f"embedding_bag: expected a 2-D weight, 1-D indices and 1-D offsets, got weight "
                         f"{list(weight.shape)}, indices {list(indices.shape)}, offsets {list(offsets.shape)}")
    num, dim = weight.shape
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, {-num} through {num - 1}, "
                               f"but got {padding_idx}")
        padding_idx %= num
    idx = indices.detach().cpu().numpy().astype(np.int64)
    bad = np.nonzero((idx < 0) | (idx >= num))[0]
    if bad.size:
        raise RuntimeError(f"Index {int(bad[0])} of input takes value {int(idx[bad[0]])} which is not in the valid "
                           f"range [0, {num})")
    if per_sample_weights is not None and tuple(per_sample_weights.shape) != tuple(indices.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({list(per_sample_weights.shape)}) is not None, "
                         f"then it must have the same shape as the input ({list(indices.shape)})")
    bag, bags = bag_layout(idx, offsets.detach().cpu().numpy().astype(np.int64), include_last_offset)
    keep = (bag >= 0) if padding_idx is None else (bag >= 0) & (idx != padding_idx)
    counts = np.bincount(bag[keep], minlength=bags)[:bags]
    device = weight.device
    kept = np.nonzero(keep)[0]
    kept_t = _tensor(kept, device=device)
    rows = _lookup(_tensor(idx[kept], device=device), weight, None, scale_grad_by_freq)     # (L', E)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.index_select(0, kept_t).to(rows.dtype).unsqueeze(-1)
    bag_t = _tensor(bag[keep], device=device)
    out = zeros((bags, dim), dtype=weight.dtype, device=device)
    if mode == 2:
        where = bag_t.unsqueeze(-1).expand(rows.shape[0], dim)
        out = scatter_reduce(out, 0, where, rows, "amax", include_self=False)
    else:
        out = index_add(out, 0, bag_t, rows)
        if mode == 1:
            out = out / _tensor(np.maximum(counts, 1), dtype=out.dtype, device=device).unsqueeze(-1)
    if not bookkeeping:
        return (out,)
    max_indices = _tensor(counts, device=device)
    if mode == 2:
        max_indices = _max_rows(rows.detach().cpu().double().numpy(), idx[kept], bag[keep], bags, dim, device)
    offset2bag = _tensor(np.where(bag >= 0, bag, 0), device=device)
    return out, offset2bag, _tensor(counts, device=device), max_indices


def _max_rows(rows: np.ndarray, idx: np.ndarray, bag: np.ndarray, bags: int, dim: int, device) -> Tensor:
    """(B, E) weight row each bag's maximum came from (the first on ties), -1 for empty bags."""
    n = rows.shape[0]
    best = np.full((bags, dim), -np.inf)
    np.maximum.at(best, bag, rows)
    pos = np.where(rows == best[bag], np.arange(n)[:, None], n)          # (L', E): candidate positions
    first = np.full((bags, dim), n)
    np.minimum.at(first, bag, pos)
    which = np.where(first < n, np.append(idx, -1)[first], -1)
    return _tensor(which.astype(np.int64), device=device)
