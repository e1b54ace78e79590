"""``F.multi_head_attention_forward``: the computation of ``nn.MultiheadAttention`` (which calls it)
with PyTorch's signature: in-projection (packed or separate weights), bias_k / bias_v, static
keys and values, add_zero_attn, masks (bool: True = not attended; float: added to the scores),
dropout, out-projection. Inputs are sequence-first, (L, N, E), or unbatched (L, E)."""
from __future__ import annotations

import math
from typing import Optional, Tuple

from tinytorch._tensor.creation import zeros
from tinytorch._core.dtype import bool_
from tinytorch._ops.shape import cat
from tinytorch.nn.functional.activation import softmax
from tinytorch.nn.functional.attention import scaled_dot_product_attention
from tinytorch.nn.functional.dropout import dropout
from tinytorch.nn.functional.linear import linear
from tinytorch.nn.functional.padding import pad
from tinytorch._tensor.tensor import Tensor

__all__ = ["multi_head_attention_forward"]


def _canonical_mask(mask: Optional[Tensor], name: str, dtype) -> Optional[Tensor]:
    """Bool masks (True = do not attend) become additive float masks (-inf there, 0 elsewhere);
    float masks are cast to the query dtype."""
    if mask is None:
        return None
    if mask.dtype == bool_:
        return zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(mask, float("-inf"))
    if not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {name} are supported, got {mask.dtype}")
    return mask.to(dtype)


def _in_projection(query, key, value, in_proj_weight, in_proj_bias, use_separate_proj_weight, q_proj_weight,
                   k_proj_weight, v_proj_weight):
    e = query.shape[-1]
    b = in_proj_bias
    bq, bk, bv = (None, None, None) if b is None else (b[:e], b[e:2 * e], b[2 * e:])
    if not use_separate_proj_weight:
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        if query is key and key is value:          # self-attention: one GEMM
            return linear(query, in_proj_weight, b).chunk(3, dim=-1)
        wq, wk, wv = in_proj_weight[:e], in_proj_weight[e:2 * e], in_proj_weight[2 * e:]
    else:
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight is None")
        wq, wk, wv = q_proj_weight, k_proj_weight, v_proj_weight
    return linear(query, wq, bq), linear(key, wk, bk), linear(value, wv, bv)


def _static(t: Optional[Tensor], computed: Tensor, name: str, rows: int, head_dim: int) -> Tensor:
    """(N*H, S, hd): the given static keys/values, or the projected ones."""
    if t is None:
        return computed.reshape(computed.shape[0], rows, head_dim).transpose(0, 1)
    if t.shape[0] != rows:
        raise AssertionError(f"expecting {name}.size(0) of {rows}, but got {t.shape[0]}")
    if t.shape[2] != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {t.shape[2]}")
    return t


