"""``nn.Transformer`` and its encoder and decoder layers and stacks (PyTorch's submodule names and defaults)."""
from __future__ import annotations

import copy
from typing import Callable, Optional, Union

from tinytorch._tensor.creation import ones, zeros
from tinytorch._core.dtype import bool_, float32
from tinytorch.nn import functional as F
from tinytorch.nn.modules.attention import MultiheadAttention
from tinytorch.nn.modules._doc_notes import entries, common_notes, fill_doc
from tinytorch.nn.modules.container import ModuleList
from tinytorch.nn.modules.dropout import Dropout
from tinytorch.nn.modules.linear import Linear
from tinytorch.nn.modules.module import Module
from tinytorch.nn.modules.normalization import LayerNorm
from tinytorch._tensor.tensor import Tensor
from tinytorch.nn.common_types import _device_t, _dtype_t

# the Args of the encoder and decoder layers and of Transformer (PyTorch's words)
_feedforward_args = entries(
    "dim_feedforward (int): the dimension of the feedforward network model. Default: ``2048``",
    "dropout (float): dropout probability. Default: ``0.1``",
    """activation (str or Callable): the activation function of the intermediate layer, can be a string
            ("relu" or "gelu") or a unary callable. Default: ``'relu'``""")
_layer_options = entries(
    "layer_norm_eps (float): the eps value in layer normalization components. Default: ``1e-05``",
    """batch_first (bool): if ``True``, then the input and output tensors are provided as (batch, seq,
            feature). Default: ``False``""",
    """norm_first (bool): if ``True``, layer norm is done prior to attention and feedforward
            operations, respectively. Otherwise it's done after. Default: ``False``""",
    common_notes["bias"], common_notes["device"], common_notes["dtype"])
transformer_notes = {
    "feedforward_args": _feedforward_args,
    "layer_options": _layer_options,
    "layer_args": entries("d_model (int): the number of expected features in the encoder/decoder inputs.",
                          "nhead (int): the number of heads in the multiheadattention models.",
                          _feedforward_args, _layer_options),
}


def _get_activation_fn(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def generate_square_subsequent_mask(sz: int, device: _device_t = None, dtype: _dtype_t = None) -> Tensor:
    """A float (sz, sz) causal mask: 0 on and below the diagonal, -inf above (as nn.Transformer's)."""
    dtype = dtype or float32
    keep = ones(sz, sz, dtype=bool_, device=device).tril()
    return zeros(sz, sz, dtype=dtype, device=device).masked_fill(keep.logical_not(), float("-inf"))


class _LayerBase(Module):
    """What the encoder and decoder layers share: self-attention, the feed-forward block, norm1/2,
    dropout1/2 and the activation, under PyTorch's submodule names."""

    _decoder = False   # TransformerDecoderLayer: self-attention, then attention over the memory

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: Union[str, Callable[[Tensor], Tensor]] = "relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True, device: _device_t = None,
                 dtype: _dtype_t = None) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        decoder = self._decoder
        # (registered in PyTorch's order, so parameters() lists them in the same order)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw)
        if decoder:
            self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                     batch_first=batch_first, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        for i in range(1, 4 if decoder else 3):
            setattr(self, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        for i in range(1, 4 if decoder else 3):
            setattr(self, f"dropout{i}", Dropout(dropout))
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        if not callable(activation):
            raise TypeError(f"activation must be 'relu', 'gelu' or a callable, got {activation!r}")
        self.activation = activation
        self.batch_first = batch_first

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal: bool):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff(self, x):
        return self.linear2(self.dropout(self.activation(self.linear1(x))))


@fill_doc(transformer_notes)
class TransformerEncoderLayer(_LayerBase):
    """Self-attention then a feed-forward block, each with a residual connection and LayerNorm
    (post-norm by default; norm_first=True for pre-norm).

    Args:
        {layer_args}"""

    def forward(self, src: Tensor, src_mask: Optional[Tensor] = None, src_key_padding_mask: Optional[Tensor] = None,
                is_causal: bool = False) -> Tensor:
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _ff_block(self, x):
        return self.dropout2(self._ff(x))


class _LayerStack(Module):
    """TransformerEncoder and TransformerDecoder: num_layers deep copies of one layer, then an optional norm."""

    def __init__(self, layer: Module, num_layers: int, norm: Optional[Module]) -> None:
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm


