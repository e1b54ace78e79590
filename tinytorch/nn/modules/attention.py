"""``nn.MultiheadAttention`` with PyTorch's parameter names, masks and shapes."""
from __future__ import annotations

import math
from typing import Optional, Tuple

from tinytorch._creation import empty, zeros
from tinytorch._dtype import bool_
from tinytorch._functional import cat
from tinytorch.nn import functional as F
from tinytorch.nn import init
from tinytorch.nn.modules.linear import Linear, NonDynamicallyQuantizableLinear  # noqa: F401
from tinytorch.nn.modules.module import Module
from tinytorch.nn.parameter import Parameter
from tinytorch.tensor import Tensor
from tinytorch.nn.common_types import _device_t, _dtype_t


def _canonical_mask(mask, name: str, dtype):
    """Bool masks (True = do not attend) become additive float masks (-inf there, 0 elsewhere);
    float masks are cast to the query dtype."""
    if mask is None:
        return None
    if mask.dtype == bool_:
        return zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(mask, float("-inf"))
    if not mask.dtype.is_floating_point:
        raise AssertionError(f"only bool and floating types of {name} are supported, got {mask.dtype}")
    return mask.to(dtype)


class MultiheadAttention(Module):
    """Multi-head attention: softmax(Q K^T / sqrt(head_dim) + masks) V per head, then out_proj.

    Inputs are (L, N, E) (or (N, L, E) with batch_first=True, or unbatched (L, E)). Boolean masks mark
    positions that may NOT be attended (True = masked), float masks are added to the scores, as in PyTorch.
    forward returns (attn_output, attn_weights) with weights (N, L, S) averaged over heads, (N, H, L, S)
    with average_attn_weights=False, or None with need_weights=False."""

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: Optional[int] = None,
                 vdim: Optional[int] = None, batch_first: bool = False, device: _device_t = None,
                 dtype: _dtype_t = None) -> None:
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} "
                             f"and num_heads={num_heads} instead")
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads, self.dropout, self.batch_first = num_heads, dropout, batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        kw = {"dtype": dtype, "device": device}
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(empty(embed_dim, embed_dim, **kw))
            self.k_proj_weight = Parameter(empty(embed_dim, self.kdim, **kw))
            self.v_proj_weight = Parameter(empty(embed_dim, self.vdim, **kw))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim, **kw))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(empty(1, 1, embed_dim, **kw))
            self.bias_v = Parameter(empty(1, 1, embed_dim, **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    # ------------------------------------------------------------------ forward
    def _check_inputs(self, query, key, value, batched: bool) -> None:
        name = type(self).__name__
        rank = 3 if batched else 2
        for what, t, e in (("query", query, self.embed_dim), ("key", key, self.kdim), ("value", value, self.vdim)):
            if t.dim() != rank:
                raise ValueError(f"{name}: expected {what} to be {rank}D like query "
                                 f"({'batched' if batched else 'unbatched'}), got shape {list(t.shape)}")
            if t.shape[-1] != e:
                raise ValueError(f"{name}: expected {what} with embedding dim {e} (last dim), "
                                 f"got shape {list(t.shape)}")
        if tuple(key.shape[:-1]) != tuple(value.shape[:-1]):
            raise ValueError(f"{name}: key shape {list(key.shape)} does not match value shape {list(value.shape)}")
        if batched and key.shape[1] != query.shape[1]:
            raise ValueError(f"{name}: key batch size {key.shape[1]} does not match query batch size "
                             f"{query.shape[1]} (shapes {list(query.shape)} and {list(key.shape)})")

    def _in_projection(self, query, key, value):
        E = self.embed_dim
        b = self.in_proj_bias
        bq, bk, bv = (None, None, None) if b is None else (b[:E], b[E:2 * E], b[2 * E:])
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            if query is key and key is value:
                return F.linear(query, w, b).chunk(3, dim=-1)
            wq, wk, wv = w[:E], w[E:2 * E], w[2 * E:]
        else:
            wq, wk, wv = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
        return F.linear(query, wq, bq), F.linear(key, wk, bk), F.linear(value, wv, bv)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Optional[Tensor] = None,
                need_weights: bool = True, attn_mask: Optional[Tensor] = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> Tuple[Tensor, Optional[Tensor]]:
        name = type(self).__name__
        batched = query.dim() == 3
        if query.dim() not in (2, 3):
            raise ValueError(f"{name}: expected query to be 2D (unbatched) or 3D (batched), "
                             f"got shape {list(query.shape)}")
        if self.batch_first and batched:
            # (N, L, E) -> (L, N, E), keeping q is k is v for the packed projection
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = query.transpose(1, 0), key.transpose(1, 0)
                    value = key
            else:
                query, key, value = (t.transpose(1, 0) for t in (query, key, value))
        self._check_inputs(query, key, value, batched)
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
        H, hd = self.num_heads, self.head_dim
        dtype = query.dtype
        attn_mask = _canonical_mask(attn_mask, "attn_mask", dtype)
        key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", dtype)
        if attn_mask is not None:
            if attn_mask.dim() == 2:
                if tuple(attn_mask.shape) != (L, S):
                    raise RuntimeError(f"The shape of the 2D attn_mask is {list(attn_mask.shape)}, "
                                       f"but should be {[L, S]}.")
                attn_mask = attn_mask.unsqueeze(0)
            elif attn_mask.dim() == 3:
                if tuple(attn_mask.shape) != (N * H, L, S):
                    raise RuntimeError(f"The shape of the 3D attn_mask is {list(attn_mask.shape)}, "
                                       f"but should be {[N * H, L, S]}.")
            else:
                raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")
        if key_padding_mask is not None and tuple(key_padding_mask.shape) != (N, S):
            raise RuntimeError(f"{name}: expected key_padding_mask of shape {[N, S]}, "
                               f"got {list(key_padding_mask.shape)}")

        q, k, v = self._in_projection(query, key, value)
        if self.bias_k is not None:
            k = cat([k, self.bias_k.expand(1, N, E)], 0)
            v = cat([v, self.bias_v.expand(1, N, E)], 0)
            if attn_mask is not None:
                attn_mask = F.pad(attn_mask, (0, 1))
            if key_padding_mask is not None:
                key_padding_mask = F.pad(key_padding_mask, (0, 1))
        # (L, N, E) -> (N*H, L, hd)
        q = q.reshape(L, N * H, hd).transpose(0, 1)
        k = k.reshape(k.shape[0], N * H, hd).transpose(0, 1)
        v = v.reshape(v.shape[0], N * H, hd).transpose(0, 1)
        if self.add_zero_attn:
            zero_attn = zeros(N * H, 1, hd, dtype=k.dtype, device=k.device)
            k, v = cat([k, zero_attn], 1), cat([v, zero_attn], 1)
            if attn_mask is not None:
                attn_mask = F.pad(attn_mask, (0, 1))
            if key_padding_mask is not None:
                key_padding_mask = F.pad(key_padding_mask, (0, 1))
        S2 = k.shape[1]
        if key_padding_mask is not None:
            kpm = key_padding_mask.reshape(N, 1, 1, S2).expand(N, H, 1, S2).reshape(N * H, 1, S2)
            attn_mask = kpm if attn_mask is None else attn_mask + kpm

        dropout_p = self.dropout if self.training else 0.0
        if need_weights:
            scores = (q * (1.0 / math.sqrt(hd))) @ k.transpose(-2, -1)      # (N*H, L, S2)
            if attn_mask is not None:
                scores = scores + attn_mask
            weights = F.softmax(scores, dim=-1)
            if dropout_p > 0.0:
                weights = F.dropout(weights, dropout_p, True)
            out = weights @ v
        else:
            out = F.scaled_dot_product_attention(q, k, v, attn_mask, dropout_p)
        out = out.transpose(0, 1).reshape(L * N, E)                         # (L, N, E) flattened
        out = self.out_proj(out).reshape(L, N, E)

        if self.batch_first and batched:
            out = out.transpose(1, 0)
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
