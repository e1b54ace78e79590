"""Less common nn layers and functions (ctc_loss,
lp_pool, max_unpool, channel_shuffle, local_response_norm, pdist, bilinear, multilabel_margin_loss,
triplet_margin_with_distance_loss, alpha dropout, rrelu, gumbel_softmax, the in-place and
deprecated spellings) against float64 numpy references, with gradients by gradcheck. grid_sample /
affine_grid: test_nn_grid_sample.py; the 3-D layers: test_nn_layers3d.py."""
from __future__ import annotations

import math

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
import tinytorch.nn.functional as F
from tinytorch.autograd import gradcheck
from conftest import FLOAT_DTYPES, TOL, assert_close, assert_close_dot, make

rng = np.random.default_rng(7)


def _t64(a, requires_grad=False):
    t = tt.tensor(np.asarray(a, dtype=np.float64))
    return t.requires_grad_(True) if requires_grad else t


# ----------------------------------------------------------------------------- ctc_loss
def _np_ctc(lp, target, T, blank=0):
    # the forward algorithm in probability space, float64: -log p(target | lp[:T])
    ext = [blank]
    for v in target:
        ext += [v, blank]
    S = len(ext)
    p = np.exp(lp)
    a = np.zeros(S)
    a[0] = p[0, ext[0]]
    if S > 1:
        a[1] = p[0, ext[1]]
    for t in range(1, T):
        new = np.zeros(S)
        for s in range(S):
            v = a[s] + (a[s - 1] if s >= 1 else 0.0)
            if s >= 2 and ext[s] != blank and ext[s] != ext[s - 2]:
                v += a[s - 2]
            new[s] = v * p[t, ext[s]]
        a = new
    prob = a[S - 1] + (a[S - 2] if S > 1 else 0.0)
    return -np.log(prob) if prob > 0 else np.inf


CTC_T, CTC_N, CTC_C = 10, 4, 5
CTC_TARGETS = np.array([[1, 2, 2, 3, 0], [4, 1, 0, 0, 0], [3, 3, 3, 0, 0], [2, 0, 0, 0, 0]])
CTC_TLEN, CTC_ILEN = [4, 2, 3, 1], [10, 9, 6, 1]


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_ctc_loss_values(reduction, dtype):
    lp = np.log(rng.dirichlet(np.ones(CTC_C), (CTC_T, CTC_N)))
    x = tt.tensor(lp, dtype=getattr(tt, dtype))
    ref = np.array([_np_ctc(x.double().numpy()[:, b], CTC_TARGETS[b, :CTC_TLEN[b]], CTC_ILEN[b]) for b in range(CTC_N)])
    got = F.ctc_loss(x, tt.tensor(CTC_TARGETS), CTC_ILEN, CTC_TLEN, reduction=reduction)
    want = {"none": ref, "sum": ref.sum(), "mean": (ref / np.maximum(CTC_TLEN, 1)).mean()}[reduction]
    assert_close(got, want, dtype)
    # concatenated 1-D targets and tensor lengths give the same
    flat = np.concatenate([CTC_TARGETS[b, :CTC_TLEN[b]] for b in range(CTC_N)])
    got1 = nn.CTCLoss(reduction=reduction)(x, tt.tensor(flat), tt.tensor(CTC_ILEN), tt.tensor(CTC_TLEN))
    assert_close(got1, want, dtype)


def test_ctc_loss_gradient_and_infeasible():
    lp = np.log(rng.dirichlet(np.ones(4), (6, 2)))
    targets = tt.tensor([[1, 2, 1], [3, 3, 0]])
    x = _t64(lp, True)
    assert gradcheck(lambda a: F.ctc_loss(a, targets, [6, 5], [3, 2]), (x,))
    # a target longer than its input can't be aligned: inf, or 0 with a zero gradient under zero_infinity
    short = F.ctc_loss(x, targets, [2, 5], [3, 2], reduction="none")
    assert math.isinf(short[0].item()) and math.isfinite(short[1].item())
    z = F.ctc_loss(x, targets, [2, 5], [3, 2], reduction="none", zero_infinity=True)
    assert z[0].item() == 0.0
    z.sum().backward()
    assert np.all(np.isfinite(x.grad.numpy())) and np.all(x.grad.numpy()[:, 0] == 0)
    with pytest.raises(RuntimeError, match="blank"):
        F.ctc_loss(x, tt.tensor([[0, 1, 1], [1, 1, 1]]), [6, 6], [3, 3])


