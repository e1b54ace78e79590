"""nn layers against float64 numpy references: Linear, Bilinear, Conv1d/2d, pools, norms (BatchNorm
running statistics), Dropout, Embedding, activations; parameter gradients by gradcheck (MultiheadAttention's
too); bad inputs. MultiheadAttention and TransformerEncoder(Layer) are in test_nn_attention.py."""
import math

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
import tinytorch.nn.functional as F
from tinytorch.autograd import gradcheck
from support.numeric import assert_close, make, to_numpy

DT = ["float32", "float64"]


def P(m, name):
    return to_numpy(getattr(m, name))


# ------------------------------------------------------------------ numpy references

def conv2d_ref(x, w, b, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1):
    """Direct loop over every output element (N, C_out, H_out, W_out)."""
    n, cin, h, wd = x.shape
    cout, cpg, kh, kw = w.shape
    xp = np.zeros((n, cin, h + 2 * padding[0], wd + 2 * padding[1]))
    xp[:, :, padding[0]:padding[0] + h, padding[1]:padding[1] + wd] = x
    ho = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    wo = (wd + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, cout, ho, wo))
    opg = cout // groups
    for b_ in range(n):
        for co in range(cout):
            g = co // opg
            for i in range(ho):
                for j in range(wo):
                    acc = 0.0
                    for ci in range(cpg):
                        for p in range(kh):
                            for q in range(kw):
                                acc += w[co, ci, p, q] * xp[b_, g * cpg + ci, i * stride[0] + p * dilation[0],
                                                            j * stride[1] + q * dilation[1]]
                    out[b_, co, i, j] = acc + (b[co] if b is not None else 0.0)
    return out


def pool_ref(x, k, s, p, mode, count_include_pad=True):
    n, c, h, w = x.shape
    ho, wo = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
    out = np.zeros((n, c, ho, wo))
    for i in range(ho):
        for j in range(wo):
            r0, c0 = i * s - p, j * s - p
            r1, c1 = min(r0 + k, h), min(c0 + k, w)
            win = x[:, :, max(r0, 0):r1, max(c0, 0):c1]
            if mode == "max":
                out[:, :, i, j] = win.max(axis=(2, 3))
            else:
                cnt = k * k if count_include_pad else win.shape[2] * win.shape[3]
                out[:, :, i, j] = win.sum(axis=(2, 3)) / cnt
    return out


def softmax_ref(s, axis=-1):
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def layer_norm_ref(x, w, b, eps=1e-5, k=1):
    axes = tuple(range(x.ndim - k, x.ndim))
    mu = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    y = (x - mu) / np.sqrt(var + eps)
    return y * w + b if w is not None else y


# ------------------------------------------------------------------ linear family

@pytest.mark.parametrize("dtype", DT)
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_linear_forward(dtype, layout):
    m = nn.Linear(5, 3, dtype=getattr(tt, dtype))
    x, xr = make((4, 2, 5), dtype, layout if layout == "contiguous" else "sliced")
    assert_close(m(x), xr @ P(m, "weight").T + P(m, "bias"), dtype)
    m2 = nn.Linear(5, 3, bias=False, dtype=getattr(tt, dtype))
    assert m2.bias is None
    assert_close(m2(x), xr @ P(m2, "weight").T, dtype)
    assert_close(m(x[0, 0]), xr[0, 0] @ P(m, "weight").T + P(m, "bias"), dtype)  # 1-D input


def test_bilinear_forward():
    m = nn.Bilinear(3, 4, 2).double()
    a, ar = make((5, 3), "float64", seed=1)
    b, br = make((5, 4), "float64", seed=2)
    ref = np.einsum("ni,oij,nj->no", ar, P(m, "weight"), br) + P(m, "bias")
    assert_close(m(a, b), ref)


# ------------------------------------------------------------------ convolution and pooling

