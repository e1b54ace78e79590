"""tinytorch._C pooling, embedding and loss kernels against float64 numpy references."""
import math

import numpy as np
import pytest

from tinytorch import _C
from support.c_helpers import make

I32, I64, F16, BF16, F32, F64 = 2, 3, 4, 5, 6, 7
FLOATS = [F32, F16, BF16, F64]
TOL = {F64: 1e-10, F32: 2e-5, F16: 2e-3, BF16: 1.6e-2}


def check(got, want, code, scale=4.0):
    want = np.asarray(want, dtype=np.float64)
    assert tuple(got.shape) == want.shape
    np.testing.assert_allclose(got.to_dtype(F64, True).numpy(), want, rtol=TOL[code] * scale,
                               atol=TOL[code] * scale)


def out_size(n, k, p, s, d, ceil):
    v = (n + 2 * p - d * (k - 1) - 1) / s
    o = (math.ceil(v) if ceil else math.floor(v)) + 1
    if ceil and (o - 1) * s >= n + p:
        o -= 1
    return o


def maxpool_ref(x, k, s, p, d, ceil):
    B, C, H, W = x.shape
    Ho, Wo = out_size(H, k[0], p[0], s[0], d[0], ceil), out_size(W, k[1], p[1], s[1], d[1], ceil)
    out = np.full((B, C, Ho, Wo), -np.inf)
    idx = np.zeros((B, C, Ho, Wo), np.int64)
    for oh in range(Ho):
        for ow in range(Wo):
            for i in range(k[0]):
                for j in range(k[1]):
                    ih, iw = oh * s[0] - p[0] + i * d[0], ow * s[1] - p[1] + j * d[1]
                    if 0 <= ih < H and 0 <= iw < W:
                        v = x[:, :, ih, iw]
                        better = v > out[:, :, oh, ow]
                        out[:, :, oh, ow] = np.where(better, v, out[:, :, oh, ow])
                        idx[:, :, oh, ow] = np.where(better, ih * W + iw, idx[:, :, oh, ow])
    return out, idx


@pytest.mark.parametrize("code", FLOATS)
@pytest.mark.parametrize("k,s,p,d,ceil", [((3, 2), (2, 1), (1, 1), (1, 2), True), ((2, 2), None, (0, 0), (1, 1), False),
                                          ((3, 3), (2, 3), (1, 0), (2, 1), True)])
def test_max_pool2d(code, k, s, p, d, ceil):
    x, xn = make((2, 3, 6, 9), code, 1, lambda t: t.transpose(2, 3))  # (2, 3, 9, 6) non-contiguous
    out, idx = _C.max_pool2d(x, k, s, p, d, ceil)
    want, widx = maxpool_ref(xn, k, s or k, p, d, ceil)
    check(out, want, code, 0.0)
    if code == F64:
        np.testing.assert_array_equal(idx.numpy(), widx)
    g, gn = make(tuple(out.shape), code, 2)
    gx = _C.max_pool2d_backward(g, idx, list(x.shape))
    gref = np.zeros(xn.shape).reshape(6, -1)
    np.add.at(gref, (np.arange(6)[:, None], idx.numpy().reshape(6, -1)), gn.reshape(6, -1))
    check(gx, gref.reshape(xn.shape), code)


def avgpool_ref(x, k, s, p, ceil, cip, div):
    B, C, H, W = x.shape
    Ho, Wo = out_size(H, k[0], p[0], s[0], 1, ceil), out_size(W, k[1], p[1], s[1], 1, ceil)
    out = np.zeros((B, C, Ho, Wo))
    divs = np.zeros((Ho, Wo))
    wins = {}
    for oh in range(Ho):
        for ow in range(Wo):
            h0, w0 = oh * s[0] - p[0], ow * s[1] - p[1]
            h1, w1 = min(h0 + k[0], H + p[0]), min(w0 + k[1], W + p[1])
            pool = (h1 - h0) * (w1 - w0)
            h0, w0, h1, w1 = max(h0, 0), max(w0, 0), min(h1, H), min(w1, W)
            divs[oh, ow] = div or (pool if cip else (h1 - h0) * (w1 - w0))
            wins[oh, ow] = (h0, h1, w0, w1)
            out[:, :, oh, ow] = x[:, :, h0:h1, w0:w1].sum(axis=(2, 3)) / divs[oh, ow]
    return out, divs, wins


