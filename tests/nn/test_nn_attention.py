"""nn attention layers against float64 numpy references: MultiheadAttention (masks, batch_first,
unbatched, dropout) and TransformerEncoder(Layer). The other layers are in test_nn_layers.py."""
import math

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
import tinytorch.nn.functional as F
from support.numeric import assert_close, make, to_numpy
from test_nn_layers import P, layer_norm_ref, softmax_ref


# ------------------------------------------------------------------ numpy reference

def mha_ref(q, k, v, m, H, attn_mask=None, kpm=None):
    """q (L, N, E), k/v (S, N, E); attn_mask (L, S) bool (True = masked) or float (added);
    kpm (N, S) bool. Returns the output and head-averaged weights (N, L, S)."""
    E = q.shape[-1]
    hd = E // H
    W, b = P(m, "in_proj_weight"), P(m, "in_proj_bias")
    Q, K, V = q @ W[:E].T + b[:E], k @ W[E:2 * E].T + b[E:2 * E], v @ W[2 * E:].T + b[2 * E:]
    L, N, S = q.shape[0], q.shape[1], k.shape[0]
    out = np.zeros((L, N, E))
    weights = np.zeros((N, H, L, S))
    for n in range(N):
        for h in range(H):
            sl = slice(h * hd, (h + 1) * hd)
            s = Q[:, n, sl] @ K[:, n, sl].T / math.sqrt(hd)
            if attn_mask is not None:
                s = np.where(attn_mask, -np.inf, s) if attn_mask.dtype == bool else s + attn_mask
            if kpm is not None:
                s = np.where(kpm[n][None, :], -np.inf, s)
            a = softmax_ref(s)
            weights[n, h] = a
            out[:, n, sl] = a @ V[:, n, sl]
    out = out @ P(m.out_proj, "weight").T + P(m.out_proj, "bias")
    return out, weights


# ------------------------------------------------------------------ attention