@pytest.mark.parametrize("cfg", [
    dict(stride=1, padding=0, dilation=1, groups=1),
    dict(stride=2, padding=1, dilation=1, groups=1),
    dict(stride=1, padding=2, dilation=2, groups=2),
    dict(stride=(2, 1), padding=(1, 0), dilation=1, groups=4),
])
@pytest.mark.parametrize("dtype", DT)
def test_conv2d_vs_direct_loop(cfg, dtype):
    m = nn.Conv2d(4, 8, (3, 2), **cfg, dtype=getattr(tt, dtype))
    x, xr = make((2, 4, 6, 5), dtype, seed=3)
    pair = lambda v: v if isinstance(v, tuple) else (v, v)  # noqa: E731
    ref = conv2d_ref(xr, P(m, "weight"), P(m, "bias"), pair(cfg["stride"]), pair(cfg["padding"]),
                     pair(cfg["dilation"]), cfg["groups"])
    y = m(x)
    assert y.shape == ref.shape
    assert_close(y, ref, dtype)
    assert_close(m(x[1]), ref[1], dtype)  # unbatched (C, H, W)


def test_conv2d_same_padding_and_conv1d():
    m = nn.Conv2d(2, 3, 3, padding="same", bias=False).double()
    x, xr = make((1, 2, 5, 5), "float64")
    assert_close(m(x), conv2d_ref(xr, P(m, "weight"), None, padding=(1, 1)))
    c1 = nn.Conv1d(4, 6, 3, stride=2, padding=1, groups=2).double()
    x, xr = make((2, 4, 9), "float64", seed=4)
    ref = conv2d_ref(xr[:, :, None, :], P(c1, "weight")[:, :, None, :], P(c1, "bias"), (1, 2), (0, 1), (1, 1), 2)
    assert_close(c1(x), ref[:, :, 0, :])


@pytest.mark.parametrize("dtype", DT)
def test_pools(dtype):
    x, xr = make((2, 3, 7, 6), dtype, seed=5)
    assert_close(nn.MaxPool2d(3, 2, 1)(x), pool_ref(xr, 3, 2, 1, "max"), dtype)
    assert_close(nn.MaxPool2d(2)(x), pool_ref(xr, 2, 2, 0, "max"), dtype)
    assert_close(nn.AvgPool2d(3, 2, 1)(x), pool_ref(xr, 3, 2, 1, "avg"), dtype)
    assert_close(nn.AvgPool2d(3, 2, 1, count_include_pad=False)(x), pool_ref(xr, 3, 2, 1, "avg", False), dtype)
    # adaptive 7x6 -> 1x1 and -> 7x3 (exact windows)
    assert_close(nn.AdaptiveAvgPool2d(1)(x), xr.mean(axis=(2, 3), keepdims=True), dtype)
    assert_close(nn.AdaptiveAvgPool2d((None, 3))(x), xr.reshape(2, 3, 7, 3, 2).mean(-1), dtype)
    y, idx = nn.MaxPool2d(2, return_indices=True)(x)
    flat = xr.reshape(2, 3, -1)
    assert_close(y, np.take_along_axis(flat, to_numpy(idx).reshape(2, 3, -1).astype(int), 2).reshape(y.shape), dtype)
    x1, x1r = make((2, 3, 9), dtype, seed=6)
    padded = np.pad(x1r, ((0, 0), (0, 0), (1, 1)), constant_values=-np.inf)
    assert_close(nn.MaxPool1d(3, 2, 1)(x1), np.stack([padded[..., i:i + 3].max(-1) for i in range(0, 9, 2)], -1),
                 dtype)
    assert_close(nn.AvgPool1d(3, 3)(x1), x1r.reshape(2, 3, 3, 3).mean(-1), dtype)


# ------------------------------------------------------------------ normalization

