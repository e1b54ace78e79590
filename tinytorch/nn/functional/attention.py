"""``F.scaled_dot_product_attention`` (boolean or additive masks, is_causal, dropout, grouped-query
attention): the fused kernels (``tinytorch._ops.attention``: no (L, S) score matrix) where they
apply, else the composed matmul + softmax path, which the tests also use as the reference."""
from __future__ import annotations

import math
import os

from tinytorch._tensor.creation import ones
from tinytorch._core.dtype import bool_, float32
from tinytorch._core.graph import is_grad_enabled
from tinytorch._ops import attention as _fused
from tinytorch._ops.dropout import dropout
from tinytorch._ops.norm import softmax as _softmax
from tinytorch._tensor.tensor import Tensor


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


def _composed_scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask=None,
                                           dropout_p: float = 0.0, is_causal: bool = False, scale=None,
                                           enable_gqa: bool = False) -> Tensor:
    """The reference path: softmax(Q K^T * scale + mask) V with matmul and softmax ops (an (L, S)
    score matrix); autograd records its parts, so every derivative order works."""
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


_MAX_FUSED_HEAD_DIM = 256


def _fused_shapes(query: Tensor, key: Tensor, value: Tensor, attn_mask, enable_gqa: bool):
    """The 4-D (B, H, L, E) views the fused kernels take, or None where only the composed path
    applies (dims beyond 4, broadcast batch or heads, mixed dtypes or devices, head dims over 256,
    a mask that needs a gradient)."""
    nd = query.dim()
    if not (2 <= nd <= 4 and key.dim() == nd and value.dim() == nd):
        return None
    if not (query.dtype == key.dtype == value.dtype and query.dtype.is_floating_point):
        return None
    if not (query.device == key.device == value.device):
        return None
    if max(query.shape[-1], value.shape[-1]) > _MAX_FUSED_HEAD_DIM or key.shape[-1] != query.shape[-1]:
        return None
    if key.shape[-2] != value.shape[-2]:
        return None
    lead = [1] * (4 - nd)
    q4, k4, v4 = (t.reshape(*lead, *t.shape) if lead else t for t in (query, key, value))
    if k4.shape[:2] != v4.shape[:2] or q4.shape[0] != k4.shape[0]:
        return None
    hq, hkv = q4.shape[1], k4.shape[1]
    if hq != hkv and not (enable_gqa and hkv > 0 and hq % hkv == 0):
        return None
    if attn_mask is not None:
        if attn_mask.requires_grad and is_grad_enabled():
            return None
        if attn_mask.dim() > nd or attn_mask.device != query.device:
            return None
    return q4, k4, v4


# float32 on CUDA has tiled SIMT kernels for head dims up to 128 (E == Ev) without dropout
# (cuda/src/attention/attention_tiled.cu); float64, and float32 outside that, only the plain fused kernels
# (one warp per row, no tensor cores). Where the (B, H, L, S) scores are small, cuBLAS products and
# the row softmax are several times faster than the plain kernels, so unmasked, dropout-free calls
# that only they would run take the composed path up to this many bytes of scores (PyTorch also
# picks its backend by dtype and size). TINYTORCH_ATTENTION_PLAIN=1 or 0 here keeps the fused kernels.
COMPOSED_WIDE_FLOAT_MAX_BYTES = 64 << 20
_TILED_MAX_HEAD_DIM = 128


def _prefer_composed(q4: Tensor, k4: Tensor, v4: Tensor, attn_mask, dropout_p: float) -> bool:
    if attn_mask is not None or dropout_p > 0.0 or q4.device.type != "cuda":
        return False
    if q4.element_size() < 4 or os.environ.get("TINYTORCH_ATTENTION_PLAIN") == "1":
        return False
    if q4.dtype == float32 and q4.shape[-1] == v4.shape[-1] <= _TILED_MAX_HEAD_DIM:
        return False  # the tiled kernels beat the composed products
    B, H, L, _ = q4.shape
    return B * H * L * k4.shape[-2] * q4.element_size() <= COMPOSED_WIDE_FLOAT_MAX_BYTES


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask=None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale=None, enable_gqa: bool = False) -> Tensor:
    r"""Computes softmax(query @ key^T * scale + attn_mask) @ value over the last two dims.

    Args:
        query: query tensor, (..., L, E).
        key: key tensor, (..., S, E).
        value: value tensor, (..., S, Ev).
        attn_mask: bool (True = the position takes part) or float (added to the scores),
            broadcastable to (..., L, S).
        dropout_p: dropout probability applied to the attention weights.
        is_causal: a top-left aligned lower-triangular mask (query i sees keys j <= i).
        scale: the factor on the scores, 1 / sqrt(E) by default.
        enable_gqa: key/value may have fewer heads (dim -3) than query, a divisor of them.

    Runs fused kernels (FlashAttention-2: memory O(L), no (L, S) matrix; the forward keeps the
    output and the row logsumexp, the backward recomputes the scores per tile) for 2- to 4-D
    inputs of one floating dtype with head dims up to 256; other cases take the composed
    matmul + softmax path, as do small unmasked float64 calls on CUDA (faster there than the
    plain kernels; float32 has tiled kernels for head dims up to 128). A row that no key takes
    part in gives zeros (as PyTorch's fused kernels).
    """
    if is_causal and attn_mask is not None:
        raise RuntimeError("scaled_dot_product_attention: attn_mask and is_causal cannot both be set")
    if not 0.0 <= dropout_p <= 1.0:
        raise ValueError(f"scaled_dot_product_attention: dropout_p must be in [0, 1], got {dropout_p}")
    fused = _fused_shapes(query, key, value, attn_mask, enable_gqa)
    if fused is None or _prefer_composed(*fused, attn_mask, dropout_p):
        return _composed_scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal, scale,
                                                      enable_gqa)
    q4, k4, v4 = fused
    out = _fused.scaled_dot_product_attention(q4, k4, v4, attn_mask, float(dropout_p), is_causal, scale)
    return out.reshape(*query.shape[:-1], value.shape[-1]) if query.dim() != 4 else out