class TransformerEncoder(_LayerStack):
    """A stack of num_layers deep copies of encoder_layer, then an optional final norm.

    Args:
        encoder_layer (Module): an instance of the TransformerEncoderLayer() class.
        num_layers (int): the number of sub-layers in the stack.
        norm (Module, optional): the layer normalization component. Default: ``None``
        enable_nested_tensor (bool): accepted for PyTorch compatibility (tinytorch has no nested
            tensors). Default: ``True``
        mask_check (bool): accepted for PyTorch compatibility. Default: ``True``"""

    def __init__(self, encoder_layer: Module, num_layers: int, norm: Optional[Module] = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True) -> None:
        super().__init__(encoder_layer, num_layers, norm)

    def forward(self, src: Tensor, mask: Optional[Tensor] = None, src_key_padding_mask: Optional[Tensor] = None,
                is_causal: Optional[bool] = None) -> Tensor:
        # is_causal is only a hint here: the mask itself is always applied
        is_causal = bool(is_causal)
        out = src
        for layer in self.layers:
            out = layer(out, src_mask=mask, src_key_padding_mask=src_key_padding_mask, is_causal=is_causal)
        if self.norm is not None:
            out = self.norm(out)
        return out


@fill_doc(transformer_notes)
class TransformerDecoderLayer(_LayerBase):
    """Self-attention over the target, attention over the encoder's memory, then a feed-forward
    block; each with a residual connection and LayerNorm (post-norm; norm_first=True for pre-norm).

    Args:
        {layer_args}"""

    _decoder = True

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Optional[Tensor] = None,
                memory_mask: Optional[Tensor] = None, tgt_key_padding_mask: Optional[Tensor] = None,
                memory_key_padding_mask: Optional[Tensor] = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Tensor:
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal: bool):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                need_weights=False, is_causal=is_causal)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        return self.dropout3(self._ff(x))


class TransformerDecoder(_LayerStack):
    """A stack of num_layers deep copies of decoder_layer, then an optional final norm.

    Args:
        decoder_layer (Module): an instance of the TransformerDecoderLayer() class.
        num_layers (int): the number of sub-layers in the stack.
        norm (Module, optional): the layer normalization component. Default: ``None``"""

    def __init__(self, decoder_layer: Module, num_layers: int, norm: Optional[Module] = None) -> None:
        super().__init__(decoder_layer, num_layers, norm)

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Optional[Tensor] = None,
                memory_mask: Optional[Tensor] = None, tgt_key_padding_mask: Optional[Tensor] = None,
                memory_key_padding_mask: Optional[Tensor] = None, tgt_is_causal: Optional[bool] = None,
                memory_is_causal: bool = False) -> Tensor:
        out = tgt
        for layer in self.layers:
            out = layer(out, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask,
                        bool(tgt_is_causal), memory_is_causal)
        return out if self.norm is None else self.norm(out)


@fill_doc(transformer_notes)
class Transformer(Module):
    """The encoder-decoder model of "Attention Is All You Need", with PyTorch's defaults and names.

    Args:
        d_model (int): the number of expected features in the encoder/decoder inputs. Default: ``512``
        nhead (int): the number of heads in the multiheadattention models. Default: ``8``
        num_encoder_layers (int): the number of sub-encoder-layers in the encoder. Default: ``6``
        num_decoder_layers (int): the number of sub-decoder-layers in the decoder. Default: ``6``
        {feedforward_args}
        custom_encoder (Module, optional): custom encoder. Default: ``None``
        custom_decoder (Module, optional): custom decoder. Default: ``None``
        {layer_options}"""

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6, num_decoder_layers: int = 6,
                 dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: Union[str, Callable[[Tensor], Tensor]] = "relu", custom_encoder: Optional[Module] = None,
                 custom_decoder: Optional[Module] = None, layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: _device_t = None, dtype: _dtype_t = None) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        layer_kw = dict(dim_feedforward=dim_feedforward, dropout=dropout, activation=activation,
                        layer_norm_eps=layer_norm_eps, batch_first=batch_first, norm_first=norm_first, bias=bias, **kw)
        self.encoder = custom_encoder or TransformerEncoder(
            TransformerEncoderLayer(d_model, nhead, **layer_kw), num_encoder_layers,
            LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        self.decoder = custom_decoder or TransformerDecoder(
            TransformerDecoderLayer(d_model, nhead, **layer_kw), num_decoder_layers,
            LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Optional[Tensor] = None, tgt_mask: Optional[Tensor] = None,
                memory_mask: Optional[Tensor] = None, src_key_padding_mask: Optional[Tensor] = None,
                tgt_key_padding_mask: Optional[Tensor] = None, memory_key_padding_mask: Optional[Tensor] = None,
                src_is_causal: Optional[bool] = None, tgt_is_causal: Optional[bool] = None,
                memory_is_causal: bool = False) -> Tensor:
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask,
                            tgt_is_causal, memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: _device_t = None, dtype: _dtype_t = None) -> Tensor:
        return generate_square_subsequent_mask(sz, device, dtype)