@pytest.mark.parametrize("dtype", DT)
def test_layer_norm_group_norm_rms_norm(dtype):
    x, xr = make((3, 4, 6), dtype, seed=7)
    ln = nn.LayerNorm(6, dtype=getattr(tt, dtype))
    with tt.no_grad():
        ln.weight.uniform_(0.5, 1.5)
        ln.bias.uniform_(-1, 1)
    assert_close(ln(x), layer_norm_ref(xr, P(ln, "weight"), P(ln, "bias")), dtype)
    ln2 = nn.LayerNorm([4, 6], eps=1e-3, elementwise_affine=False)
    assert_close(ln2(x.float()), layer_norm_ref(xr, None, None, 1e-3, k=2), "float32")
    gn = nn.GroupNorm(2, 4, dtype=getattr(tt, dtype))
    with tt.no_grad():
        gn.weight.uniform_(0.5, 1.5)
        gn.bias.uniform_(-1, 1)
    g = xr.reshape(3, 2, 12)
    ref = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)).reshape(3, 4, 6)
    assert_close(gn(x), ref * P(gn, "weight")[:, None] + P(gn, "bias")[:, None], dtype)
    rms = nn.RMSNorm(6, eps=1e-6, dtype=getattr(tt, dtype))
    with tt.no_grad():
        rms.weight.uniform_(0.5, 1.5)
    assert_close(rms(x), xr / np.sqrt((xr ** 2).mean(-1, keepdims=True) + 1e-6) * P(rms, "weight"), dtype)


@pytest.mark.parametrize("momentum", [0.1, None])
def test_batchnorm2d_running_stats_two_steps_then_eval(momentum):
    bn = nn.BatchNorm2d(3, momentum=momentum).double()
    with tt.no_grad():
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.uniform_(-1, 1)
    w, b = P(bn, "weight")[None, :, None, None], P(bn, "bias")[None, :, None, None]
    rm, rv = np.zeros(3), np.ones(3)
    for step in range(2):
        x, xr = make((4, 3, 2, 3), "float64", seed=10 + step)
        mu, var = xr.mean(axis=(0, 2, 3)), xr.var(axis=(0, 2, 3))
        ref = (xr - mu[None, :, None, None]) / np.sqrt(var[None, :, None, None] + 1e-5) * w + b
        assert_close(bn(x), ref)
        f = 0.1 if momentum is not None else 1.0 / (step + 1)
        n = xr.size / 3
        rm, rv = (1 - f) * rm + f * mu, (1 - f) * rv + f * var * n / (n - 1)
    assert_close(bn.running_mean, rm)
    assert_close(bn.running_var, rv)
    assert int(bn.num_batches_tracked.item()) == 2
    bn.eval()
    x, xr = make((2, 3, 2, 2), "float64", seed=20)
    assert_close(bn(x), (xr - rm[None, :, None, None]) / np.sqrt(rv[None, :, None, None] + 1e-5) * w + b)
    assert_close(bn.running_mean, rm)  # eval doesn't update


def test_batchnorm1d_and_no_running_stats():
    bn = nn.BatchNorm1d(4, affine=False, track_running_stats=False).double()
    assert bn.running_mean is None and bn.weight is None
    x, xr = make((5, 4, 3), "float64")
    mu, var = xr.mean(axis=(0, 2), keepdims=True), xr.var(axis=(0, 2), keepdims=True)
    assert_close(bn(x), (xr - mu) / np.sqrt(var + 1e-5))
    bn.eval()  # still batch statistics without running stats
    assert_close(bn(x), (xr - mu) / np.sqrt(var + 1e-5))
    bn2 = nn.BatchNorm1d(4).double()
    x2, x2r = make((6, 4), "float64")
    assert_close(bn2(x2), (x2r - x2r.mean(0)) / np.sqrt(x2r.var(0) + 1e-5))
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        bn2(tt.zeros(1, 4, dtype=tt.float64))


# ------------------------------------------------------------------ dropout, embedding, activations

