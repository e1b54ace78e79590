"""F.multi_head_attention_forward (nn.MultiheadAttention's computation) against a float64 numpy
reference: packed and separate projections, bias_k / bias_v, add_zero_attn, bool and float masks,
static keys and values, unbatched input, per-head weights; gradcheck; errors as PyTorch's."""
import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
import tinytorch.nn.functional as F
from tinytorch.autograd import gradcheck
from support.numeric import assert_close, make


def mha_ref(q, k, v, H, w_q, w_k, w_v, b_in, w_o, b_o, bias_k=None, bias_v=None, add_zero_attn=False,
            key_padding_mask=None, attn_mask=None, static_k=None, static_v=None):
    """(L, N, E) float64 multi-head attention; masks additive (-inf where a bool mask is True)."""
    L, N, E = q.shape
    hd = E // H
    bq, bk, bv = (np.zeros(E),) * 3 if b_in is None else (b_in[:E], b_in[E:2 * E], b_in[2 * E:])
    Q, K, V = q @ w_q.T + bq, k @ w_k.T + bk, v @ w_v.T + bv
    mask = None if attn_mask is None else np.where(attn_mask, -np.inf, 0.0) if attn_mask.dtype == bool \
        else attn_mask
    kpm = None if key_padding_mask is None else np.where(key_padding_mask, -np.inf, 0.0)
    if bias_k is not None:
        K = np.concatenate([K, np.broadcast_to(bias_k, (1, N, E))])
        V = np.concatenate([V, np.broadcast_to(bias_v, (1, N, E))])
        mask = None if mask is None else np.pad(mask, [(0, 0), (0, 1)])
        kpm = None if kpm is None else np.pad(kpm, [(0, 0), (0, 1)])
    Qh = Q.reshape(L, N * H, hd).transpose(1, 0, 2)
    Kh = K.reshape(K.shape[0], N * H, hd).transpose(1, 0, 2) if static_k is None else static_k
    Vh = V.reshape(V.shape[0], N * H, hd).transpose(1, 0, 2) if static_v is None else static_v
    if add_zero_attn:
        Kh = np.concatenate([Kh, np.zeros((N * H, 1, hd))], 1)
        Vh = np.concatenate([Vh, np.zeros((N * H, 1, hd))], 1)
        mask = None if mask is None else np.pad(mask, [(0, 0), (0, 1)])
        kpm = None if kpm is None else np.pad(kpm, [(0, 0), (0, 1)])
    scores = Qh @ Kh.transpose(0, 2, 1) / np.sqrt(hd)                      # (N*H, L, S)
    if mask is not None:
        scores = scores + mask
    if kpm is not None:
        scores = scores + np.repeat(kpm, H, axis=0)[:, None, :]
    w = np.exp(scores - scores.max(-1, keepdims=True))
    w = w / w.sum(-1, keepdims=True)
    out = (w @ Vh).transpose(1, 0, 2).reshape(L, N, E) @ w_o.T + b_o
    return out, w.reshape(N, H, L, -1)


def _params(E, kdim, vdim, seed):
    rng = np.random.default_rng(seed)
    return dict(w_q=rng.standard_normal((E, E)) * 0.3, w_k=rng.standard_normal((E, kdim)) * 0.3,
                w_v=rng.standard_normal((E, vdim)) * 0.3, b_in=rng.standard_normal(3 * E) * 0.1,
                w_o=rng.standard_normal((E, E)) * 0.3, b_o=rng.standard_normal(E) * 0.1)


T = lambda a: tt.tensor(np.ascontiguousarray(a))   # noqa: E731


