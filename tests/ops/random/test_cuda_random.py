"""CUDA random kernels against the CPU ones: the same seed gives the same stream on both devices.

Both backends run the same Philox4x32-10 code (tinytorch/kernels/random.h, host/device) with
counter = offset + row-major element index, so uniform, bernoulli, randint, randperm and dropout
are bit-equal; normal goes through log/cos, whose last bit may differ between libdevice and the
host libm, so it is compared within a few ulps."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt
from tinytorch import _C, _ops
from tinytorch._core.tensor_base import _wrap

from support.cuda_helpers import seeded_on_both
from support.numeric import to_numpy

pytestmark = pytest.mark.cuda

FLOATS = ["float32", "float16", "bfloat16", "float64"]
INTS = ["int64", "int32", "uint8"]
# normal: a few float32 ulps (|x| <~ 6); 16-bit results may round across one of their ulps
NORMAL_TOL = {"float64": (1e-13, 1e-13), "float32": (2e-6, 2e-6), "float16": (1e-3, 1e-3),
              "bfloat16": (8e-3, 8e-3)}


def equal(gpu, cpu, what=""):
    assert gpu.dtype == cpu.dtype and tuple(gpu.shape) == tuple(cpu.shape), what
    if gpu.numel() == 0:
        return
    np.testing.assert_array_equal(to_numpy(gpu.cpu()), to_numpy(cpu), err_msg=what)


@pytest.mark.parametrize("dtype", FLOATS)
def test_rand_uniform_bit_equal(dtype):
    dt = getattr(tt, dtype)
    c, g = seeded_on_both(lambda d: tt.rand(1000, 37, dtype=dt, device=d))
    equal(g, c, "rand")
    c, g = seeded_on_both(lambda d: tt.empty(3, 5000, dtype=dt, device=d).uniform_(-2.5, 7.0))
    equal(g, c, "uniform_(-2.5, 7)")
    # non-contiguous target: element i is still the i-th in row-major order of the view
    c, g = seeded_on_both(lambda d: tt.empty(40, 30, dtype=dt, device=d).transpose(0, 1).uniform_(1.0, 2.0))
    equal(g, c, "uniform_ on a transposed view")
    c, g = seeded_on_both(lambda d: _ops.shape.slice(tt.zeros(10, 64, dtype=dt, device=d), -1, 0, None, 2).uniform_())
    equal(g, c, "uniform_ on a sliced view")


@pytest.mark.parametrize("dtype", FLOATS)
def test_randn_normal_close(dtype):
    dt = getattr(tt, dtype)
    rtol, atol = NORMAL_TOL[dtype]
    for fn in (lambda d: tt.randn(513, 129, dtype=dt, device=d),
               lambda d: tt.empty(100, 77, dtype=dt, device=d).transpose(0, 1).normal_(3.0, 0.5)):
        c, g = seeded_on_both(fn)
        a, b = to_numpy(g.cpu()), to_numpy(c)
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)  # ~20% differ in the last ulp on an H200
    c, g = seeded_on_both(lambda d: tt.randn(300000, dtype=dt, device=d))
    a = to_numpy(g.cpu())
    assert abs(a.mean()) < 0.01 and abs(a.std() - 1) < 0.01


def test_generators_per_device_and_offsets():
    # explicit generators, and the default CUDA generator advancing like the CPU one
    gc = tt.Generator("cpu").manual_seed(77)
    gg = tt.Generator("cuda").manual_seed(77)
    for shape in [(5,), (1000,), (3, 333)]:
        equal(tt.rand(*shape, generator=gg, device="cuda"), tt.rand(*shape, generator=gc), f"stream {shape}")
    np.testing.assert_array_equal(gg.get_state().numpy(), gc.get_state().numpy())
    tt.manual_seed(5)
    a = [tt.rand(100, device="cuda") for _ in range(3)]
    tt.manual_seed(5)
    b = [tt.rand(100) for _ in range(3)]
    for x, y in zip(a, b):
        equal(x, y, "consecutive draws")
    tt.manual_seed(6)
    assert not np.array_equal(to_numpy(tt.rand(100, device="cuda").cpu()), to_numpy(b[0]))


@pytest.mark.parametrize("dtype", FLOATS + INTS + ["bool"])
def test_bernoulli_(dtype):
    dt = getattr(tt, dtype)
    for p in (0.0, 0.3, 0.5, 1.0):
        c, g = seeded_on_both(lambda d: tt.empty(77, 91, dtype=dt, device=d).bernoulli_(p))
        equal(g, c, f"bernoulli_ p={p}")
    c, g = seeded_on_both(lambda d: tt.empty(50, 40, dtype=dt, device=d).transpose(0, 1).bernoulli_(0.7))
    equal(g, c, "bernoulli_ on a view")


@pytest.mark.parametrize("dtype", FLOATS)
def test_bernoulli_probs(dtype):
    dt = getattr(tt, dtype)
    probs = np.random.default_rng(0).uniform(0, 1, (64, 33))
    probs[0, :5] = [0, 1, 0.5, 1e-9, 1 - 1e-9]
    pc = tt.tensor(probs, dtype=dt)
    pg = pc.cuda()
    c, g = seeded_on_both(lambda d: tt.bernoulli(pc if d == "cpu" else pg))
    equal(g, c, "bernoulli(probs)")
    pt = pc.transpose(0, 1)  # non-contiguous probs
    c, g = seeded_on_both(lambda d: tt.bernoulli(pt if d == "cpu" else pg.transpose(0, 1)))
    equal(g, c, "bernoulli(probs.T)")


@pytest.mark.parametrize("dtype", INTS + FLOATS + ["bool"])
def test_randint(dtype):
    dt = getattr(tt, dtype)
    ranges = [(0, 2)] if dtype == "bool" else [(0, 10), (3, 250)]
    if dtype in ("int64", "int32", "float32", "float64"):
        ranges += [(-1000, 1000)]
    if dtype == "int64":
        ranges += [(-2**62, 2**62), (-5, 2**40)]
    for lo, hi in ranges:
        c, g = seeded_on_both(lambda d: tt.randint(lo, hi, (123, 45), dtype=dt, device=d))
        equal(g, c, f"randint [{lo}, {hi})")


def test_randperm():
    for n in (0, 1, 10, 1000, 200003):  # the last takes the long-row sort path
        c, g = seeded_on_both(lambda d: tt.randperm(n, device=d))
        equal(g, c, f"randperm({n})")
        a = to_numpy(g.cpu())
        np.testing.assert_array_equal(np.sort(a), np.arange(n))
    c, g = seeded_on_both(lambda d: tt.randperm(500, dtype=tt.int32, device=d))
    equal(g, c, "randperm int32")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("p", [0.1, 0.5, 0.9, 1.0])
def test_dropout_mask_and_backward(dtype, p):
    dt = getattr(tt, dtype)
    x = tt.tensor(np.random.default_rng(1).uniform(-2, 2, (64, 130)), dtype=dt)
    xg = x.cuda()
    for xc, xgv, what in [(x, xg, "contiguous"), (x.transpose(0, 1), xg.transpose(0, 1), "transposed")]:
        tt.manual_seed(9)
        yc, mc = _C.dropout(xc._impl, p, True, None)
        tt.manual_seed(9)
        yg, mg = _C.dropout(xgv._impl, p, True, None)
        yc, mc, yg, mg = _wrap(yc), _wrap(mc), _wrap(yg), _wrap(mg)
        equal(mg, mc, f"mask {what}")
        equal(yg, yc, f"y {what}")
        # backward: grad * mask / (1 - p), mask broadcast and grad non-contiguous
        gc = tt.tensor(np.random.default_rng(2).uniform(-1, 1, tuple(xc.shape)[::-1]), dtype=dt).transpose(0, 1)
        gg = gc.cuda()
        equal(_wrap(_C.dropout_backward(gg._impl, mg._impl, p)), _wrap(_C.dropout_backward(gc._impl, mc._impl, p)),
              f"dropout_backward {what}")
        mrow_c, mrow_g = mc.narrow(0, 0, 1), mg.narrow(0, 0, 1)
        equal(_wrap(_C.dropout_backward(gg._impl, mrow_g._impl, p)),
              _wrap(_C.dropout_backward(gc._impl, mrow_c._impl, p)), f"dropout_backward broadcast mask {what}")
    # the nn.functional path draws from the same stream
    c, g = seeded_on_both(lambda d: tt.nn.functional.dropout(x if d == "cpu" else xg, p, True))
    equal(g, c, "F.dropout")


@pytest.mark.parametrize("dtype", FLOATS)
def test_dropout_odd_sizes_and_misaligned_input(dtype):
    """The vector kernel's partial last group and the scalar kernel (an input 1 element past an
    aligned start) draw the CPU's mask too."""
    dt = getattr(tt, dtype)
    for n in (1, 3, 5, 17, 4099, (1 << 20) + 7):
        base = tt.tensor(np.random.default_rng(n).uniform(-2, 2, n + 1), dtype=dt)
        for what, xc in (("aligned", base.narrow(0, 0, n)), ("misaligned", base.narrow(0, 1, n))):
            xg = base.cuda().narrow(0, 0 if what == "aligned" else 1, n)
            tt.manual_seed(5)
            yc, mc = _C.dropout(xc._impl, 0.4, True, None)
            tt.manual_seed(5)
            yg, mg = _C.dropout(xg._impl, 0.4, True, None)
            equal(_wrap(mg), _wrap(mc), f"mask n={n} {what}")
            equal(_wrap(yg), _wrap(yc), f"y n={n} {what}")