def test_dropout_train_and_eval():
    tt.manual_seed(0)
    d = nn.Dropout(0.3)
    x = tt.ones(200, 500)
    y = to_numpy(d(x))
    kept = y != 0
    assert abs(kept.mean() - 0.7) < 0.01
    np.testing.assert_allclose(y[kept], 1 / 0.7, rtol=1e-6)
    d.eval()
    assert d(x) is x or np.array_equal(to_numpy(d(x)), to_numpy(x))
    assert float(nn.Dropout(1.0)(tt.ones(10)).abs().sum()) == 0.0
    with pytest.raises(ValueError):
        nn.Dropout(1.5)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_embedding_scale_grad_by_freq(dtype):
    # each row's gradient is divided by how often the mini-batch looks it up (padding row: none)
    e = nn.Embedding(6, 3, padding_idx=4, scale_grad_by_freq=True).to(getattr(tt, dtype))
    idx = np.array([[1, 4, 1], [5, 1, 0], [4, 5, 2]])
    g = np.random.default_rng(0).standard_normal((3, 3, 3))
    e(tt.tensor(idx)).backward(tt.tensor(g, dtype=getattr(tt, dtype)))
    counts = np.bincount(idx.reshape(-1), minlength=6)
    ref = np.zeros((6, 3))
    np.add.at(ref, idx.reshape(-1), g.reshape(-1, 3) / counts[idx.reshape(-1)][:, None])
    ref[4] = 0.0
    assert_close(e.weight.grad, ref, dtype)
    with pytest.raises(NotImplementedError, match="sparse"):
        nn.Embedding(6, 3, sparse=True)


def test_embedding_forward_padding_and_max_norm():
    e = nn.Embedding(10, 3, padding_idx=2).double()
    assert float(e.weight[2].abs().sum()) == 0.0
    idx = tt.tensor([[1, 2], [9, 1]])
    assert_close(e(idx), P(e, "weight")[[[1, 2], [9, 1]]])
    e(idx).sum().backward()
    g = to_numpy(e.weight.grad)
    assert_close(g[1], [2.0] * 3)
    assert_close(g[9], [1.0] * 3)
    assert_close(g[2], [0.0] * 3)  # padding_idx gets no gradient
    assert_close(g[0], [0.0] * 3)
    with pytest.raises(IndexError):
        e(tt.tensor([10]))
    em = nn.Embedding(6, 4, max_norm=1.0).double()
    w0 = P(em, "weight")
    out = em(tt.tensor([0, 3, 3]))
    norms = np.linalg.norm(w0, axis=1, keepdims=True)
    scaled = np.where(norms > 1.0, w0 / (norms + 1e-7), w0)
    assert_close(out, scaled[[0, 3, 3]], tol=(1e-9, 1e-12))
    assert_close(em.weight[1], w0[1])  # rows not looked up are untouched
    pre = tt.tensor(np.arange(6.0).reshape(3, 2))
    fe = nn.Embedding.from_pretrained(pre)
    assert not fe.weight.requires_grad
    assert_close(fe(tt.tensor([2])), [[4.0, 5.0]])


@pytest.mark.parametrize("module,ref", [
    (nn.ReLU(), lambda x: np.maximum(x, 0)),
    (nn.ReLU6(), lambda x: np.clip(x, 0, 6)),
    (nn.LeakyReLU(0.2), lambda x: np.where(x > 0, x, 0.2 * x)),
    (nn.ELU(0.5), lambda x: np.where(x > 0, x, 0.5 * (np.exp(x) - 1))),
    (nn.GELU(), lambda x: 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))),
    (nn.GELU("tanh"), lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))),
    (nn.SiLU(), lambda x: x / (1 + np.exp(-x))),
    (nn.Sigmoid(), lambda x: 1 / (1 + np.exp(-x))),
    (nn.Tanh(), np.tanh),
    (nn.Softplus(2.0, 1.0), lambda x: np.where(2 * x > 1, x, np.log1p(np.exp(2 * x)) / 2)),
    (nn.Mish(), lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    (nn.Hardswish(), lambda x: x * np.clip(x + 3, 0, 6) / 6),
    (nn.Hardtanh(-2, 2), lambda x: np.clip(x, -2, 2)),
    (nn.LogSigmoid(), lambda x: -np.log1p(np.exp(-x))),
    (nn.Softmax(dim=1), lambda x: softmax_ref(x, 1)),
    (nn.LogSoftmax(dim=1), lambda x: np.log(softmax_ref(x, 1))),
    (nn.Flatten(), lambda x: x.reshape(x.shape[0], -1)),
    (nn.Identity(), lambda x: x),
])
def test_activation_modules(module, ref):
    x, xr = make((3, 4), "float64", low=-4, high=4)
    assert_close(module(x), ref(xr), tol=(1e-9, 1e-12))


def test_inplace_activation_writes_input():
    x = tt.tensor([-1.0, 2.0])
    assert nn.ReLU(inplace=True)(x) is x
    assert_close(x, [0.0, 2.0])


