"""nn.TransformerDecoderLayer, TransformerDecoder and Transformer: PyTorch's parameter names, the
documented post-/pre-norm wiring rebuilt from the layer's own submodules, causality under the
subsequent mask, key padding masks, and gradients."""
import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
from tinytorch.autograd import gradcheck
from support.numeric import assert_close


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_wiring(norm_first):
    tt.manual_seed(0)
    layer = nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=0.0, norm_first=norm_first).double()
    x = tt.randn(5, 3, 8, dtype=tt.float64)
    mem = tt.randn(4, 3, 8, dtype=tt.float64)
    mask = nn.Transformer.generate_square_subsequent_mask(5, dtype=tt.float64)

    def sa(v):
        return layer.self_attn(v, v, v, attn_mask=mask, need_weights=False)[0]

    def ca(v):
        return layer.multihead_attn(v, mem, mem, need_weights=False)[0]

    def ff(v):
        return layer.linear2(layer.linear1(v).relu())
    if norm_first:
        h = x + sa(layer.norm1(x))
        h = h + ca(layer.norm2(h))
        ref = h + ff(layer.norm3(h))
    else:
        h = layer.norm1(x + sa(x))
        h = layer.norm2(h + ca(h))
        ref = layer.norm3(h + ff(h))
    assert_close(layer(x, mem, tgt_mask=mask), ref.detach().numpy())


def test_causal_mask_and_padding():
    tt.manual_seed(1)
    model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=2, dim_feedforward=16,
                           dropout=0.0, batch_first=True).double().eval()
    src = tt.randn(2, 6, 8, dtype=tt.float64)
    tgt = tt.randn(2, 5, 8, dtype=tt.float64)
    mask = model.generate_square_subsequent_mask(5, dtype=tt.float64)
    out = model(src, tgt, tgt_mask=mask).detach().numpy()
    tgt2 = tgt.clone()
    tgt2[:, 3:] = tt.randn(2, 2, 8, dtype=tt.float64)       # change the future: the past is untouched
    out2 = model(src, tgt2, tgt_mask=mask).detach().numpy()
    np.testing.assert_allclose(out2[:, :3], out[:, :3], rtol=1e-12)
    assert np.abs(out2[:, 3:] - out[:, 3:]).max() > 1e-3
    pad = tt.tensor([[False] * 5 + [True], [False] * 6])    # a padded source position is ignored
    src2 = src.clone()
    src2[0, 5] = 100.0
    a = model(src, tgt, memory_key_padding_mask=pad, src_key_padding_mask=pad).detach().numpy()
    b = model(src2, tgt, memory_key_padding_mask=pad, src_key_padding_mask=pad).detach().numpy()
    np.testing.assert_allclose(b[0], a[0], rtol=1e-10)


def test_parameter_names_and_gradients():
    model = nn.Transformer(d_model=4, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=8,
                           dropout=0.0).double()
    names = set(model.state_dict())
    for key in ("encoder.layers.0.self_attn.in_proj_weight", "encoder.norm.weight",
                "decoder.layers.0.multihead_attn.out_proj.weight", "decoder.layers.0.norm3.bias",
                "decoder.layers.0.linear2.weight", "decoder.norm.bias"):
        assert key in names, key
    src = tt.randn(3, 1, 4, dtype=tt.float64, requires_grad=True)
    tgt = tt.randn(2, 1, 4, dtype=tt.float64, requires_grad=True)
    assert gradcheck(lambda s, t: model(s, t), (src, tgt))
