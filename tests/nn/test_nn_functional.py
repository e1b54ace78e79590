"""nn.functional and loss modules against float64 numpy references: every loss with reduction
none/mean/sum, class weights, ignore_index, label smoothing, probability targets, pos_weight; attention;
padding, normalize; loss gradients by gradcheck."""

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
import tinytorch.nn.functional as F
from tinytorch.autograd import gradcheck
from support.numeric import TOL, assert_close, make, to_numpy

REDUCTIONS = ["none", "mean", "sum"]


def red(loss, reduction):
    return {"none": loss, "mean": loss.mean(), "sum": loss.sum()}[reduction]


def log_softmax_ref(x, axis=1):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


def ce_ref(x, t, weight=None, ignore_index=-100, reduction="mean", ls=0.0):
    """PyTorch's cross entropy with class-index targets, (N, C, *) logits."""
    C = x.shape[1]
    logp = log_softmax_ref(x, 1)
    w = np.ones(C) if weight is None else weight
    valid = t != ignore_index
    tc = np.where(valid, t, 0)
    picked = np.take_along_axis(logp, tc[:, None], 1)[:, 0]
    wt = w[tc] * valid
    nll = -picked * wt
    smooth = -(logp * w.reshape((1, C) + (1,) * (x.ndim - 2))).sum(1) * valid
    if reduction == "none":
        return (1 - ls) * nll + ls / C * smooth
    if reduction == "sum":
        return (1 - ls) * nll.sum() + ls / C * smooth.sum()
    return ((1 - ls) * nll.sum() + ls / C * smooth.sum()) / wt.sum()


# ------------------------------------------------------------------ cross entropy / nll

@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ls", [0.0, 0.2])
def test_cross_entropy_class_indices(reduction, weighted, ls):
    x, xr = make((6, 5), "float64")
    t = np.array([0, 4, 2, -100, 1, 3])
    w = np.random.default_rng(1).uniform(0.2, 2.0, 5) if weighted else None
    got = F.cross_entropy(x, tt.tensor(t), None if w is None else tt.tensor(w), reduction=reduction,
                          label_smoothing=ls)
    assert_close(got, ce_ref(xr, t, w, -100, reduction, ls))
    mod = nn.CrossEntropyLoss(weight=None if w is None else tt.tensor(w), reduction=reduction, label_smoothing=ls)
    assert_close(mod(x, tt.tensor(t)), ce_ref(xr, t, w, -100, reduction, ls))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_spatial_ignore_index_float32(reduction):
    x, xr = make((2, 4, 3, 2), "float32", seed=2)
    t = np.random.default_rng(3).integers(0, 4, (2, 3, 2))
    t[0, 1, 1] = 2
    w = np.array([0.5, 1.0, 2.0, 1.5])
    got = F.cross_entropy(x, tt.tensor(t), tt.tensor(w, dtype=tt.float32), ignore_index=2, reduction=reduction,
                          label_smoothing=0.1)
    assert_close(got, ce_ref(xr, t, w, 2, reduction, 0.1), tol=(1e-5, 1e-6))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("ls", [0.0, 0.3])
def test_cross_entropy_probability_targets(reduction, ls):
    x, xr = make((4, 3), "float64")
    p = np.random.default_rng(4).dirichlet(np.ones(3), 4)
    w = np.array([1.0, 0.5, 2.0])
    ps = p * (1 - ls) + ls / 3
    loss = -(log_softmax_ref(xr) * w * ps).sum(1)
    ref = {"none": loss, "sum": loss.sum(), "mean": loss.sum() / 4}[reduction]
    assert_close(F.cross_entropy(x, tt.tensor(p), tt.tensor(w), reduction=reduction, label_smoothing=ls), ref)


def test_cross_entropy_unbatched_and_errors():
    x, xr = make((5,), "float64")
    assert_close(F.cross_entropy(x, tt.tensor(3)), -log_softmax_ref(xr[None])[0, 3])
    with pytest.raises((IndexError, RuntimeError)):
        F.cross_entropy(tt.randn(2, 3), tt.tensor([0, 5]))
    with pytest.raises(ValueError):
        F.cross_entropy(tt.randn(2, 3), tt.tensor([0, 1]), reduction="avg")
    with pytest.raises(ValueError):
        nn.CrossEntropyLoss(reduction="avg")


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss(reduction):
    x, xr = make((5, 4), "float64")
    t = np.array([3, 0, 1, 1, 2])
    w = np.array([1.0, 2.0, 0.5, 1.5])
    picked = -xr[np.arange(5), t] * w[t] * (t != 1)
    ref = {"none": picked, "sum": picked.sum(), "mean": picked.sum() / (w[t] * (t != 1)).sum()}[reduction]
    assert_close(F.nll_loss(x, tt.tensor(t), tt.tensor(w), ignore_index=1, reduction=reduction), ref)
    assert_close(nn.NLLLoss(tt.tensor(w), ignore_index=1, reduction=reduction)(x, tt.tensor(t)), ref)