@pytest.mark.parametrize("code", FLOATS)
@pytest.mark.parametrize("k,s,p,ceil,cip,div", [((3, 2), (2, 1), (1, 1), True, True, None),
                                                ((3, 2), (2, 1), (1, 1), True, False, None),
                                                ((2, 2), None, (0, 0), False, True, None),
                                                ((3, 3), (2, 2), (1, 1), False, False, 5)])
def test_avg_pool2d(code, k, s, p, ceil, cip, div):
    x, xn = make((2, 2, 7, 12), code, 3, lambda t: t.slice(3, 0, 12, 2))  # (2, 2, 7, 6), strided
    out = _C.avg_pool2d(x, k, s, p, ceil, cip, div)
    want, divs, wins = avgpool_ref(xn, k, s or k, p, ceil, cip, div)
    check(out, want, code)
    g, gn = make(tuple(out.shape), code, 4)
    gref = np.zeros(xn.shape)
    for (oh, ow), (h0, h1, w0, w1) in wins.items():
        gref[:, :, h0:h1, w0:w1] += (gn[:, :, oh, ow] / divs[oh, ow])[:, :, None, None]
    check(_C.avg_pool2d_backward(g, list(x.shape), k, s, p, ceil, cip, div), gref, code)


@pytest.mark.parametrize("code", FLOATS)
def test_adaptive_avg_pool2d(code):
    x, xn = make((2, 3, 5, 7), code, 5, lambda t: t.transpose(2, 3))  # (2, 3, 7, 5)
    Ho, Wo = 3, 2
    out = _C.adaptive_avg_pool2d(x, (Ho, Wo))
    H, W = 7, 5
    want = np.zeros((2, 3, Ho, Wo))
    g, gn = make((2, 3, Ho, Wo), code, 6)
    gref = np.zeros(xn.shape)
    for oh in range(Ho):
        h0, h1 = oh * H // Ho, -(-(oh + 1) * H // Ho)
        for ow in range(Wo):
            w0, w1 = ow * W // Wo, -(-(ow + 1) * W // Wo)
            n = (h1 - h0) * (w1 - w0)
            want[:, :, oh, ow] = xn[:, :, h0:h1, w0:w1].mean(axis=(2, 3))
            gref[:, :, h0:h1, w0:w1] += (gn[:, :, oh, ow] / n)[:, :, None, None]
    check(out, want, code)
    check(_C.adaptive_avg_pool2d_backward(g, list(x.shape)), gref, code)


def test_pool_errors():
    x, _ = make((1, 2, 4, 4), F32, 1)
    with pytest.raises(RuntimeError, match="pad should be at most half"):
        _C.max_pool2d(x, (2, 2), None, (2, 2))
    with pytest.raises(RuntimeError, match="Output size is too small"):
        _C.max_pool2d(x, (5, 5))
    with pytest.raises(RuntimeError, match="3D or 4D"):
        _C.avg_pool2d(make((4, 4), F32, 1)[0], (2, 2))
    with pytest.raises(TypeError):
        _C.max_pool2d(_C.from_numpy(np.ones((1, 1, 4, 4), np.int64)), (2, 2))


@pytest.mark.parametrize("code", FLOATS)
@pytest.mark.parametrize("icode", [I64, I32])
def test_embedding(code, icode):
    w, wn = make((6, 4), code, 7)
    idx_np = np.array([[5, 0, 5], [2, 1, 5]])
    idx = _C.from_numpy(idx_np).to_dtype(icode)
    check(_C.embedding(w, idx), wn[idx_np], code, 0.0)
    check(_C.embedding(w, idx.transpose(0, 1)), wn[idx_np.T], code, 0.0)  # non-contiguous indices
    g, gn = make((2, 3, 4), code, 8)
    for pad in (None, 5, -1):
        gref = np.zeros((6, 4))
        np.add.at(gref, idx_np.reshape(-1), gn.reshape(-1, 4))
        if pad is not None:
            gref[pad] = 0
        check(_C.embedding_backward(g, idx, 6, pad), gref, code)


def test_embedding_errors():
    w, _ = make((5, 3), F32, 1)
    with pytest.raises(IndexError, match="index 7 is out of range for num_embeddings 5"):
        _C.embedding(w, _C.from_numpy(np.array([1, 7])))
    with pytest.raises(IndexError, match="-1"):
        _C.embedding(w, _C.from_numpy(np.array([-1])))
    with pytest.raises(RuntimeError, match="Long, Int"):
        _C.embedding(w, _C.from_numpy(np.array([1.0])))