def test_ctc_loss_matches_torch_through_log_softmax():
    torch = pytest.importorskip("torch")
    logits = rng.standard_normal((8, 3, 6))
    tg, il, tl = np.array([[1, 2, 3], [5, 5, 0], [2, 0, 0]]), [8, 7, 5], [3, 2, 1]
    lt = torch.tensor(logits, requires_grad=True)
    ref = torch.nn.functional.ctc_loss(lt.log_softmax(-1), torch.tensor(tg), il, tl)
    ref.backward()
    x = _t64(logits, True)
    got = F.ctc_loss(x.log_softmax(-1), tt.tensor(tg), il, tl)
    got.backward()
    assert_close(got, ref.item(), "float64")
    assert_close(x.grad, lt.grad.numpy(), "float64")


# ----------------------------------------------------------------------------- pooling
def _np_windows(x, k, s):
    # (..., L) -> (..., Lo, k)
    lo = (x.shape[-1] - k) // s + 1
    return np.stack([x[..., i * s:i * s + k] for i in range(lo)], -2)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("p", [2.0, 1.5])
def test_lp_pool(dtype, p):
    x, xr = make((2, 3, 9), dtype, "sliced", low=0.1, high=2.0, seed=3)
    assert_close(F.lp_pool1d(x, p, 3, 2), (_np_windows(xr, 3, 2) ** p).sum(-1) ** (1 / p), dtype)
    x2, xr2 = make((2, 3, 6, 7), dtype, "transposed", low=0.1, high=2.0, seed=4)
    ref = np.array([[[[(xr2[n, c, i * 2:i * 2 + 2, j * 3:j * 3 + 3] ** p).sum() ** (1 / p) for j in range(2)]
                      for i in range(3)] for c in range(3)] for n in range(2)])
    assert_close(nn.LPPool2d(p, (2, 3))(x2), ref, dtype)
    assert gradcheck(lambda a: F.lp_pool2d(a, p, 2), (_t64(rng.uniform(0.2, 2, (1, 2, 4, 4)), True),))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_max_unpool(dtype):
    x, xr = make((2, 3, 4, 6), dtype, "transposed", seed=5)
    y, idx = F.max_pool2d_with_indices(x, 2)
    out = nn.MaxUnpool2d(2)(y, idx)
    ref = np.zeros((2, 3, 4 * 6))
    np.put_along_axis(ref, idx.numpy().reshape(2, 3, -1), y.double().numpy().reshape(2, 3, -1), -1)
    assert_close(out, ref.reshape(2, 3, 4, 6), dtype)
    # every maximum lands where it came from
    assert_close(out.double().numpy()[out.double().numpy() != 0], xr[out.double().numpy() != 0], dtype)
    y1, i1 = F.max_pool1d_with_indices(x[0], 2)
    assert list(F.max_unpool1d(y1, i1, 2, output_size=[3, 4, 7]).shape) == [3, 4, 7]
    idx64 = idx.clone()
    assert gradcheck(lambda a: F.max_unpool2d(a, idx64, 2), (_t64(rng.standard_normal((2, 3, 2, 3)), True),))
    with pytest.raises(RuntimeError, match="invalid max index"):
        F.max_unpool2d(y, idx * 100, 2)
    with pytest.raises(ValueError, match="output_size"):
        F.max_unpool2d(y, idx, 2, output_size=[9, 9])


