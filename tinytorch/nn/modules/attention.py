"""``nn.MultiheadAttention`` with PyTorch's parameter names, masks and shapes; the computation is
``F.multi_head_attention_forward`` (nn/functional/multi_head_attention.py)."""
from __future__ import annotations

from typing import Optional, Tuple

from tinytorch._tensor.creation import empty
from tinytorch.nn import functional as F
from tinytorch.nn import init
from tinytorch.nn.modules.linear import Linear, NonDynamicallyQuantizableLinear  # noqa: F401
from tinytorch.nn.modules.module import Module
from tinytorch.nn.parameter import Parameter
from tinytorch._tensor.tensor import Tensor
from tinytorch.nn.common_types import _device_t, _dtype_t


class MultiheadAttention(Module):
    """Allows the model to jointly attend to information from different representation subspaces.

    Multi-head attention: softmax(Q K^T / sqrt(head_dim) + masks) V per head, then out_proj.

    Inputs are (L, N, E) (or (N, L, E) with batch_first=True, or unbatched (L, E)). Boolean masks mark
    positions that may NOT be attended (True = masked), float masks are added to the scores, as in PyTorch.
    forward returns (attn_output, attn_weights) with weights (N, L, S) averaged over heads, (N, H, L, S)
    with average_attn_weights=False, or None with need_weights=False.

    Args:
        embed_dim (int): total dimension of the model.
        num_heads (int): number of parallel attention heads. Note that ``embed_dim`` will be split
            across ``num_heads`` (i.e. each head will have dimension ``embed_dim // num_heads``).
        dropout (float): dropout probability. Default: ``0.0``
        bias (bool): if set to ``False``, the layer will not learn an additive bias. Default: ``True``
        add_bias_kv (bool): if specified, adds bias to the key and value sequences at dim=0. Default:
            ``False``
        add_zero_attn (bool): if specified, adds a new batch of zeros to the key and value sequences at
            dim=1. Default: ``False``
        kdim (int, optional): total number of features for keys. Default: ``None`` (uses
            ``kdim=embed_dim``).
        vdim (int, optional): total number of features for values. Default: ``None`` (uses
            ``vdim=embed_dim``).
        batch_first (bool): if ``True``, then the input and output tensors are provided as (batch, seq,
            feature). Default: ``False``
        device (device, optional): the device of the parameters and buffers. Default: ``None``
        dtype (dtype, optional): the dtype of the parameters and buffers. Default: ``None``"""

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
        if key_padding_mask is not None:
            n, src = (query.shape[1], key.shape[0]) if batched else (None, key.shape[0])
            want = [n, src] if batched else [src]
            if list(key_padding_mask.shape) != want:
                raise RuntimeError(f"{name}: expected key_padding_mask of shape {want}, "
                                   f"got {list(key_padding_mask.shape)}")
        out, weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias, self.bias_k,
            self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias,
            training=self.training, key_padding_mask=key_padding_mask, need_weights=need_weights,
            attn_mask=attn_mask, use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        if self.batch_first and batched:
            out = out.transpose(1, 0)
        return out, weights