def test_legacy_size_average_reduce():
    x, xr = make((4, 3), "float64")
    t = tt.tensor([0, 1, 2, 1])
    assert_close(F.cross_entropy(x, t, size_average=False), ce_ref(xr, to_numpy(t), reduction="sum"))
    assert_close(F.nll_loss(x, t, reduce=False), -xr[np.arange(4), to_numpy(t)])
    assert nn.MSELoss(size_average=False).reduction == "sum"
    assert nn.L1Loss(reduce=False).reduction == "none"


# ------------------------------------------------------------------ regression losses

@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_elementwise_regression_losses(reduction, dtype):
    a, ar = make((4, 5), dtype, low=-3, high=3, seed=1)
    b, br = make((4, 5), dtype, seed=2)
    d = np.abs(ar - br)
    cases = [
        (F.mse_loss(a, b, reduction=reduction), nn.MSELoss(reduction=reduction)(a, b), (ar - br) ** 2),
        (F.l1_loss(a, b, reduction=reduction), nn.L1Loss(reduction=reduction)(a, b), d),
        (F.smooth_l1_loss(a, b, reduction=reduction, beta=0.7),
         nn.SmoothL1Loss(reduction=reduction, beta=0.7)(a, b), np.where(d < 0.7, 0.5 * d ** 2 / 0.7, d - 0.35)),
        (F.huber_loss(a, b, reduction=reduction, delta=0.7), nn.HuberLoss(reduction=reduction, delta=0.7)(a, b),
         np.where(d < 0.7, 0.5 * d ** 2, 0.7 * (d - 0.35))),
    ]
    for fn_out, mod_out, ref in cases:
        assert_close(fn_out, red(ref, reduction), dtype)
        assert_close(mod_out, red(ref, reduction), dtype)
    assert_close(F.smooth_l1_loss(a, b, beta=0.0), d.mean(), dtype)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_binary_cross_entropy(reduction):
    rng = np.random.default_rng(5)
    p = rng.uniform(0.01, 0.99, (4, 3))
    t = rng.uniform(0, 1, (4, 3))
    w = rng.uniform(0.5, 2, 3)
    ref = -w * (t * np.log(p) + (1 - t) * np.log(1 - p))
    assert_close(F.binary_cross_entropy(tt.tensor(p), tt.tensor(t), tt.tensor(w), reduction=reduction),
                 red(ref, reduction))
    assert_close(nn.BCELoss(tt.tensor(w), reduction=reduction)(tt.tensor(p), tt.tensor(t)), red(ref, reduction))
    # log clamped at -100 as PyTorch: p = 0 with t = 1 gives 100, not inf
    assert_close(F.binary_cross_entropy(tt.tensor([0.0]), tt.tensor([1.0])), 100.0)
    with pytest.raises(ValueError, match="target size"):
        F.binary_cross_entropy(tt.tensor(p), tt.tensor(t[0]))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_bce_with_logits_pos_weight(reduction):
    rng = np.random.default_rng(6)
    x = rng.normal(0, 3, (4, 3))
    x[0, 0] = 60.0
    x[1, 1] = -60.0  # large logits stay finite
    t = rng.uniform(0, 1, (4, 3))
    w = rng.uniform(0.5, 2, (4, 1))
    pw = np.array([1.0, 3.0, 0.5])
    log_sig = -np.logaddexp(0, -x)
    log_1m = -np.logaddexp(0, x)
    ref = -w * (pw * t * log_sig + (1 - t) * log_1m)
    got = F.binary_cross_entropy_with_logits(tt.tensor(x), tt.tensor(t), tt.tensor(w), reduction=reduction,
                                             pos_weight=tt.tensor(pw))
    assert_close(got, red(ref, reduction))
    mod = nn.BCEWithLogitsLoss(tt.tensor(w), reduction=reduction, pos_weight=tt.tensor(pw))
    assert_close(mod(tt.tensor(x), tt.tensor(t)), red(ref, reduction))
    ref0 = -(t * log_sig + (1 - t) * log_1m)
    assert_close(F.binary_cross_entropy_with_logits(tt.tensor(x), tt.tensor(t), reduction=reduction),
                 red(ref0, reduction))