def test_with_indices_spellings():
    x = make((2, 3, 6, 6), seed=6)[0]
    for a, b in [(F.max_pool2d_with_indices(x, 2), F.max_pool2d(x, 2, return_indices=True)),
                 (F.max_pool1d_with_indices(x[0], 3), F.max_pool1d(x[0], 3, return_indices=True)),
                 (F.adaptive_max_pool2d_with_indices(x, 4), F.adaptive_max_pool2d(x, 4, True)),
                 (F.adaptive_max_pool1d_with_indices(x[0], 4), F.adaptive_max_pool1d(x[0], 4, True))]:
        np.testing.assert_array_equal(a[0].numpy(), b[0].numpy())
        np.testing.assert_array_equal(a[1].numpy(), b[1].numpy())


# ----------------------------------------------------------------------------- shape and normalization layers
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_channel_shuffle(dtype):
    x, xr = make((2, 6, 3, 2), dtype, "transposed", seed=8)
    ref = xr.reshape(2, 3, 2, 3, 2).swapaxes(1, 2).reshape(2, 6, 3, 2)
    assert_close(nn.ChannelShuffle(3)(x), ref, dtype)
    with pytest.raises(RuntimeError, match="divisible by groups"):
        F.channel_shuffle(x, 4)


def _np_lrn(x, size, alpha, beta, k):
    c = x.shape[1]
    sq = x ** 2
    div = np.zeros_like(x)
    for ch in range(c):
        lo, hi = max(0, ch - size // 2), min(c, ch + (size - 1) // 2 + 1)
        div[:, ch] = sq[:, lo:hi].sum(1)
    return x / (k + alpha / size * div) ** beta


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape", [(2, 5, 4), (2, 6, 3, 2)])
def test_local_response_norm(dtype, shape):
    x, xr = make(shape, dtype, "sliced", seed=9)
    for size in (2, 3):
        assert_close(nn.LocalResponseNorm(size, 0.3, 0.8, 1.5)(x), _np_lrn(xr, size, 0.3, 0.8, 1.5), dtype)
    assert gradcheck(lambda a: F.local_response_norm(a, 3, 0.5, 0.75, 1.0), (_t64(rng.standard_normal(shape), True),))
    with pytest.raises(ValueError, match="3D or higher"):
        F.local_response_norm(tt.zeros(2, 3), 2)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_softmax2d_and_pdist(dtype):
    x, xr = make((2, 3, 2, 4), dtype, "transposed", seed=10)
    e = np.exp(xr - xr.max(1, keepdims=True))
    assert_close(nn.Softmax2d()(x), e / e.sum(1, keepdims=True), dtype)
    m, mr = make((5, 3), dtype, "transposed", seed=11)
    ref = [np.linalg.norm(mr[i] - mr[j]) for i in range(5) for j in range(i + 1, 5)]
    assert_close(F.pdist(m), ref, dtype)
    ref1 = [np.abs(mr[i] - mr[j]).sum() for i in range(5) for j in range(i + 1, 5)]
    assert_close(F.pdist(m, 1.0), ref1, dtype)
    assert gradcheck(lambda a: F.pdist(a), (_t64(rng.standard_normal((4, 3)), True),))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_bilinear_function(dtype):
    a, ar = make((2, 3, 4), dtype, "sliced", seed=12)
    b, br = make((2, 3, 5), dtype, "transposed", seed=13)
    w, wr = make((6, 4, 5), dtype, seed=14)
    bias, biasr = make((6,), dtype, seed=15)
    ref = np.einsum("...i,oij,...j->...o", ar, wr, br) + biasr
    # a sum of in1 * in2 products rounded in the working precision: its error scales with sum |terms|
    scale = np.einsum("...i,oij,...j->...o", np.abs(ar), np.abs(wr), np.abs(br)) + np.abs(biasr)
    assert_close_dot(F.bilinear(a, b, w, bias), ref, scale, dtype)
    args = [_t64(v, True) for v in (ar[0], br[0], wr)]
    assert gradcheck(lambda p, q, r: F.bilinear(p, q, r), tuple(args))


# ----------------------------------------------------------------------------- losses
def _np_multilabel_margin(x, y):
    c = x.shape[-1]
    tgt = []
    for v in y:
        if v < 0:
            break
        tgt.append(v)
    return sum(max(0.0, 1 - (x[j] - x[i])) for j in tgt for i in range(c) if i not in tgt) / c


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_multilabel_margin_loss(reduction, dtype):
    x, xr = make((4, 5), dtype, "transposed", seed=16)
    y = np.array([[3, 0, -1, 1, 2], [1, 2, 3, 4, 0], [-1, 0, 1, 2, 3], [2, 2, -1, -1, -1]])
    per = np.array([_np_multilabel_margin(xr[b], y[b]) for b in range(4)])
    want = {"none": per, "mean": per.mean(), "sum": per.sum()}[reduction]
    assert_close(nn.MultiLabelMarginLoss(reduction=reduction)(x, tt.tensor(y)), want, dtype)
    assert_close(F.multilabel_margin_loss(x[0], tt.tensor(y[0])), per[0], dtype)
    assert gradcheck(lambda a: F.multilabel_margin_loss(a, tt.tensor(y)), (_t64(xr * 0.37, True),))


@pytest.mark.parametrize("swap", [False, True])
def test_triplet_margin_with_distance_loss(swap):
    a, p, n = (rng.standard_normal((5, 3)) for _ in range(3))

    def l1(u, v):
        return (u - v).abs().sum(-1)

    d = lambda u, v: np.abs(u - v).sum(-1)  # noqa: E731
    dan = np.minimum(d(a, n), d(p, n)) if swap else d(a, n)
    ref = np.maximum(d(a, p) - dan + 0.7, 0)
    loss = nn.TripletMarginWithDistanceLoss(distance_function=l1, margin=0.7, swap=swap, reduction="none")
    assert_close(loss(_t64(a), _t64(p), _t64(n)), ref, "float64")
    # default distance: pairwise_distance (eps 1e-6 added to the difference)
    dp = lambda u, v: np.linalg.norm(u - v + 1e-6, axis=-1)  # noqa: E731
    assert_close(F.triplet_margin_with_distance_loss(_t64(a), _t64(p), _t64(n)),
                 np.maximum(dp(a, p) - dp(a, n) + 1.0, 0).mean(), "float64")
    assert gradcheck(lambda u, v, w: loss(u, v, w), tuple(_t64(z, True) for z in (a, p, n)))
    with pytest.raises(ValueError, match="margin"):
        nn.TripletMarginWithDistanceLoss(margin=0.0)


def test_nll_loss2d_is_nll_loss():
    x = F.log_softmax(make((2, 3, 4, 4), seed=17)[0], 1)
    y = tt.tensor(rng.integers(0, 3, (2, 4, 4)))
    assert_close(nn.NLLLoss2d()(x, y), F.nll_loss(x, y).numpy(), "float32")


# ----------------------------------------------------------------------------- random layers
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_alpha_dropout(dtype):
    p, alpha = 0.3, 1.7580993408473766
    a = 1 / math.sqrt((alpha ** 2 * p + 1) * (1 - p))
    x, xr = make((400, 50), dtype, seed=18, requires_grad=True)
    assert F.alpha_dropout(x, p, training=False) is x
    y = nn.AlphaDropout(p)(x)
    yr = y.detach().double().numpy()
    kept_val, dropped_val = a * xr + alpha * a * p, -alpha * a + alpha * a * p
    kept = np.isclose(yr, kept_val, rtol=TOL[dtype][0] * 10, atol=TOL[dtype][1] * 10)
    dropped = np.isclose(yr, dropped_val, rtol=1e-5)
    assert np.all(kept | dropped)
    assert abs(1 - kept.mean() - p) < 0.02
    y.sum().backward()
    # where x makes the kept value equal the dropped one, y can't tell which happened: skip those
    clear = kept != dropped
    assert clear.mean() > 0.99
    assert_close(x.grad.double().numpy()[clear], np.where(kept, a, 0.0)[clear], dtype)
    # standard normal input keeps mean 0 and std 1 (the point of alpha dropout)
    z = F.alpha_dropout(tt.randn(200000, dtype=getattr(tt, dtype)), 0.2, training=True).double().numpy()
    assert abs(z.mean()) < 0.02 and abs(z.std() - 1) < 0.02
    # feature alpha dropout: one draw per channel
    f = nn.FeatureAlphaDropout(0.5)(tt.ones(8, 16, 5, dtype=getattr(tt, dtype))).numpy()
    assert np.all(f == f[:, :, :1])


def test_rrelu():
    x, xr = make((1000,), "float64", seed=19)
    lo, hi = 0.1, 0.4
    assert_close(F.rrelu(x, lo, hi, training=False), np.where(xr >= 0, xr, xr * (lo + hi) / 2), "float64")
    m = nn.RReLU(lo, hi)
    y = m(x).numpy()
    neg = xr < 0
    np.testing.assert_array_equal(y[~neg], xr[~neg])
    ratio = y[neg] / xr[neg]
    assert ratio.min() >= lo and ratio.max() <= hi and ratio.std() > 0.05
    m.eval()
    assert_close(m(x), np.where(xr >= 0, xr, xr * (lo + hi) / 2), "float64")


def test_gumbel_softmax():
    logits = _t64(rng.standard_normal((6, 5)), True)
    soft = F.gumbel_softmax(logits, tau=0.5)
    assert_close(soft.sum(-1), np.ones(6), "float64")
    hard = F.gumbel_softmax(logits, tau=0.5, hard=True)
    h = hard.detach().numpy()
    assert np.all(h.sum(-1) == 1) and set(np.unique(h)) <= {0.0, 1.0}
    hard.sum().backward()  # straight-through: the soft sample's gradient (of a constant sum: zero)
    assert_close(logits.grad, np.zeros((6, 5)), "float64")
    # sampling frequencies follow softmax(logits)
    tt.manual_seed(0)
    base = tt.tensor([[1.0, 0.0, -1.0]]).expand(20000, 3)
    freq = F.gumbel_softmax(base, hard=True).numpy().mean(0)
    e = np.exp([1.0, 0.0, -1.0])
    assert np.allclose(freq, e / e.sum(), atol=0.02)


# ----------------------------------------------------------------------------- spellings
@pytest.mark.parametrize("name, args", [("elu_", (0.7,)), ("celu_", (1.3,)), ("selu_", ()),
                                        ("hardtanh_", (-0.5, 0.8)), ("leaky_relu_", (0.2,)),
                                        ("threshold_", (0.1, -3.0)), ("rrelu_", (0.1, 0.3))])
def test_inplace_spellings(name, args):
    x = make((3, 4), "float64", seed=20)[0]
    ref = getattr(F, name[:-1])(x, *args)
    y = x.clone()
    out = getattr(F, name)(y, *args)
    assert out is y
    assert_close(y, ref.numpy(), "float64")


def test_deprecated_upsample_names():
    x = make((1, 2, 3, 4), seed=21)[0]
    with pytest.warns(UserWarning, match="deprecated"):
        a = F.upsample(x, scale_factor=2)
    np.testing.assert_array_equal(a.numpy(), F.interpolate(x, scale_factor=2).numpy())
    with pytest.warns(UserWarning, match="deprecated"):
        b = F.upsample_bilinear(x, size=(5, 7))
    np.testing.assert_array_equal(b.numpy(), F.interpolate(x, (5, 7), mode="bilinear", align_corners=True).numpy())
    with pytest.warns(UserWarning, match="deprecated"):
        c = F.upsample_nearest(x, size=(6, 8))
    np.testing.assert_array_equal(c.numpy(), F.interpolate(x, (6, 8)).numpy())