@pytest.mark.parametrize("variant", ["packed", "separate", "bias_kv_zero_attn", "static"])
def test_matches_numpy_reference(variant):
    L, S, N, E, H = 3, 5, 2, 8, 2
    kdim = vdim = E if variant != "separate" else 6
    p = _params(E, kdim, vdim, 1)
    q, qr = make((L, N, E), "float64", "transposed", seed=2)
    k, kr = make((S, N, kdim), "float64", seed=3)
    v, vr = make((S, N, vdim), "float64", seed=4)
    rng = np.random.default_rng(5)
    kpm = np.zeros((N, S), dtype=bool)
    kpm[1, -2:] = True
    attn = rng.standard_normal((L, S))
    kw, ref_kw = {}, {}
    if variant == "bias_kv_zero_attn":
        bk, bv = rng.standard_normal((1, 1, E)), rng.standard_normal((1, 1, E))
        kw = dict(bias_k=T(bk), bias_v=T(bv), add_zero_attn=True)
        ref_kw = dict(bias_k=bk, bias_v=bv, add_zero_attn=True)
    if variant == "static":
        sk, sv = rng.standard_normal((N * H, S, E // H)), rng.standard_normal((N * H, S, E // H))
        kw, ref_kw = dict(static_k=T(sk), static_v=T(sv)), dict(static_k=sk, static_v=sv)
    separate = variant == "separate"
    out, w = F.multi_head_attention_forward(
        q, k, v, E, H, None if separate else T(np.concatenate([p["w_q"], p["w_k"], p["w_v"]])), T(p["b_in"]),
        kw.get("bias_k"), kw.get("bias_v"), kw.get("add_zero_attn", False), 0.0, T(p["w_o"]), T(p["b_o"]),
        key_padding_mask=tt.tensor(kpm), attn_mask=T(attn), use_separate_proj_weight=separate,
        q_proj_weight=T(p["w_q"]) if separate else None, k_proj_weight=T(p["w_k"]) if separate else None,
        v_proj_weight=T(p["w_v"]) if separate else None, static_k=kw.get("static_k"), static_v=kw.get("static_v"),
        average_attn_weights=False)
    ro, rw = mha_ref(qr, kr, vr, H, key_padding_mask=kpm, attn_mask=attn, **p, **ref_kw)
    assert_close(out, ro, "float64")
    assert_close(w, rw, "float64")


def test_unbatched_averaged_weights_and_the_module():
    tt.manual_seed(0)
    m = nn.MultiheadAttention(8, 2, dtype=tt.float64)
    x, _ = make((4, 8), "float64", seed=6)
    out, w = m(x, x, x)
    fo, fw = F.multi_head_attention_forward(x, x, x, 8, 2, m.in_proj_weight, m.in_proj_bias, None, None, False, 0.0,
                                            m.out_proj.weight, m.out_proj.bias, training=False)
    assert tuple(fo.shape) == (4, 8) and tuple(fw.shape) == (4, 4)
    assert_close(out, fo.detach().numpy(), "float64")
    assert_close(w, fw.detach().numpy(), "float64")
    o2, w2 = F.multi_head_attention_forward(x, x, x, 8, 2, m.in_proj_weight, m.in_proj_bias, None, None, False,
                                            0.0, m.out_proj.weight, m.out_proj.bias, need_weights=False)
    assert w2 is None
    assert_close(o2, fo.detach().numpy(), "float64")


def test_gradcheck():
    E, H = 4, 2
    q, _ = make((2, 1, E), "float64", seed=7, requires_grad=True)
    w_in, _ = make((3 * E, E), "float64", seed=8, requires_grad=True)
    w_o, _ = make((E, E), "float64", seed=9, requires_grad=True)
    assert gradcheck(lambda q, w_in, w_o: F.multi_head_attention_forward(
        q, q, q, E, H, w_in, None, None, None, True, 0.0, w_o, None)[0], (q, w_in, w_o))


def test_errors():
    E = 4
    x = tt.randn(2, 1, E)
    w, wo = tt.randn(3 * E, E), tt.randn(E, E)
    with pytest.raises(AssertionError, match="was expecting embedding dimension of 6, but got 4"):
        F.multi_head_attention_forward(x, x, x, 6, 2, w, None, None, None, False, 0.0, wo, None)
    with pytest.raises(AssertionError, match="embed_dim 4 not divisible by num_heads 3"):
        F.multi_head_attention_forward(x, x, x, 4, 3, w, None, None, None, False, 0.0, wo, None)
    with pytest.raises(AssertionError, match="use_separate_proj_weight is False but in_proj_weight is None"):
        F.multi_head_attention_forward(x, x, x, 4, 2, None, None, None, None, False, 0.0, wo, None)
    with pytest.raises(AssertionError, match="bias_k is set but bias_v is None"):
        F.multi_head_attention_forward(x, x, x, 4, 2, w, None, tt.randn(1, 1, E), None, False, 0.0, wo, None)
    with pytest.raises(RuntimeError, match="The shape of the 2D attn_mask is \\[3, 2\\], but should be \\[2, 2\\]"):
        F.multi_head_attention_forward(x, x, x, 4, 2, w, None, None, None, False, 0.0, wo, None,
                                       attn_mask=tt.zeros(3, 2))
    with pytest.raises(AssertionError, match="expecting static_k.size\\(0\\) of 2, but got 3"):
        F.multi_head_attention_forward(x, x, x, 4, 2, w, None, None, None, False, 0.0, wo, None,
                                       static_k=tt.randn(3, 2, 2))
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        F.multi_head_attention_forward(x, x, x, 4, 2, w, None, None, None, False, 0.0, wo, None, is_causal=True)
