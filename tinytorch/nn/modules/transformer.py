"""``nn.TransformerEncoderLayer`` and ``nn.TransformerEncoder`` (PyTorch's submodule names and defaults)."""
from __future__ import annotations

import copy

import tinytorch
from tinytorch.nn import functional as F
from tinytorch.nn.modules.attention import MultiheadAttention
from tinytorch.nn.modules.container import ModuleList
from tinytorch.nn.modules.linear import Linear
from tinytorch.nn.modules.misc import Dropout
from tinytorch.nn.modules.module import Module
from tinytorch.nn.modules.normalization import LayerNorm


def _get_activation_fn(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def generate_square_subsequent_mask(sz: int, device=None, dtype=None):
    """A float (sz, sz) causal mask: 0 on and below the diagonal, -inf above (as nn.Transformer's)."""
    dtype = dtype or tinytorch.float32
    keep = tinytorch.ones(sz, sz, dtype=tinytorch.bool, device=device).tril()
    return tinytorch.zeros(sz, sz, dtype=dtype, device=device).masked_fill(keep.logical_not(), float("-inf"))


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block, each with a residual connection and LayerNorm
    (post-norm by default; norm_first=True for pre-norm)."""

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation="relu", layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        if not callable(activation):
            raise TypeError(f"activation must be 'relu', 'gelu' or a callable, got {activation!r}")
        self.activation = activation
        self.batch_first = batch_first

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal: bool = False):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal: bool):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerEncoder(Module):
    """A stack of num_layers deep copies of encoder_layer, then an optional final norm."""

    def __init__(self, encoder_layer: Module, num_layers: int, norm=None, enable_nested_tensor: bool = True,
                 mask_check: bool = True) -> None:
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        # is_causal is only a hint here: the mask itself is always applied
        is_causal = bool(is_causal)
        out = src
        for layer in self.layers:
            out = layer(out, src_mask=mask, src_key_padding_mask=src_key_padding_mask, is_causal=is_causal)
        if self.norm is not None:
            out = self.norm(out)
        return out