def multi_head_attention_forward(query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int,
                                 num_heads: int, in_proj_weight: Optional[Tensor], in_proj_bias: Optional[Tensor],
                                 bias_k: Optional[Tensor], bias_v: Optional[Tensor], add_zero_attn: bool,
                                 dropout_p: float, out_proj_weight: Tensor, out_proj_bias: Optional[Tensor],
                                 training: bool = True, key_padding_mask: Optional[Tensor] = None,
                                 need_weights: bool = True, attn_mask: Optional[Tensor] = None,
                                 use_separate_proj_weight: bool = False, q_proj_weight: Optional[Tensor] = None,
                                 k_proj_weight: Optional[Tensor] = None, v_proj_weight: Optional[Tensor] = None,
                                 static_k: Optional[Tensor] = None, static_v: Optional[Tensor] = None,
                                 average_attn_weights: bool = True,
                                 is_causal: bool = False) -> Tuple[Tensor, Optional[Tensor]]:
    r"""Forward method for MultiHeadAttention.

    Multi-head attention of (L, N, E) queries over (S, N, E_k) keys and (S, N, E_v) values (or
    unbatched (L, E), (S, E_k), (S, E_v)); returns (output (L, N, E), weights (N, L, S) averaged
    over heads, (N, H, L, S) with ``average_attn_weights=False``, or None).

    Args:
        query (Tensor): query tensor; shape :math:`(N, ..., L, E)`.
        key (Tensor): key tensor; shape :math:`(N, ..., S, E)`.
        value (float): the value to replace with.
        embed_dim_to_check (int): total dimension of the model.
        num_heads (int): number of parallel attention heads. Note that ``embed_dim`` will be split
            across ``num_heads`` (i.e. each head will have dimension ``embed_dim // num_heads``).
        in_proj_weight (Tensor): input projection weight, :math:`(3E, E)`.
        in_proj_bias (Tensor): input projection bias, :math:`(3E)`.
        bias_k (Tensor): bias of the key sequence to be added at dim=0, :math:`(1, 1, E)`.
        bias_v (Tensor): bias of the value sequence to be added at dim=0, :math:`(1, 1, E)`.
        add_zero_attn (bool): if specified, adds a new batch of zeros to the key and value sequences at
            dim=1.
        dropout_p (float): dropout probability; if greater than 0.0, dropout is applied.
        out_proj_weight (Tensor): the output projection weight, :math:`(E, E)`.
        out_proj_bias (Tensor): the output projection bias, :math:`(E)`.
        training (bool): apply the training-mode behaviour if ``True``. Default: ``True``
        key_padding_mask (Tensor, optional): if provided, specified padding elements in the key will be
            ignored by the attention (bool: ``True`` is ignored; float: added to the scores), :math:`(N,
            S)`. Default: ``None``
        need_weights (bool): output attn_output_weights. Default: ``True``
        attn_mask (Tensor, optional): attention mask; shape must be broadcastable to the shape of
            attention weights, :math:`(N,..., L, S)`. Two types of masks are supported: a boolean mask
            where a value of True indicates that the element *should* take part in attention, or a float
            mask of the same type as query, key, value that is added to the attention score. Default:
            ``None``
        use_separate_proj_weight (bool): the function accept the proj. weights for query, key, and value
            in different forms. If false, in_proj_weight will be used, which is a combination of
            q_proj_weight, k_proj_weight, v_proj_weight. Default: ``False``
        q_proj_weight (Tensor, optional): input projection weight of the query, :math:`(E, E)`. Default:
            ``None``
        k_proj_weight (Tensor, optional): input projection weight of the key, :math:`(E, kdim)`.
            Default: ``None``
        v_proj_weight (Tensor, optional): input projection weight of the value, :math:`(E, vdim)`.
            Default: ``None``
        static_k (Tensor, optional): static key used for attention operators, :math:`(N*num\_heads, S,
            E/num\_heads)`. Default: ``None``
        static_v (Tensor, optional): static value used for attention operators, :math:`(N*num\_heads, S,
            E/num\_heads)`. Default: ``None``
        average_attn_weights (bool): if ``True``, the returned ``attn_weights`` are averaged across
            heads; otherwise given per head. Default: ``True``
        is_causal (bool): if set to true, the attention masking is a lower triangular matrix when the
            mask is a square matrix. Default: ``False``"""
    batched = query.dim() == 3
    if query.dim() not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D "
                             f"query tensor")
    if key.dim() != query.dim() or value.dim() != query.dim():
        raise AssertionError(f"For {'batched' if batched else 'unbatched'} (3-D/2-D) `query`, expected `key` and "
                             f"`value` to be {query.dim()}-D but found {key.dim()}-D and {value.dim()}-D tensors "
                             f"respectively")
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use "
                           "nn.Transformer.generate_square_subsequent_mask to create this mask.")
    if not batched:
        same_kv = key is value
        query, key = query.unsqueeze(1), key.unsqueeze(1)
        value = key if same_kv else value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    L, N, E = query.shape
    S = key.shape[0]
    if E != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {E}")
    H = num_heads
    hd = E // H
    if hd * H != E:
        raise AssertionError(f"embed_dim {E} not divisible by num_heads {H}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {list(key.shape[:2])} do not match value's "
                                 f"{list(value.shape[:2])}")
    elif tuple(key.shape) != tuple(value.shape):
        raise AssertionError(f"key shape {list(key.shape)} does not match value shape {list(value.shape)}")
    dtype = query.dtype
    attn_mask = _canonical_mask(attn_mask, "attn_mask", dtype)
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", dtype)
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (L, S):
                raise RuntimeError(f"The shape of the 2D attn_mask is {list(attn_mask.shape)}, but should be "
                                   f"{[L, S]}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (N * H, L, S):
                raise RuntimeError(f"The shape of the 3D attn_mask is {list(attn_mask.shape)}, but should be "
                                   f"{[N * H, L, S]}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")

    q, k, v = _in_projection(query, key, value, in_proj_weight, in_proj_bias, use_separate_proj_weight,
                             q_proj_weight, k_proj_weight, v_proj_weight)
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = cat([k, bias_k.expand(1, N, E)], 0)
        v = cat([v, bias_v.expand(1, N, E)], 0)
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k is set but bias_v is None" if bias_k is not None else
                             "bias_v is set but bias_k is None")
    # (L, N, E) -> (N*H, L, hd)
    q = q.reshape(L, N * H, hd).transpose(0, 1)
    k = _static(static_k, k, "static_k", N * H, hd)
    v = _static(static_v, v, "static_v", N * H, hd)
    if add_zero_attn:
        zero_attn = zeros(N * H, 1, hd, dtype=k.dtype, device=k.device)
        k, v = cat([k, zero_attn], 1), cat([v, zero_attn], 1)
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))
    S2 = k.shape[1]
    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (N, S2):
            raise AssertionError(f"expecting key_padding_mask shape of {(N, S2)}, but got "
                                 f"{tuple(key_padding_mask.shape)}")
        kpm = key_padding_mask.reshape(N, 1, 1, S2).expand(N, H, 1, S2).reshape(N * H, 1, S2)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm

    p = dropout_p if training else 0.0
    if need_weights:
        scores = (q * (1.0 / math.sqrt(hd))) @ k.transpose(-2, -1)           # (N*H, L, S2)
        if attn_mask is not None:
            scores = scores + attn_mask
        weights = softmax(scores, dim=-1)
        if p > 0.0:
            weights = dropout(weights, p, True)
        out = weights @ v
    else:
        out = scaled_dot_product_attention(q, k, v, attn_mask, p)
    out = linear(out.transpose(0, 1).reshape(L * N, E), out_proj_weight, out_proj_bias).reshape(L, N, E)
    if not batched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    weights = weights.reshape(N, H, L, S2)
    if average_attn_weights:
        weights = weights.mean(dim=1)
    if not batched:
        weights = weights.squeeze(0)
    return out, weights