def ce_ref(x, t, w, ignore, eps, log_softmax, reduction):
    """x: (N, C, S) float64, t: (N, S). Returns (loss, grad of the reduced loss wrt x for grad_out g)."""
    N, C, S = x.shape
    wv = np.ones(C) if w is None else w
    if log_softmax:
        m = x.max(axis=1, keepdims=True)
        lp = x - m - np.log(np.exp(x - m).sum(axis=1, keepdims=True))
    else:
        lp = x
    valid = t != ignore
    tc = np.where(valid, t, 0)
    wt = np.where(valid, wv[tc], 0.0)
    picked = np.take_along_axis(lp, tc[:, None, :], axis=1)[:, 0, :]
    loss = (1 - eps) * (-wt * picked) + eps / C * np.where(valid, -(wv[None, :, None] * lp).sum(axis=1), 0.0)
    tw = wt.sum()
    onehot = (np.arange(C)[None, :, None] == tc[:, None, :]).astype(float)
    if log_softmax:
        p = np.exp(lp)
        unit = (1 - eps) * wt[:, None, :] * (p - onehot) + eps / C * (wv.sum() * p - wv[None, :, None])
    else:
        unit = -wt[:, None, :] * onehot
    unit = unit * valid[:, None, :]
    if reduction == 0:
        return loss, lambda g: unit * g[:, None, :]
    if reduction == 2:
        return loss.sum(), lambda g: unit * g
    return loss.sum() / tw, lambda g: unit * g / tw


@pytest.mark.parametrize("code", FLOATS)
@pytest.mark.parametrize("fused,eps", [(False, 0.0), (True, 0.0), (True, 0.1)])  # smoothing: cross_entropy only
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_losses(code, fused, eps, weighted, reduction):
    N, C, S = 4, 5, 3
    x, xn = make((N, S, C), code, 9, lambda t: t.transpose(1, 2))  # (N, C, S), non-contiguous
    tn = np.random.default_rng(10).integers(0, C, (N, S))
    tn[1, 2] = -100
    t = _C.from_numpy(tn)
    w, wn = make((C,), code, 11) if weighted else (None, None)
    want, grad = ce_ref(xn, tn, wn, -100, eps, fused, reduction)
    out = _C.cross_entropy(x, t, w, reduction, -100, eps) if fused else _C.nll_loss(x, t, w, reduction)
    check(out, want, code)
    g, gn = make((N, S) if reduction == 0 else (), code, 12)
    gx = (_C.cross_entropy_backward(g, x, t, w, reduction, -100, eps) if fused
          else _C.nll_loss_backward(g, x, t, w, reduction))
    check(gx, grad(gn), code)


@pytest.mark.parametrize("code", [F32, F64])
def test_cross_entropy_2d_matches_nll_of_log_softmax(code):
    x, xn = make((6, 10), code, 13)
    tn = np.random.default_rng(14).integers(0, 10, 6)
    want, _ = ce_ref(xn[:, :, None], tn[:, None], None, -100, 0.0, True, 1)
    check(_C.cross_entropy(x, _C.from_numpy(tn)), want, code)
    lsm = xn - xn.max(1, keepdims=True)
    lsm = lsm - np.log(np.exp(lsm).sum(1, keepdims=True))
    check(_C.nll_loss(_C.from_numpy(lsm).to_dtype(code), _C.from_numpy(tn)), want, code)


def test_loss_errors():
    x, _ = make((3, 4), F32, 1)
    with pytest.raises(IndexError, match="Target 4 is out of bounds"):
        _C.nll_loss(x, _C.from_numpy(np.array([0, 4, 1])))
    with pytest.raises(IndexError, match="Target -2"):
        _C.cross_entropy(x, _C.from_numpy(np.array([0, -2, 1])))
    with pytest.raises(ValueError, match="batch_size"):
        _C.nll_loss(x, _C.from_numpy(np.array([0, 1])))
    with pytest.raises(RuntimeError, match="weight tensor should be defined"):
        _C.nll_loss(x, _C.from_numpy(np.array([0, 1, 1])), make((3,), F32, 1)[0])
    with pytest.raises(ValueError, match="reduction"):
        _C.nll_loss(x, _C.from_numpy(np.array([0, 1, 1])), None, 3)
    with pytest.raises(ValueError, match="label_smoothing"):
        _C.cross_entropy(x, _C.from_numpy(np.array([0, 1, 1])), None, 1, -100, 1.5)
    with pytest.raises(RuntimeError, match="int64"):
        _C.nll_loss(x, _C.from_numpy(np.array([0.0, 1.0, 1.0])))
