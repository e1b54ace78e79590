"""``F.scaled_dot_product_attention`` (boolean or additive masks, is_causal, dropout, grouped-query
attention), composed from matmul and softmax."""
from __future__ import annotations

import math

from tinytorch._creation import ones
from tinytorch._dtype import bool_
from tinytorch._ops.dropout import dropout
from tinytorch._ops.norm import softmax as _softmax
from tinytorch.tensor import Tensor


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
        keep = ones(L, S, dtype=bool_, device=query.device).tril()
        scores = scores.masked_fill(keep.logical_not(), float("-inf"))
    elif attn_mask is not None:
        if attn_mask.dtype == bool_:
            scores = scores.masked_fill(attn_mask.logical_not(), float("-inf"))
        else:
            scores = scores + attn_mask
    attn = _softmax(scores, -1)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    return attn @ value