@pytest.mark.parametrize("mask_kind", ["none", "bool", "float", "kpm", "bool+kpm"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_multihead_attention_vs_numpy(mask_kind, batch_first):
    tt.manual_seed(1)
    E, H, L, S, N = 8, 2, 3, 4, 2
    m = nn.MultiheadAttention(E, H, batch_first=batch_first).double()
    with tt.no_grad():
        m.in_proj_bias.uniform_(-0.5, 0.5)
        m.out_proj.bias.uniform_(-0.5, 0.5)
    q, qr = make((L, N, E), "float64", seed=1)
    k, kr = make((S, N, E), "float64", seed=2)
    v, vr = make((S, N, E), "float64", seed=3)
    rng = np.random.default_rng(0)
    am = kpm = None
    if mask_kind in ("bool", "bool+kpm"):
        am = rng.random((L, S)) > 0.6
        am[:, 0] = False
    elif mask_kind == "float":
        am = rng.normal(size=(L, S))
    if mask_kind in ("kpm", "bool+kpm"):
        kpm = np.array([[False, False, True, True], [False, True, False, False]])
    ref, wref = mha_ref(qr, kr, vr, m, H, am, kpm)
    args = [q, k, v]
    if batch_first:
        args = [t.transpose(0, 1) for t in args]
    kw = {}
    if am is not None:
        kw["attn_mask"] = tt.tensor(am)
    if kpm is not None:
        kw["key_padding_mask"] = tt.tensor(kpm)
    out, w = m(*args, **kw)
    assert_close(out, ref.transpose(1, 0, 2) if batch_first else ref)
    assert_close(w, wref.mean(1))
    _, w_all = m(*args, average_attn_weights=False, **kw)
    assert_close(w_all, wref)
    out2, none = m(*args, need_weights=False, **kw)
    assert none is None
    assert_close(out2, out)


def test_multihead_attention_self_unbatched_and_variants():
    E, H = 6, 3
    m = nn.MultiheadAttention(E, H).double()
    x, xr = make((4, E), "float64")
    ref, wref = mha_ref(xr[:, None], xr[:, None], xr[:, None], m, H)
    out, w = m(x, x, x)
    assert out.shape == (4, E) and w.shape == (4, 4)
    assert_close(out, ref[:, 0])
    assert_close(w, wref[0].mean(0))
    # state-dict names match PyTorch's
    assert list(m.state_dict()) == ["in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"]
    m2 = nn.MultiheadAttention(E, H, kdim=4, vdim=5, add_bias_kv=True, bias=False)
    assert list(m2.state_dict()) == ["q_proj_weight", "k_proj_weight", "v_proj_weight", "bias_k", "bias_v",
                                     "out_proj.weight"]
    q, k, v = tt.randn(3, 2, E), tt.randn(5, 2, 4), tt.randn(5, 2, 5)
    out, w = m2(q, k, v)
    assert out.shape == (3, 2, E) and w.shape == (2, 3, 6)  # bias_k adds one key
    m3 = nn.MultiheadAttention(E, H, add_zero_attn=True)
    assert m3(q, q, q)[1].shape == (2, 3, 4)
    # causal hint needs a mask; with it, the mask decides
    with pytest.raises(RuntimeError, match="attn_mask"):
        m(x, x, x, is_causal=True)
    causal = tt.tensor(np.triu(np.ones((4, 4), bool), 1))
    ref, _ = mha_ref(xr[:, None], xr[:, None], xr[:, None], m, H, np.triu(np.ones((4, 4), bool), 1))
    assert_close(m(x, x, x, attn_mask=causal, is_causal=True)[0], ref[:, 0])


def test_multihead_attention_dropout_only_in_training():
    tt.manual_seed(0)
    m = nn.MultiheadAttention(4, 2, dropout=0.5)
    x = tt.randn(5, 1, 4)
    w_train = to_numpy(m(x, x, x)[1])
    m.eval()
    w_eval = to_numpy(m(x, x, x)[1])
    np.testing.assert_allclose(w_eval.sum(-1), 1.0, rtol=1e-5)
    assert not np.allclose(w_train, w_eval)


def test_multihead_attention_bad_inputs():
    m = nn.MultiheadAttention(4, 2)
    with pytest.raises(ValueError, match=r"MultiheadAttention.*embedding dim 4.*\[3, 2, 5\]"):
        m(tt.zeros(3, 2, 5), tt.zeros(3, 2, 5), tt.zeros(3, 2, 5))
    with pytest.raises(ValueError, match="MultiheadAttention"):
        m(tt.zeros(3, 2, 4), tt.zeros(3, 4), tt.zeros(3, 4))
    with pytest.raises(RuntimeError, match="2D attn_mask"):
        m(tt.zeros(3, 2, 4), tt.zeros(5, 2, 4), tt.zeros(5, 2, 4), attn_mask=tt.zeros(3, 3))
    with pytest.raises(AssertionError, match="divisible"):
        nn.MultiheadAttention(5, 2)


# ------------------------------------------------------------------ transformer

def encoder_layer_ref(xr, layer, H, norm_first, act):
    """xr (L, N, E), eval mode (no dropout)."""
    def sa(z):
        return mha_ref(z, z, z, layer.self_attn, H)[0]

    def ff(z):
        h = act(z @ P(layer.linear1, "weight").T + P(layer.linear1, "bias"))
        return h @ P(layer.linear2, "weight").T + P(layer.linear2, "bias")

    def n1(z):
        return layer_norm_ref(z, P(layer.norm1, "weight"), P(layer.norm1, "bias"))

    def n2(z):
        return layer_norm_ref(z, P(layer.norm2, "weight"), P(layer.norm2, "bias"))
    if norm_first:
        xr = xr + sa(n1(xr))
        return xr + ff(n2(xr))
    xr = n1(xr + sa(xr))
    return n2(xr + ff(xr))


@pytest.mark.parametrize("norm_first,activation", [(False, "relu"), (True, "gelu")])
def test_transformer_encoder_layer_vs_numpy(norm_first, activation):
    tt.manual_seed(2)
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, activation=activation, norm_first=norm_first)
    layer.double().eval()
    with tt.no_grad():
        for nm in (layer.norm1, layer.norm2):
            nm.weight.uniform_(0.5, 1.5)
            nm.bias.uniform_(-0.5, 0.5)
    x, xr = make((3, 2, 8), "float64")
    act = (lambda z: np.maximum(z, 0)) if activation == "relu" else \
        (lambda z: 0.5 * z * (1 + np.vectorize(math.erf)(z / math.sqrt(2))))
    y = layer(x)
    assert y.shape == (3, 2, 8)
    assert_close(y, encoder_layer_ref(xr, layer, 2, norm_first, act))


def test_transformer_encoder_layer_structure_and_masks():
    layer = nn.TransformerEncoderLayer(8, 2, batch_first=True)
    assert [k for k, _ in layer.named_children()] == ["self_attn", "linear1", "dropout", "linear2", "norm1",
                                                      "norm2", "dropout1", "dropout2"]
    assert layer.linear1.out_features == 2048 and layer.dropout.p == 0.1 and layer.norm1.eps == 1e-5
    assert layer.activation is F.relu
    layer.eval()
    x = tt.randn(2, 5, 8)
    mask = nn.modules.transformer.generate_square_subsequent_mask(5)
    kpm = tt.tensor([[False] * 4 + [True], [False] * 5])
    y = layer(x, src_mask=mask, src_key_padding_mask=kpm, is_causal=True)
    assert y.shape == (2, 5, 8)
    # causal: the first position's output only depends on the first input position
    x2 = x.clone()
    x2[:, 1:] = 0.0
    assert_close(layer(x2, src_mask=mask)[:, 0], to_numpy(layer(x, src_mask=mask)[:, 0]), "float32")
    custom = nn.TransformerEncoderLayer(8, 2, 16, activation=nn.GELU())
    assert isinstance(custom.activation, nn.GELU)
    with pytest.raises(RuntimeError, match="relu/gelu"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")


def test_transformer_encoder_stack_is_deep_copied():
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0).double()
    enc = nn.TransformerEncoder(layer, num_layers=2, norm=nn.LayerNorm(8).double()).eval()
    assert enc.layers[0] is not layer and enc.layers[0].linear1.weight is not enc.layers[1].linear1.weight
    assert len(list(enc.parameters())) == 2 * len(list(layer.parameters())) + 2
    assert list(enc.state_dict())[0] == "layers.0.self_attn.in_proj_weight"
    with tt.no_grad():
        enc.layers[1].linear2.bias.add_(1.0)
    assert not np.allclose(to_numpy(enc.layers[0].linear2.bias), to_numpy(enc.layers[1].linear2.bias))
    x, xr = make((3, 2, 8), "float64")
    relu = lambda z: np.maximum(z, 0)  # noqa: E731
    ref = encoder_layer_ref(encoder_layer_ref(xr, enc.layers[0], 2, False, relu), enc.layers[1], 2, False, relu)
    assert_close(enc(x), layer_norm_ref(ref, P(enc.norm, "weight"), P(enc.norm, "bias")))
