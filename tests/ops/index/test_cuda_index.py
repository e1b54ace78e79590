"""CUDA indexing, sorting and shape-factory kernels against the CPU kernels.

Every op runs on the same values on both devices and must agree exactly: data movement is exact,
accumulation (index_put_ accumulate=True, scatter_add) is deterministic on the GPU and adds in
the CPU's order, sort/topk are stable on both. Inputs cover every dtype and contiguous,
transposed, sliced and expanded layouts. The device-side-assert test runs last, in a
subprocess, because a failed device assert leaves the CUDA context unusable."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tinytorch as tt

from support.cuda_helpers import layout_view
from support.numeric import to_numpy

pytestmark = pytest.mark.cuda

FLOATS = ["float32", "float16", "bfloat16", "float64"]
INTS = ["int64", "int32", "uint8"]
ALL = FLOATS + INTS + ["bool"]
LAYOUTS = ["contiguous", "transposed", "sliced", "expanded"]


def values(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype in INTS:
        lo = 0 if dtype == "uint8" else -50
        return rng.integers(lo, 100, shape)
    return rng.uniform(-3, 3, shape)


def pair(shape, dtype="float32", layout="contiguous", seed=0, data=None):
    """(cpu, gpu) tensors holding the same values with the same memory layout on each device."""
    shape = tuple(shape)
    if 0 in shape:  # empty: made on each device directly (Tensor.cuda() of some empty tensors crashes, see report)
        dt = getattr(tt, dtype)
        return tt.zeros(shape, dtype=dt), tt.zeros(shape, dtype=dt, device="cuda")
    base_shape, view = layout_view(shape, layout)
    arr = values(base_shape, dtype, seed) if data is None else np.asarray(data)
    base = tt.tensor(arr, dtype=getattr(tt, dtype))
    c, g = view(base), view(base.cuda())
    assert g.device.type == "cuda" and tuple(g.shape) == shape
    if layout != "contiguous" and all(s > 1 for s in shape):
        assert not g.is_contiguous()
    return c, g


def idx_pair(arr):
    t = tt.tensor(np.asarray(arr), dtype=tt.int64)
    return t, t.cuda()


def same(gpu, cpu, what=""):
    """Exact equality of values, dtype and shape (NaN equal to NaN)."""
    assert gpu.device.type == "cuda", what
    assert gpu.dtype == cpu.dtype, what
    assert tuple(gpu.shape) == tuple(cpu.shape), what
    if gpu.numel() == 0:  # nothing to compare (and .cpu() of some empty views crashes, see report)
        return
    np.testing.assert_array_equal(to_numpy(gpu.cpu()), to_numpy(cpu), err_msg=what)


# ------------------------------------------------------------------ advanced indexing


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_getitem_advanced(dtype, layout):
    c, g = pair((4, 5, 6), dtype, layout)
    i0c, i0g = idx_pair([3, -1, 0, 0, 2])
    i2c, i2g = idx_pair([[5, -6], [1, 1]])
    same(g[i0g], c[i0c], "x[idx]")
    same(g[:, i0g], c[:, i0c], "x[:, idx]")
    same(g[..., i2g], c[..., i2c], "x[..., idx2d]")
    same(g[i0g[:2], :, i0g[2:4]], c[i0c[:2], :, i0c[2:4]], "indices separated by a slice")
    same(g[i0g[:2], i0g[2:4]], c[i0c[:2], i0c[2:4]], "adjacent indices")
    same(g[1:3, i2g[1]], c[1:3, i2c[1]], "slice then index")
    # bool masks (nonzero on the GPU), full-shape and leading-dims masks
    mc, mg = pair((4, 5, 6), "bool", "contiguous", seed=3)
    same(g[mg], c[mc], "x[mask]")
    same(g[mg[:, :, 0]], c[mc[:, :, 0]], "x[mask2d]")
    same(g[:, mg[0, :, 0]], c[:, mc[0, :, 0]], "x[:, mask1d]")
    same(tt.masked_select(g, mg), tt.masked_select(c, mc), "masked_select")
    jc, jg = idx_pair([3, 4, 0, 0, 2])   # index_select takes no negative indices, as PyTorch
    same(tt.index_select(g, 1, jg), tt.index_select(c, 1, jc), "index_select")


def test_getitem_empty_and_large():
    c, g = pair((3, 4), "float32")
    ec, eg = idx_pair(np.zeros((0,), dtype=np.int64))
    same(g[eg], c[ec], "empty index")
    mc, mg = pair((3, 4), "bool", data=np.zeros((3, 4), dtype=bool))
    same(g[mg], c[mc], "all-false mask")
    c, g = pair((300, 700), "float16", seed=1)  # many tiles in nonzero, long offsets
    mask = to_numpy(c) > 0.5
    mc, mg = pair((300, 700), "bool", data=mask)
    same(g[mg], c[mc], "large mask")


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_setitem_and_index_put(dtype, layout):
    c, g = pair((4, 5, 6), dtype, layout)
    c, g = c.clone(), g.clone()
    if layout != "contiguous":  # write through a non-contiguous view of a bigger tensor
        c, g = pair((4, 5, 6), dtype, layout)
        c = c.clone().transpose(0, 1).contiguous().transpose(0, 1)
        g = g.clone().transpose(0, 1).contiguous().transpose(0, 1)
        assert not g.is_contiguous()
    vc, vg = pair((3, 6), dtype, seed=5)
    ic, ig = idx_pair([2, -1, 0])  # unique: the result does not depend on write order
    c[ic, 1] = vc
    g[ig, 1] = vg
    same(g, c, "x[idx, 1] = v")
    jc, jg = idx_pair([1, 3])
    c[jc, :, jc] = vc[0, 0]
    g[jg, :, jg] = vg[0, 0]
    same(g, c, "x[idx, :, idx] = scalar")
    mc, mg = pair((4, 5, 6), "bool", seed=7)
    c[mc] = vc[0, 0]
    g[mg] = vg[0, 0]
    same(g, c, "x[mask] = v")


@pytest.mark.parametrize("dtype", FLOATS + ["int64", "int32"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "sliced"])
def test_index_put_accumulate_is_deterministic(dtype, layout):
    # many duplicates: the GPU adds in the CPU's (row-major) order, so low-precision sums match bitwise
    c, g = pair((6, 8), dtype, layout)
    c, g = c.clone(), g.clone()
    rng = np.random.default_rng(2)
    ic, ig = idx_pair(rng.integers(-6, 6, 500))
    jc, jg = idx_pair(rng.integers(0, 8, 500))
    vc, vg = pair((500,), dtype, seed=9)
    same(g.index_put((ig, jg), vg, accumulate=True), c.index_put((ic, jc), vc, accumulate=True), "2 indices")
    vc, vg = pair((500, 8), dtype, seed=10)
    c.index_put_((ic,), vc, accumulate=True)
    g.index_put_((ig,), vg, accumulate=True)
    same(g, c, "row accumulate")
    # broadcast value
    sc, sg = pair((1,), dtype, seed=11)
    same(g.index_put((ig, jg), sg, accumulate=True), c.index_put((ic, jc), sc, accumulate=True), "broadcast value")
    # all into one element: one long run
    zc, zg = idx_pair(np.zeros(3000, dtype=np.int64))
    vc, vg = pair((3000,), dtype, seed=12)
    same(g.index_put((zg, zg), vc.cuda(), accumulate=True), c.index_put((zc, zc), vc, accumulate=True), "one run")


# ------------------------------------------------------------------ gather / scatter


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_gather(dtype, layout, dim):
    c, g = pair((4, 5, 6), dtype, layout)
    d = dim % 3
    shape = [3, 4, 5]
    shape[d] = 7
    rng = np.random.default_rng(d)
    n = (4, 5, 6)[d]
    ic, ig = idx_pair(rng.integers(0, n, shape))  # negative indices raise, as PyTorch
    same(tt.gather(g, dim, ig), tt.gather(c, dim, ic), "gather")
    ic_t, ig_t = ic.transpose(0, 2), ig.transpose(0, 2)  # non-contiguous index
    if all(ic_t.shape[k] <= (4, 5, 6)[k] or k == d for k in range(3)):
        same(tt.gather(g, dim, ig_t), tt.gather(c, dim, ic_t), "gather, transposed index")


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_scatter(dtype, dim):
    d = dim % 3
    for layout in ["contiguous", "transposed"]:
        c, g = pair((4, 5, 6), dtype, layout)
        c, g = c.contiguous().clone(), g.contiguous().clone()
        # unique destinations along dim (a permutation prefix) so non-add scatter is order-free
        n = (4, 5, 6)[d]
        shape = [3, 4, 5]
        shape[d] = n - 1
        rng = np.random.default_rng(3)
        perm = np.argsort(rng.uniform(size=[s if k != d else n for k, s in enumerate(shape)]), axis=d)
        perm = np.take(perm, np.arange(n - 1), axis=d)
        ic, ig = idx_pair(perm)
        sc, sg = pair([s + 1 for s in shape], dtype, layout, seed=4)  # src bigger than index
        same(tt.scatter(g, dim, ig, sg), tt.scatter(c, dim, ic, sc), "scatter")
        same(tt.scatter(g, dim, ig, value=2), tt.scatter(c, dim, ic, value=2), "scatter value")
        if dtype != "bool":
            # many duplicates (7 > n along dim for dims 0/1): deterministic, adds in the CPU's order
            dshape = [3, 4, 5]
            dshape[d] = 7
            dc, dg = idx_pair(rng.integers(0, n, dshape))
            sc, sg = pair(dshape, dtype, layout, seed=6)
            same(tt.scatter_add(g, dim, dg, sg), tt.scatter_add(c, dim, dc, sc), "scatter_add")
            # in place into a non-contiguous self
            c2 = c.transpose(0, 2).contiguous().transpose(0, 2)
            g2 = g.transpose(0, 2).contiguous().transpose(0, 2)
            assert not g2.is_contiguous()
            c2.scatter_add_(dim, dc, sc)
            g2.scatter_add_(dim, dg, sg)
            same(g2, c2, "scatter_add_")


# ------------------------------------------------------------------ masked_fill / nonzero


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_masked_fill(dtype, layout):
    c, g = pair((4, 5, 6), dtype, layout)
    mc, mg = pair((5, 1), "bool", seed=2)  # broadcast mask
    same(tt.masked_fill(g, mg, 1), tt.masked_fill(c, mc, 1), "broadcast mask")
    mc, mg = pair((4, 5, 6), "bool", layout if layout != "expanded" else "transposed", seed=3)
    same(tt.masked_fill(g, mg, 0), tt.masked_fill(c, mc, 0), "full mask")
    if layout != "expanded":  # in place through a view
        c2, g2 = c.clone().transpose(0, 2), g.clone().transpose(0, 2)
        c2.masked_fill_(mc.transpose(0, 2), -2 if dtype not in ("uint8", "bool") else 1)
        g2.masked_fill_(mg.transpose(0, 2), -2 if dtype not in ("uint8", "bool") else 1)
        same(g2, c2, "masked_fill_ on a view")


@pytest.mark.parametrize("dtype", ALL)
def test_nonzero(dtype):
    for shape in [(4, 5, 6), (7,), (3000, 11), (2, 0, 3)]:
        for layout in ["contiguous", "transposed", "sliced"] if len(shape) > 1 else ["contiguous"]:
            c, g = pair(shape, dtype, layout, seed=1)
            z = np.zeros(int(np.prod(shape)), dtype=bool)  # sprinkle zeros
            z[::3] = True
            zc, zg = pair(shape, "bool", data=z.reshape(shape))
            cz = tt.masked_fill(c, zc, 0)
            gz = tt.masked_fill(g, zg, 0)
            same(tt.nonzero(gz), tt.nonzero(cz), f"nonzero {shape} {layout}")
    if dtype in FLOATS:
        data = np.array([[0.0, -0.0, np.nan], [1.0, -np.inf, 0.0]])
        c, g = pair((2, 3), dtype, data=data)
        same(tt.nonzero(g), tt.nonzero(c), "-0 and NaN")
    c, g = pair((), dtype, data=np.array(1 if dtype != "bool" else True))
    same(tt.nonzero(g), tt.nonzero(c), "0-dim")


# ------------------------------------------------------------------ sort / topk


def with_ties_and_nans(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype in INTS:
        return rng.integers(0 if dtype == "uint8" else -4, 5, shape)  # many ties
    a = rng.integers(-4, 5, shape).astype(np.float64) * 0.5
    a[rng.uniform(size=shape) < 0.1] = np.nan
    a[rng.uniform(size=shape) < 0.05] = -0.0
    a[rng.uniform(size=shape) < 0.05] = np.inf
    a[rng.uniform(size=shape) < 0.05] = -np.inf
    return a


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("descending", [False, True])
def test_sort(dtype, descending):
    for shape, dims in [((6, 37), (0, 1, -1)), ((3, 4, 5), (0, 1, 2)), ((1, 2000), (1,)), ((513, 3), (0, 1)),
                        ((5,), (0,))]:
        for layout in ["contiguous", "transposed", "sliced"] if len(shape) > 1 else ["contiguous"]:
            base = with_ties_and_nans(shape, dtype, seed=len(shape))
            c, g = pair(shape, dtype, layout, data=np.swapaxes(base, -1, -2) if layout == "transposed" else
                        (np.repeat(base, 2, axis=-1) if layout == "sliced" else base))
            for dim in dims:
                vc, ic = tt.sort(c, dim, descending)
                vg, ig = tt.sort(g, dim, descending)
                same(vg, vc, f"values {shape} {layout} dim={dim}")
                same(ig, ic, f"indices {shape} {layout} dim={dim}")
                same(tt.argsort(g, dim, descending), ic, "argsort")


@pytest.mark.parametrize("dtype", ["float32", "int64", "float16"])
def test_sort_long_rows(dtype):
    # rows >= 2**17 take the device-wide radix sort path, one row or several
    for shape in [(200003,), (2, 150000)]:
        base = with_ties_and_nans(shape, dtype, seed=7)
        c, g = pair(shape, dtype, data=base)
        for desc in (False, True):
            vc, ic = tt.sort(c, -1, desc)
            vg, ig = tt.sort(g, -1, desc)
            same(vg, vc, f"values {shape} desc={desc}")
            same(ig, ic, f"indices {shape} desc={desc}")


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("largest", [True, False])
def test_topk(dtype, largest):
    shape = (7, 41)
    base = with_ties_and_nans(shape, dtype, seed=3)
    if dtype == "bool":             # PyTorch's topk takes no bool input, on either device
        for dev in ("cpu", "cuda"):
            with pytest.raises(RuntimeError, match="bool"):
                tt.topk(tt.tensor(base).to(dev), 1, -1, largest)
        return
    for layout in ["contiguous", "transposed"]:
        c, g = pair(shape, dtype, layout, data=base.T if layout == "transposed" else base)
        for dim, ks in [(-1, (0, 1, 5, 41)), (0, (1, 3, 7))]:
            for k in ks:
                vc, ic = tt.topk(c, k, dim, largest)
                vg, ig = tt.topk(g, k, dim, largest)
                same(vg, vc, f"topk values k={k} dim={dim} {layout}")
                same(ig, ic, f"topk indices k={k} dim={dim} {layout}")


def test_sort_scalar_and_empty():
    c, g = pair((), "float32", data=np.array(2.5))
    vc, ic = tt.sort(c)
    vg, ig = tt.sort(g)
    same(vg, vc)
    same(ig, ic)
    c, g = pair((3, 0), "float32", data=np.zeros((3, 0)))
    same(tt.sort(g, -1)[0], tt.sort(c, -1)[0])
    same(tt.sort(g, 0)[1], tt.sort(c, 0)[1])


# ------------------------------------------------------------------ tril/triu, arange, linspace


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_triu_tril(dtype, layout):
    for shape in [(5, 7), (3, 6, 4), (2, 0, 3)]:
        c, g = pair(shape, dtype, layout if shape[-1] else "contiguous")
        for k in (-7, -2, 0, 1, 3, 9):
            same(tt.triu(g, k), tt.triu(c, k), f"triu {shape} k={k}")
            same(tt.tril(g, k), tt.tril(c, k), f"tril {shape} k={k}")


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_arange_linspace(dtype):
    dt = getattr(tt, dtype)
    cases = [(0, 10, 1), (-5, 17, 3), (20, -4, -2), (3, 3, 1)]
    if dtype in FLOATS:
        cases += [(0.0, 1.0, 0.1), (-2.5, 7.3, 0.37), (1e3, -1e3, -17.5)]
    for start, end, step in cases:
        if dtype == "uint8" and (start < 0 or end < 0):
            continue
        same(tt.arange(start, end, step, dtype=dt, device="cuda"), tt.arange(start, end, step, dtype=dt),
             f"arange {start} {end} {step}")
    big = tt.arange(2**40, 2**40 + 5000, 3, dtype=tt.int64, device="cuda") if dtype == "int64" else None
    if big is not None:  # exact int64 arithmetic beyond 2**53 steps
        same(big, tt.arange(2**40, 2**40 + 5000, 3, dtype=tt.int64))
    for start, end, steps in [(0, 1, 11), (-3.3, 7.9, 1001), (5, -5, 2), (2, 2, 1), (0, 1, 0), (1e-3, 1e4, 77777)]:
        if dtype == "uint8" and start < 0:
            continue
        if dtype in INTS and steps > 10000:
            continue
        same(tt.linspace(start, end, steps, dtype=dt, device="cuda"), tt.linspace(start, end, steps, dtype=dt),
             f"linspace {start} {end} {steps}")


# ------------------------------------------------------------------ device-side asserts (keep LAST)


def _run_subprocess(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=300)


def test_zz_out_of_range_index_raises_device_side_assert():
    """An out-of-range gather index trips TT_CUDA_KERNEL_ASSERT; the next CUDA call raises a
    RuntimeError mentioning "device-side assert"; CPU work still runs afterwards. In a
    subprocess because the failed assert poisons this process's CUDA context."""
    code = """
    import numpy as np
    import tinytorch as tt
    x = tt.tensor(np.arange(12.0).reshape(3, 4), dtype=tt.float32).cuda()
    idx = tt.tensor([[0, 4]], dtype=tt.int64).cuda()  # 4 is out of range for dim 1 (size 4)
    try:
        y = tt.gather(x, 1, idx)
        y.cpu()
        tt.cuda.synchronize()
        print("NO ERROR")
    except RuntimeError as e:
        print("RAISED:", e)
    a = tt.tensor(np.arange(6.0), dtype=tt.float32)
    print("CPU OK", float((a * 2).sum().item()))
    """
    r = _run_subprocess(code)
    out = r.stdout + r.stderr
    assert "RAISED:" in r.stdout, out
    assert "device-side assert" in r.stdout, out
    assert "CPU OK 30.0" in r.stdout, out


def test_zz_out_of_range_advanced_index_raises():
    code = """
    import tinytorch as tt
    x = tt.zeros(5).cuda()
    i = tt.tensor([1, -6], dtype=tt.int64).cuda()
    try:
        x[i].cpu()
        print("NO ERROR")
    except RuntimeError as e:
        print("RAISED:", e)
    """
    r = _run_subprocess(code)
    assert "RAISED:" in r.stdout and "device-side assert" in r.stdout, r.stdout + r.stderr