@pytest.mark.parametrize("reduction", REDUCTIONS + ["batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(reduction, log_target):
    x, xr = make((3, 4), "float64")
    logp = log_softmax_ref(xr)
    q = np.random.default_rng(7).dirichlet(np.ones(4), 3)
    q[0, 1] = 0.0  # 0 * log 0 = 0
    tgt = np.log(q + 1e-300) if log_target else q
    loss = np.where(q > 0, q * (np.log(np.where(q > 0, q, 1)) - logp), 0.0)
    ref = loss.sum() / 3 if reduction == "batchmean" else red(loss, reduction)
    got = F.kl_div(tt.tensor(logp), tt.tensor(tgt), reduction=reduction, log_target=log_target)
    assert_close(got, ref, tol=(1e-9, 1e-12))
    assert_close(nn.KLDivLoss(reduction=reduction, log_target=log_target)(tt.tensor(logp), tt.tensor(tgt)), ref,
                 tol=(1e-9, 1e-12))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cosine_embedding_loss(reduction):
    a, ar = make((4, 5), "float64", seed=1)
    b, br = make((4, 5), "float64", seed=2)
    y = np.array([1, -1, 1, -1])
    cos = (ar * br).sum(1) / (np.linalg.norm(ar, axis=1) * np.linalg.norm(br, axis=1))
    ref = np.where(y == 1, 1 - cos, np.maximum(cos - 0.1, 0))
    assert_close(F.cosine_embedding_loss(a, b, tt.tensor(y), 0.1, reduction=reduction), red(ref, reduction))
    assert_close(nn.CosineEmbeddingLoss(0.1, reduction=reduction)(a, b, tt.tensor(y)), red(ref, reduction))


def test_loss_gradients():
    x, _ = make((3, 4), "float64", requires_grad=True)
    t = tt.tensor([1, 0, 3])
    w = tt.tensor([1.0, 2.0, 0.5, 1.0], dtype=tt.float64)
    assert gradcheck(lambda x_: F.cross_entropy(x_, t, w, label_smoothing=0.1), (x,))
    assert gradcheck(lambda x_: F.cross_entropy(x_, tt.tensor(np.full((3, 4), 0.25)), reduction="none"), (x,))
    assert gradcheck(lambda x_: F.nll_loss(x_, t, reduction="sum"), (x,))
    tb = tt.tensor(np.random.default_rng(0).uniform(0, 1, (3, 4)))
    assert gradcheck(lambda x_: F.binary_cross_entropy_with_logits(x_, tb, pos_weight=w), (x,))
    assert gradcheck(lambda x_: F.smooth_l1_loss(x_, tb * 3, beta=0.5), (x,))
    assert gradcheck(lambda x_: F.mse_loss(x_, tb), (x,))


# ------------------------------------------------------------------ attention, padding, misc

@pytest.mark.parametrize("mask", ["none", "bool", "float", "causal"])
def test_scaled_dot_product_attention(mask):
    q, qr = make((2, 3, 4), "float64", seed=1)
    k, kr = make((2, 5, 4), "float64", seed=2)
    v, vr = make((2, 5, 6), "float64", seed=3)
    s = qr @ kr.transpose(0, 2, 1) / 2.0
    kw = {}
    if mask == "bool":
        keep = np.random.default_rng(0).random((3, 5)) > 0.4
        keep[:, 0] = True
        s = np.where(keep, s, -np.inf)
        kw["attn_mask"] = tt.tensor(keep)  # True = take part, as PyTorch's SDPA
    elif mask == "float":
        add = np.random.default_rng(0).normal(size=(3, 5))
        s = s + add
        kw["attn_mask"] = tt.tensor(add)
    elif mask == "causal":
        s = np.where(np.tril(np.ones((3, 5), bool)), s, -np.inf)
        kw["is_causal"] = True
    e = np.exp(s - s.max(-1, keepdims=True))
    ref = (e / e.sum(-1, keepdims=True)) @ vr
    assert_close(F.scaled_dot_product_attention(q, k, v, **kw), ref)
    assert_close(F.scaled_dot_product_attention(q, k, v, scale=0.5, **kw), ref)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_scaled_dot_product_attention_grouped_query(dtype):
    # 6 query heads share 2 key/value heads: query heads 0-2 use kv head 0, 3-5 kv head 1
    q, qr = make((2, 6, 3, 4), dtype, "transposed", seed=4)
    k, kr = make((2, 2, 5, 4), dtype, seed=5)
    v, vr = make((2, 2, 5, 3), dtype, seed=6)
    kx, vx = np.repeat(kr, 3, axis=1), np.repeat(vr, 3, axis=1)
    s = qr @ kx.swapaxes(-1, -2) / 2.0
    e = np.exp(s - s.max(-1, keepdims=True))
    ref = (e / e.sum(-1, keepdims=True)) @ vx
    assert_close(F.scaled_dot_product_attention(q, k, v, enable_gqa=True), ref, dtype)
    # gradients reach the shared heads: each kv head sums over its 3 query heads
    kg = k.detach().requires_grad_()
    F.scaled_dot_product_attention(q, kg, v, enable_gqa=True).sum().backward()
    kx_t = tt.tensor(kx, dtype=getattr(tt, dtype), requires_grad=True)
    F.scaled_dot_product_attention(q, kx_t, tt.tensor(vx, dtype=getattr(tt, dtype))).sum().backward()
    assert_close(kg.grad, to_numpy(kx_t.grad).reshape(2, 2, 3, 5, 4).sum(2), dtype)
    with pytest.raises(ValueError, match="multiple of the key/value heads"):
        F.scaled_dot_product_attention(q, k[:, :1].expand(2, 4, 5, 4), v, enable_gqa=True)


def test_pad_normalize_cosine_similarity_one_hot():
    x, xr = make((2, 3, 4), "float32")
    assert_close(F.pad(x, (1, 2)), np.pad(xr, ((0, 0), (0, 0), (1, 2))), "float32")
    assert_close(F.pad(x, (1, 0, 0, 2), value=7.0), np.pad(xr, ((0, 0), (0, 2), (1, 0)), constant_values=7), "float32")
    assert_close(F.normalize(x, dim=1), xr / np.linalg.norm(xr, axis=1, keepdims=True), "float32")
    y, yr = make((2, 3, 4), "float32", seed=3)
    cs = (xr * yr).sum(1) / (np.linalg.norm(xr, axis=1) * np.linalg.norm(yr, axis=1))
    assert_close(F.cosine_similarity(x, y), cs, "float32")
    assert_close(F.one_hot(tt.tensor([0, 2]), 3), np.eye(3)[[0, 2]])
    assert_close(F.relu(x, inplace=False), np.maximum(xr, 0), "float32")
    assert_close(F.softmax(x, dim=-1).sum(-1), np.ones((2, 3)), "float32")


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_linear_and_layer_norm_low_precision(dtype):
    x, xr = make((4, 8), dtype)
    w, wr = make((3, 8), dtype, seed=1)
    assert_close(F.linear(x, w), xr @ wr.T, dtype, tol=tuple(4 * t for t in TOL[dtype]))
    ln = to_numpy(F.layer_norm(x, (8,)))
    mu, var = xr.mean(-1, keepdims=True), xr.var(-1, keepdims=True)
    assert_close(ln, (xr - mu) / np.sqrt(var + 1e-5), dtype, tol=tuple(4 * t for t in TOL[dtype]))


@pytest.mark.parametrize("layout", ["transposed", "sliced"])
@pytest.mark.parametrize("name", ["cross_entropy", "nll_loss", "conv2d", "layer_norm", "max_pool2d", "batch_norm",
                                  "linear"])
def test_non_contiguous_inputs_values_and_gradients(layout, name):
    w = tt.tensor(np.random.default_rng(0).uniform(-1, 1, (2, 3, 2, 2)))
    fns = {
        "cross_entropy": (lambda x: F.cross_entropy(x, tt.tensor([0, 2, 1, 1]), label_smoothing=0.1), (4, 3)),
        "nll_loss": (lambda x: F.nll_loss(x, tt.tensor([0, 2, 1, 1]), reduction="sum"), (4, 3)),
        "conv2d": (lambda x: F.conv2d(x, w, padding=1), (1, 3, 3, 4)),
        "layer_norm": (lambda x: F.layer_norm(x, (3,)), (4, 3)),
        "max_pool2d": (lambda x: F.max_pool2d(x, 2), (1, 2, 4, 4)),
        "batch_norm": (lambda x: F.batch_norm(x, None, None, training=True), (4, 3)),
        "linear": (lambda x: F.linear(x, w[:, :, 0, 0]), (4, 3)),
    }
    fn, shape = fns[name]
    x, xr = make(shape, "float64", layout, requires_grad=True)
    assert_close(fn(x), to_numpy(fn(tt.tensor(xr))))
    assert gradcheck(fn, (x,))
