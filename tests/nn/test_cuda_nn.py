"""CUDA pooling, embedding, loss kernels and padding against the CPU kernels.

Same values on both devices, forward and backward (through autograd); the GPU backward kernels
are deterministic (gathers, a stable sort for embedding, warp-ordered sums for max pooling), so
two runs must agree bitwise. The device-side-assert tests run last, each in a subprocess,
because a failed device assert leaves the CUDA context unusable."""
from __future__ import annotations

import functools
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn.functional as F

from support import cuda_helpers
from support.cuda_helpers import close  # support.numeric's TOL
from support.numeric import to_numpy

pytestmark = pytest.mark.cuda

FLOATS = ["float32", "float16", "bfloat16", "float64"]
pair = functools.partial(cuda_helpers.pair, low=-2.0, high=2.0)


def ints(values, dtype="int64"):
    c = tt.tensor(np.asarray(values), dtype=getattr(tt, dtype))
    return c, c.cuda()


def fwd_bwd(fn, xc, xg, dtype, scale=1.0, what="", seed=99):
    """fn on both devices, the outputs compared, then backward with the same upstream grad."""
    yc, yg = fn(xc), fn(xg)
    close(yg, yc, dtype, scale, what + " forward")
    gc, gg = pair(tuple(yc.shape), dtype, seed=seed)
    yc.backward(gc)
    yg.backward(gg)
    close(xg.grad, xc.grad, dtype, scale, what + " backward")
    return yg, xg.grad


# ------------------------------------------------------------------------------------ pooling

