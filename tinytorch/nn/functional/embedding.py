"""Embedding lookups of ``nn.functional``: embedding (max_norm renormalization,
scale_grad_by_freq, padding_idx) and one_hot."""
from __future__ import annotations

import numpy as np

from tinytorch._creation import tensor
from tinytorch._ops import elementwise as _E
from tinytorch._ops import reduce as _R
from tinytorch._ops.embedding import embedding as _embedding
from tinytorch._ops.index import one_hot as _one_hot
from tinytorch.autograd.grad_mode import no_grad
from tinytorch.tensor import Tensor


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
    return _one_hot(input, num_classes)