# ------------------------------------------------------------------ gradients of parameters (float64 gradcheck)

def _gc(m, *xs):
    params = [p for p in m.parameters()]
    n = len(xs)
    return gradcheck(lambda *a: m(*a[:n]), tuple(xs) + tuple(params))


def test_gradcheck_linear_conv_layernorm():
    x, _ = make((2, 3), "float64", requires_grad=True)
    assert _gc(nn.Linear(3, 2).double(), x)
    x, _ = make((1, 2, 4, 4), "float64", requires_grad=True)
    assert _gc(nn.Conv2d(2, 2, 3, stride=2, padding=1).double(), x)
    assert _gc(nn.Conv2d(2, 2, 2, groups=2).double(), x)
    ln = nn.LayerNorm(4).double()
    with tt.no_grad():
        ln.weight.uniform_(0.5, 1.5)
    x, _ = make((2, 4), "float64", requires_grad=True)
    assert _gc(ln, x)


def test_gradcheck_batchnorm_training_embedding_mha():
    bn = nn.BatchNorm1d(2).double()
    with tt.no_grad():
        bn.weight.uniform_(0.5, 1.5)
    x, _ = make((3, 2, 2), "float64", requires_grad=True)
    assert _gc(bn, x)
    e = nn.Embedding(4, 2).double()
    assert gradcheck(lambda w: F.embedding(tt.tensor([[0, 3], [3, 1]]), w), (e.weight,))
    m = nn.MultiheadAttention(4, 2).double()
    with tt.no_grad():
        m.in_proj_bias.uniform_(-0.5, 0.5)
    q, _ = make((2, 1, 4), "float64", requires_grad=True)
    kv, _ = make((3, 1, 4), "float64", seed=1)
    mask = tt.tensor([[False, False, True], [False, True, False]])
    assert gradcheck(lambda q_, w, b, ow, ob: m(q_, kv, kv, attn_mask=mask)[0],
                     (q, m.in_proj_weight, m.in_proj_bias, m.out_proj.weight, m.out_proj.bias))


# ------------------------------------------------------------------ bad inputs name the layer and both shapes

@pytest.mark.parametrize("layer,x,error,pattern", [   # PyTorch's exception type for each
    (nn.Linear(3, 4), tt.zeros(2, 5), RuntimeError, r"Linear.*3.*\[2, 5\]"),
    (nn.Conv2d(3, 4, 3), tt.zeros(2, 5, 8, 8), RuntimeError, r"Conv2d.*3 channels.*\[2, 5, 8, 8\]"),
    (nn.Conv2d(3, 4, 3), tt.zeros(8, 8), RuntimeError, r"Conv2d.*3D or 4D.*\[8, 8\]"),
    (nn.Conv1d(3, 4, 3), tt.zeros(2, 4, 8), RuntimeError, r"Conv1d.*3 channels.*\[2, 4, 8\]"),
    (nn.BatchNorm2d(3), tt.zeros(2, 3, 8), ValueError, r"BatchNorm2d.*4D.*\[2, 3, 8\]"),
    (nn.BatchNorm1d(3), tt.zeros(2, 4), RuntimeError, r"BatchNorm1d.*3 features.*\[2, 4\]"),
    (nn.LayerNorm(6), tt.zeros(2, 5), RuntimeError, r"LayerNorm.*\[6\].*\[2, 5\]"),
    (nn.GroupNorm(2, 4), tt.zeros(2, 6, 3), RuntimeError, r"GroupNorm.*4 channels.*\[2, 6, 3\]"),
    (nn.MaxPool2d(2), tt.zeros(4, 4), RuntimeError, r"MaxPool2d.*3D or 4D.*\[4, 4\]"),
])
def test_bad_input_errors(layer, x, error, pattern):
    with pytest.raises(error, match=pattern):
        layer(x)


def test_constructor_errors():
    with pytest.raises(ValueError, match="groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError):
        nn.GroupNorm(3, 4)
    with pytest.raises(AssertionError):
        nn.Embedding(4, 2, padding_idx=4)