POOL_LAYOUTS = ["contiguous", "transposed", "sliced"]
MAX_CASES = [((3, 2), (2, 1), (1, 1), (1, 2), True), ((2, 2), None, (0, 0), (1, 1), False),
             ((3, 3), (2, 3), (1, 0), (2, 1), True), ((3, 3), (1, 1), (1, 1), (1, 1), False)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("layout", POOL_LAYOUTS)
@pytest.mark.parametrize("k,s,p,d,ceil", MAX_CASES)
def test_max_pool2d(k, s, p, d, ceil, layout, dtype):
    xc, xg = pair((2, 3, 9, 11), dtype, layout, seed=1, requires_grad=True)
    fn = lambda x: F.max_pool2d(x, k, s, p, d, ceil)  # noqa: E731
    fwd_bwd(fn, xc, xg, dtype, what="max_pool2d")
    _, ic = F.max_pool2d(xc.detach(), k, s, p, d, ceil, return_indices=True)
    _, ig = F.max_pool2d(xg.detach(), k, s, p, d, ceil, return_indices=True)
    np.testing.assert_array_equal(to_numpy(ig), to_numpy(ic))


def test_max_pool2d_ties_nan_and_overlap_determinism():
    # Few distinct values: many ties and many overlapping windows choosing the same input.
    rng = np.random.default_rng(2)
    data = rng.integers(0, 3, (4, 5, 13, 13)).astype(np.float64)
    data[0, 0, 3, 4] = np.nan
    xc = tt.tensor(data, dtype=tt.float32).requires_grad_(True)
    xg = tt.tensor(data, dtype=tt.float32).cuda().requires_grad_(True)
    yc, ic = F.max_pool2d(xc, 3, 1, 1, return_indices=True)
    yg, ig = F.max_pool2d(xg, 3, 1, 1, return_indices=True)
    np.testing.assert_array_equal(to_numpy(yg), to_numpy(yc))
    np.testing.assert_array_equal(to_numpy(ig), to_numpy(ic))
    gc, gg = pair(tuple(yc.shape), "float32", seed=3)
    yc.backward(gc)
    runs = []
    for _ in range(2):
        xg.grad = None
        F.max_pool2d(xg, 3, 1, 1).backward(gg)
        runs.append(to_numpy(xg.grad))
    np.testing.assert_array_equal(runs[0], runs[1])
    # sums run in the CPU's order: bitwise equal to the CPU result
    np.testing.assert_array_equal(runs[0], to_numpy(xc.grad))


AVG_CASES = [((3, 3), (2, 2), (1, 1), False, True, None), ((2, 3), (1, 2), (1, 1), True, False, None),
             ((3, 2), None, (0, 1), True, True, 5), ((4, 4), (3, 3), (2, 2), True, False, None)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("layout", POOL_LAYOUTS)
@pytest.mark.parametrize("k,s,p,ceil,cip,div", AVG_CASES)
def test_avg_pool2d(k, s, p, ceil, cip, div, layout, dtype):
    xc, xg = pair((2, 3, 10, 9), dtype, layout, seed=4, requires_grad=True)
    fn = lambda x: F.avg_pool2d(x, k, s, p, ceil, cip, div)  # noqa: E731
    fwd_bwd(fn, xc, xg, dtype, what="avg_pool2d")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("out", [(1, 1), (3, 4), (5, 7), (10, 9), (4, 1)])
@pytest.mark.parametrize("layout", POOL_LAYOUTS)
def test_adaptive_avg_pool2d(out, layout, dtype):
    xc, xg = pair((2, 3, 10, 9), dtype, layout, seed=5, requires_grad=True)
    fwd_bwd(lambda x: F.adaptive_avg_pool2d(x, out), xc, xg, dtype, what="adaptive_avg_pool2d")


def test_pool_unbatched_and_empty():
    xc, xg = pair((3, 8, 8), "float32", seed=6, requires_grad=True)
    fwd_bwd(lambda x: F.max_pool2d(x, 2), xc, xg, "float32", what="unbatched max")
    xc, xg = pair((0, 3, 8, 8), "float32", seed=6)
    assert tuple(F.max_pool2d(xg, 2).shape) == (0, 3, 4, 4)
    assert tuple(F.avg_pool2d(xg, 2).shape) == (0, 3, 4, 4)


# ---------------------------------------------------------------------------------- embedding

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("idtype", ["int64", "int32"])
@pytest.mark.parametrize("D", [1, 3, 8, 64])
def test_embedding(D, idtype, dtype):
    wc, wg = pair((11, D), dtype, seed=7, requires_grad=True)
    rng = np.random.default_rng(8)
    ic, ig = ints(rng.integers(0, 11, (4, 37)), idtype)  # many repeats
    fwd_bwd(lambda w: F.embedding(ic if w.device.type == "cpu" else ig, w), wc, wg, dtype, what="embedding")


@pytest.mark.parametrize("dtype", FLOATS)
def test_embedding_padding_idx_and_determinism(dtype):
    wc, wg = pair((7, 16), dtype, seed=9, requires_grad=True)
    rng = np.random.default_rng(10)
    ic, ig = ints(rng.integers(0, 7, (300,)))
    for pad in (0, 3, -1):
        wc.grad = wg.grad = None
        yc = F.embedding(ic, wc, padding_idx=pad)
        yg = F.embedding(ig, wg, padding_idx=pad)
        close(yg, yc, dtype)
        gc, gg = pair(tuple(yc.shape), dtype, seed=11)
        yc.backward(gc)
        yg.backward(gg)
        # same order of summation as the CPU: bitwise equal
        np.testing.assert_array_equal(to_numpy(wg.grad), to_numpy(wc.grad))
        assert not to_numpy(wg.grad)[pad].any()


def test_embedding_noncontiguous_weight_and_indices():
    wc, wg = pair((6, 9), "float32", "transposed", seed=12)
    ic, ig = ints(np.random.default_rng(13).integers(0, 6, (5, 4)))
    close(F.embedding(ig.transpose(0, 1), wg), F.embedding(ic.transpose(0, 1), wc), "float32")
    close(F.embedding(ig[:0], wg), F.embedding(ic[:0], wc), "float32")


def test_embedding_large_vocab_backward():
    wc, wg = pair((5000, 32), "float32", seed=14, requires_grad=True)
    ic, ig = ints(np.random.default_rng(15).integers(0, 5000, (4096,)))
    fwd_bwd(lambda w: F.embedding(ic if w.device.type == "cpu" else ig, w), wc, wg, "float32", what="embedding")


# -------------------------------------------------------------------------------------- losses

def targets(N, C, extra=(), ignore=-100, seed=0):
    t = np.random.default_rng(seed).integers(0, C, (N,) + extra)
    t.reshape(-1)[::5] = ignore  # some ignored samples
    return ints(t)


LOSS_CASES = [
    # (N, C, spatial), weighted, ignore_index, label_smoothing
    (6, 5, (), False, -100, 0.0),
    (6, 5, (), True, -100, 0.0),
    (7, 4, (3, 2), True, 1, 0.0),
    (5, 9, (), True, -100, 0.2),
    (4, 6, (5,), False, -100, 0.1),
    (3, 2000, (), True, -100, 0.1),  # C > 1024 in 16-byte vectors: a block per row, one pass
    (5, 3000, (), False, -100, 0.0),  # the same without weights or smoothing (GPT's loss)
    (4, 2001, (), False, 1, 0.0),     # C > 1024 not in vectors: a block per row, scalar loads
    (9, 37, (), False, 2, 0.3),
]


def _check_loss(loss, what, case, dtype, seed, **kwargs):
    """``loss`` of LOSS_CASES[case] (inputs from seeds seed, seed + 1, seed + 2) forward and backward."""
    N, C, sp, weighted, ignore, _ = LOSS_CASES[case]
    xc, xg = pair((N, C) + sp, dtype, seed=seed, requires_grad=True)
    tc, tg = targets(N, C, sp, ignore, seed=seed + 1)
    wc, wg = pair((C,), dtype, seed=seed + 2, low=0.1, high=2.0) if weighted else (None, None)

    def fn(x):
        cpu = x.device.type == "cpu"
        return loss(x, tc if cpu else tg, weight=wc if cpu else wg, ignore_index=ignore, **kwargs)

    fwd_bwd(fn, xc, xg, dtype, scale=4, what=what)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("case", range(len(LOSS_CASES)))
def test_cross_entropy(case, reduction, dtype):
    _check_loss(F.cross_entropy, "cross_entropy", case, dtype, seed=20, reduction=reduction,
                label_smoothing=LOSS_CASES[case][5])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("case", [0, 1, 2, 4])
def test_nll_loss(case, reduction, dtype):
    _check_loss(F.nll_loss, "nll_loss", case, dtype, seed=23, reduction=reduction)


def test_cross_entropy_noncontiguous_and_1d():
    xc, xg = pair((8, 6), "float32", "transposed", seed=26, requires_grad=True)
    tc, tg = targets(8, 6, seed=27)
    fwd_bwd(lambda x: F.cross_entropy(x, tc if x.device.type == "cpu" else tg), xc, xg, "float32", what="ce T")
    xc, xg = pair((7,), "float32", seed=28)
    tc, tg = ints(3)
    close(F.cross_entropy(xg, tg), F.cross_entropy(xc, tc), "float32")


def test_cross_entropy_extremes():
    data = np.array([[1e4, -1e4, 0.0], [-np.inf, 0.0, 1.0], [50.0, 50.0, 50.0]])
    xc = tt.tensor(data, dtype=tt.float32)
    tc, tg = ints([0, 1, 2])
    close(F.cross_entropy(xc.cuda(), tg, reduction="none"), F.cross_entropy(xc, tc, reduction="none"), "float32")


@pytest.mark.parametrize("C", [2048, 2047])    # in 16-byte vectors (one-pass lse) and not
def test_cross_entropy_extremes_big_vocabulary(C):
    data = np.random.default_rng(5).standard_normal((6, C)) * 4
    data[0, 7] = np.inf                       # NaN loss
    data[1, 100] = np.nan                     # NaN loss
    data[2, :] = -np.inf                      # lse -inf: NaN loss
    data[3, :9] = np.nan                      # a NaN in the first vector, before anything finite
    data[3, 9:] = -np.inf
    data[4, :] = 80.0                         # exp would overflow without the max shift
    data[4, 3] = 88.0
    xc = tt.tensor(data, dtype=tt.float32)
    tc, tg = ints([0, 1, 2, 3, 4, 5])
    for dt in ("float32", "bfloat16"):
        close(F.cross_entropy(xc.cuda().to(getattr(tt, dt)), tg, reduction="none").float(),
              F.cross_entropy(xc.to(getattr(tt, dt)), tc, reduction="none").float(), dt)


def test_all_ignored_mean_is_nan():
    xc, xg = pair((3, 4), "float32", seed=29)
    tc, tg = ints([-100, -100, -100])
    assert np.isnan(to_numpy(F.cross_entropy(xg, tg))).all()
    assert np.isnan(to_numpy(F.cross_entropy(xc, tc))).all()


def test_loss_reduction_is_deterministic():
    xc, xg = pair((20000, 10), "float32", seed=30)
    tc, tg = targets(20000, 10, seed=31)
    a = to_numpy(F.cross_entropy(xg, tg, reduction="sum"))
    b = to_numpy(F.cross_entropy(xg, tg, reduction="sum"))
    np.testing.assert_array_equal(a, b)
    close(F.cross_entropy(xg, tg, reduction="sum"), F.cross_entropy(xc, tc, reduction="sum"), "float32", scale=10)


# ------------------------------------------------------- padding (composed of index_select, narrow)

@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_pad_modes(mode, dtype):
    xc, xg = pair((2, 3, 5, 6), dtype, "transposed", requires_grad=True)
    fwd_bwd(lambda t: F.pad(t, (2, -1, 1, 3), mode=mode), xc, xg, dtype, what=mode)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_conv2d_same_padding_with_an_even_kernel(dtype):
    wc, wg = pair((3, 2, 2, 4), dtype, seed=1)
    xc, xg = pair((2, 2, 7, 8), dtype, "sliced", requires_grad=True)
    conv = lambda t: F.conv2d(t, wg if t.device.type == "cuda" else wc, None, padding="same", dilation=(1, 2))  # noqa: E731
    y, _ = fwd_bwd(conv, xc, xg, dtype, scale=4, what="same, kernel (2, 4), dilation (1, 2)")
    assert tuple(y.shape) == (2, 3, 7, 8)


@pytest.mark.parametrize("mode,ac", [("nearest", None), ("bilinear", False), ("bilinear", True), ("area", None)])
@pytest.mark.parametrize("dtype", FLOATS)
def test_interpolate(mode, ac, dtype):
    xc, xg = pair((2, 3, 5, 6), dtype, "transposed", requires_grad=True)
    fwd_bwd(lambda t: F.interpolate(t, size=(7, 4), mode=mode, align_corners=ac), xc, xg, dtype, scale=4, what=mode)


# ------------------------------------------------------ device-side asserts (last: subprocesses)

ASSERT_SCRIPT = textwrap.dedent("""
    import numpy as np
    import tinytorch as tt
    import tinytorch.nn.functional as F
    try:
        {body}
        print("NO ERROR")
    except RuntimeError as e:
        print("ERR:", e)
    a = tt.tensor(np.arange(4.0)) * 2
    print("CPU OK", a.numpy().tolist())
""")

ASSERT_BODIES = {
    "embedding": "w = tt.tensor(np.ones((5, 3)), dtype=tt.float32).cuda()\n"
                 "    F.embedding(tt.tensor(np.array([0, 7])).cuda(), w).cpu()",
    "embedding_negative": "w = tt.tensor(np.ones((5, 3)), dtype=tt.float32).cuda()\n"
                          "    F.embedding(tt.tensor(np.array([-1, 2]), dtype=tt.int32).cuda(), w).cpu()",
    "nll_loss": "x = tt.tensor(np.zeros((2, 3)), dtype=tt.float32).cuda()\n"
                "    F.nll_loss(x, tt.tensor(np.array([0, 3])).cuda()).cpu()",
    "cross_entropy": "x = tt.tensor(np.zeros((2, 3)), dtype=tt.float32).cuda()\n"
                     "    F.cross_entropy(x, tt.tensor(np.array([5, 0])).cuda()).cpu()",
}


@pytest.mark.parametrize("name", list(ASSERT_BODIES))
def test_zz_out_of_range_index_raises_device_side_assert(name):
    script = ASSERT_SCRIPT.format(body=ASSERT_BODIES[name])
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "NO ERROR" not in r.stdout, out
    assert "ERR:" in r.stdout and "device-side assert" in r.stdout.lower(), out
    assert "CPU OK [0.0, 2.0, 4.0, 6.0]" in r.stdout, out
