"""Helpers shared by the CUDA tests: the same values on both devices in a chosen memory layout
(built on each device, so the GPU kernel really sees a strided / broadcast / misaligned operand),
and GPU-vs-CPU comparisons."""
from __future__ import annotations

import math

import numpy as np

import tinytorch as tt

from support.numeric import TOL, to_numpy

INTS = ["int32", "int64", "uint8"]


def layout_view(shape: tuple, layout: str):
    """``(base_shape, view)``: ``view`` of a contiguous tensor of ``base_shape`` has ``shape`` and the
    layout ``layout`` (contiguous, transposed, sliced, expanded, permuted or misaligned; one the
    shape cannot take, e.g. transposed for fewer than 2 dims, is contiguous)."""
    shape = tuple(shape)
    if layout == "transposed" and len(shape) >= 2:
        return shape[:-2] + (shape[-1], shape[-2]), lambda t: t.transpose(-1, -2)
    if layout == "sliced" and len(shape) >= 1:
        return shape[:-1] + (shape[-1] * 2,), lambda t: tt._ops.shape.slice(t, -1, 0, None, 2)
    if layout == "expanded" and len(shape) >= 1:
        return (1,) + shape[1:], lambda t: t.expand(*shape)
    if layout == "permuted":
        return (shape[-1],) + shape[:-1], lambda t: t.permute(*range(1, len(shape)), 0)
    if layout == "misaligned":  # one element past a 16-byte boundary: no vectorized path
        n = int(np.prod(shape))
        return (n + 1,), lambda t: t.narrow(0, 1, n).view(*shape)
    return shape, lambda t: t


def pair(shape, dtype="float32", layout="contiguous", seed=0, requires_grad=False, low=-1.0, high=1.0):
    """(cpu, gpu) tensors holding the same values with the same memory layout on each device: uniform
    in [low, high) for floating dtypes, integers in [-5, 6) ([0, 6) for uint8) for integer ones."""
    rng = np.random.default_rng(seed)
    base, view = layout_view(shape, layout)
    if dtype in INTS:
        data = rng.integers(0 if dtype == "uint8" else -5, 6, base)
    else:
        data = rng.uniform(low, high, base)
    c = tt.tensor(data, dtype=getattr(tt, dtype))
    g = c.cuda()
    c, g = view(c), view(g)
    if requires_grad:
        c.requires_grad_(True)
        g.requires_grad_(True)
    return c, g


def seeded_on_both(fn, seed=1234):
    """``fn(device)`` on the CPU and on the GPU, each after ``manual_seed(seed)``: (cpu, gpu)."""
    tt.manual_seed(seed)
    c = fn("cpu")
    tt.manual_seed(seed)
    g = fn("cuda")
    assert g.device.type == "cuda"
    return c, g


def close(gpu, cpu, dtype, scale=1.0, what="", tol=TOL):
    """GPU vs CPU: device, shape and dtype, then values within ``tol[dtype]`` (rtol, atol) x ``scale``."""
    assert gpu.device.type == "cuda", what
    assert tuple(gpu.shape) == tuple(cpu.shape), what
    assert gpu.dtype == cpu.dtype, what
    rtol, atol = tol.get(dtype, (0, 0))
    np.testing.assert_allclose(to_numpy(gpu), to_numpy(cpu), rtol=rtol * scale, atol=atol * scale, err_msg=what)


def check(gpu, cpu, what="", tol=None, n=1):
    """GPU vs CPU: integers exactly; floats within ``tol`` (default TOL of the dtype), the absolute
    tolerance scaled by the largest finite magnitude and by sqrt(n), n = the number of elements
    reduced into each output (NaN equals NaN)."""
    assert gpu.device.type == "cuda", what
    assert gpu.dtype == cpu.dtype and tuple(gpu.shape) == tuple(cpu.shape), (what, gpu.dtype, cpu.dtype,
                                                                             gpu.shape, cpu.shape)
    g, c = to_numpy(gpu), to_numpy(cpu)
    if not cpu.dtype.is_floating_point:
        np.testing.assert_array_equal(g, c, err_msg=what)
        return
    rtol, atol = tol or TOL[cpu.dtype.name]
    scale = max(1.0, float(np.nanmax(np.abs(np.where(np.isfinite(c), c, 0)), initial=0.0)))
    np.testing.assert_allclose(g, c, rtol=rtol, atol=atol * scale * math.sqrt(n), err_msg=what)
