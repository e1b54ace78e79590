"""complex64 / complex128 tensors: storage, views between complex and real (view_as_real,
view_as_complex, .real, .imag), casts, promotion, printing, and the arithmetic composed over the real
view (elementwise, reductions, matmul), each against numpy's complex128 values on random,
non-contiguous and broadcast inputs; gradients against finite differences (PyTorch's convention:
dL/dRe + i dL/dIm); Llama's complex rotary embedding against its real-valued form."""
from __future__ import annotations

import math

import numpy as np
import pytest

import tinytorch as tt
from support.numeric import DEVICES, TOL, assert_close

CDTYPES = ["complex64", "complex128"]
REAL_OF = {"complex64": "float32", "complex128": "float64"}


def crand(shape, dtype="complex64", seed=0, device="cpu", layout="contiguous"):
    """A random complex tensor (values in the unit square) and its complex128 numpy values."""
    rng = np.random.default_rng(seed)
    full = tuple(shape[:-1]) + (shape[-1] * 2,) if layout == "sliced" else \
        tuple(shape[:-2]) + (shape[-1], shape[-2]) if layout == "transposed" else tuple(shape)
    ref = rng.uniform(-1, 1, full) + 1j * rng.uniform(-1, 1, full)
    t = tt.tensor(ref, dtype=getattr(tt, dtype), device=device)
    if layout == "sliced":
        t, ref = t[..., ::2], ref[..., ::2]
    elif layout == "transposed":
        t, ref = t.transpose(-1, -2), ref.swapaxes(-1, -2)
    return t, t.cpu().numpy().astype(np.complex128)


def values(t):
    return t.detach().cpu().numpy()


# ---------------------------------------------------------------- storage, dtypes, views

def test_dtype_objects():
    assert tt.complex64.is_complex and tt.complex128.is_complex and not tt.float32.is_complex
    assert (tt.complex64.itemsize, tt.complex128.itemsize) == (8, 16)
    assert tt.cfloat is tt.complex64 and tt.cdouble is tt.complex128
    assert not tt.complex64.is_floating_point and tt.complex64.is_signed
    assert tt.tensor([1 + 2j]).dtype is tt.complex64
    assert tt.tensor([1.0, 2j]).dtype is tt.complex64
    assert tt.tensor(np.array([1 + 2j])).dtype is tt.complex128
    tt.set_default_dtype(tt.float64)
    try:
        assert tt.tensor([1j]).dtype is tt.complex128
    finally:
        tt.set_default_dtype(tt.float32)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", CDTYPES)
def test_values_round_trip(dtype, device):
    data = [[1 + 2j, -3.5 + 0.25j], [0j, -1j]]
    t = tt.tensor(data, dtype=getattr(tt, dtype), device=device)
    assert t.is_complex() and t.dtype.name == dtype and t.shape == (2, 2)
    np.testing.assert_array_equal(t.cpu().numpy(), np.array(data))
    assert t.tolist() == data
    assert t[0, 1].item() == -3.5 + 0.25j and isinstance(t[0, 1].item(), complex)
    assert t.numpy().dtype == np.dtype(dtype) if device == "cpu" else True
    np.testing.assert_array_equal(tt.from_numpy(np.array(data, dtype)).numpy(), np.array(data))
    # shape ops and indexing work on the stored pairs
    np.testing.assert_array_equal(values(t.t().contiguous()), np.array(data).T)
    np.testing.assert_array_equal(values(t.reshape(4)[1:3]), np.array(data).reshape(4)[1:3])
    np.testing.assert_array_equal(values(tt.cat([t, t])), np.concatenate([data, data]))
    np.testing.assert_array_equal(values(tt.zeros(3, dtype=getattr(tt, dtype), device=device)), np.zeros(3))


@pytest.mark.parametrize("device", DEVICES)
def test_views_share_memory(device):
    z = tt.tensor([[1 + 2j, 3 - 4j], [5 + 6j, -7 - 8j]], device=device)
    r = tt.view_as_real(z)
    assert r.dtype is tt.float32 and r.shape == (2, 2, 2) and r.stride() == (4, 2, 1)
    np.testing.assert_array_equal(values(r)[..., 1], [[2, -4], [6, -8]])
    r[0, 0, 1] = 9.0                       # writes go through to the complex tensor
    assert z[0, 0].item() == 1 + 9j
    back = tt.view_as_complex(r)
    assert back.dtype is tt.complex64 and back.data_ptr() == z.data_ptr()
    np.testing.assert_array_equal(values(z.real), [[1, 3], [5, -7]])
    np.testing.assert_array_equal(values(z.imag), [[9, -4], [6, -8]])
    z.imag[1] = 0.0
    np.testing.assert_array_equal(values(z)[1], [5, -7])
    z.real = tt.ones(2, 2, device=device)
    np.testing.assert_array_equal(values(z), [[1 + 9j, 1 - 4j], [1, 1]])
    # a strided complex tensor's real view doubles its strides
    col = z[:, 1]
    assert tt.view_as_real(col).stride() == (4, 1) and tt.view_as_real(col).storage_offset() == 2
    x = tt.randn(3, 4, device=device)
    assert x.real is x
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex dtypes"):
        x.imag


def test_view_errors():
    with pytest.raises(RuntimeError, match="last dimension of size 2"):
        tt.view_as_complex(tt.zeros(3, 3))
    with pytest.raises(RuntimeError, match="last dimension with stride 1"):
        tt.view_as_complex(tt.zeros(2, 4)[:, ::2].t().contiguous().t())
    with pytest.raises(RuntimeError, match="stride divisible by 2"):
        tt.view_as_complex(tt.zeros(3, 3)[:, :2])
    with pytest.raises(RuntimeError, match="only supported for float and double"):
        tt.view_as_complex(tt.zeros(3, 2, dtype=tt.float16))
    with pytest.raises(RuntimeError, match="only supported for complex tensors"):
        tt.view_as_real(tt.zeros(3))


@pytest.mark.parametrize("device", DEVICES)
def test_casts(device):
    z = tt.tensor([1.5 + 2j, -3 - 0.5j], device=device)
    np.testing.assert_array_equal(values(z.to(tt.float32)), [1.5, -3])      # the imaginary part is discarded
    np.testing.assert_array_equal(values(z.to(tt.int64)), [1, -3])
    np.testing.assert_array_equal(values(z.to(tt.bool)), [True, True])
    np.testing.assert_array_equal(values(tt.tensor([0j, 1j], device=device).to(tt.bool)), [False, True])
    np.testing.assert_array_equal(values(z.to(tt.complex128)), [1.5 + 2j, -3 - 0.5j])
    np.testing.assert_array_equal(values(tt.tensor([1, -2], device=device).to(tt.complex64)), [1, -2])
    np.testing.assert_array_equal(values(tt.tensor([0.5], dtype=tt.bfloat16, device=device).to(tt.complex64)), [0.5])
    np.testing.assert_array_equal(values(z.to(tt.bfloat16).float()), [1.5, -3])


def test_promotion():
    c64, c128 = tt.complex64, tt.complex128
    for other, want in [(tt.float64, c128), (tt.float32, c64), (tt.float16, c64), (tt.bfloat16, c64), (tt.int64, c64),
                        (tt.int8, c64), (tt.bool, c64), (tt.uint8, c64), (c128, c128)]:
        assert tt.promote_types(c64, other) is want and tt.promote_types(other, c64) is want
    assert tt.promote_types(c128, tt.float32) is c128
    with pytest.raises(RuntimeError, match="uint16, uint32, uint64"):
        tt.promote_types(c64, tt.uint32)
    assert (tt.ones(2, dtype=tt.float64) * 1j).dtype is c128
    assert (tt.ones(2) * 1j).dtype is c64
    assert (tt.ones(2, dtype=tt.int64) * 1j).dtype is c64
    assert (tt.ones(2, dtype=tt.complex128) * tt.ones(2)).dtype is c128
    # a 0-dim complex tensor with a dimensioned float64 one: the float's precision, complex category
    assert (tt.ones(2, dtype=tt.float64) + tt.tensor(1j)).dtype is c128


def test_printing():
    assert repr(tt.tensor([1 + 2j, 3 - 1j])) == "tensor([1.+2.j, 3.-1.j])"
    assert repr(tt.tensor([0.5 + 2.25j], dtype=tt.complex128)) == "tensor([0.5000+2.2500j], dtype=tinytorch.complex128)"
    assert repr(tt.tensor(1j)) == "tensor(0.+1.j)"
    # real and imaginary parts pick their notations separately (torch's output)
    assert repr(tt.tensor([[1.5 + 2j, -3 - 0.5j], [1e-5 + 1j, 100 + 0j]])) == (
        "tensor([[ 1.5000e+00+2.0000j, -3.0000e+00-0.5000j],\n"
        "        [ 1.0000e-05+1.0000j,  1.0000e+02+0.0000j]])")


def test_requires_grad_and_errors():
    z = tt.zeros(2, dtype=tt.complex64, requires_grad=True)
    assert z.requires_grad
    with pytest.raises(NotImplementedError, match="sigmoid"):
        tt.sigmoid(tt.zeros(2, dtype=tt.complex64))
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
        tt.ones(2).mul_(1j)
    with pytest.raises(RuntimeError, match="same dtype"):
        tt.zeros(2, 2, dtype=tt.complex64) @ tt.zeros(2, 2, dtype=tt.complex128)


# ---------------------------------------------------------------- arithmetic against numpy

BINARY = [("add", lambda a, b: a + b, np.add), ("sub", lambda a, b: a - b, np.subtract),
          ("mul", lambda a, b: a * b, np.multiply), ("div", lambda a, b: a / b, np.divide)]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", CDTYPES)
@pytest.mark.parametrize("layout", ["contiguous", "sliced", "transposed"])
@pytest.mark.parametrize("name,op,ref", BINARY, ids=[b[0] for b in BINARY])
def test_binary(name, op, ref, layout, dtype, device):
    a, an = crand((3, 4), dtype, 0, device, layout)
    b, bn = crand((1, 4), dtype, 1, device)                        # broadcast
    assert_close(op(a, b), ref(an, bn), dtype)
    real = tt.tensor(np.linspace(0.5, 2, 4), dtype=tt.float32, device=device)
    rn = values(real).astype(np.float64)
    assert_close(op(a, real), ref(an, rn), dtype)                   # complex with real tensors, both orders
    assert_close(op(real, a), ref(rn, an), dtype)
    assert_close(op(a, 0.5 - 2j), ref(an, 0.5 - 2j), dtype)         # with Python numbers
    assert_close(op(2.5, a), ref(2.5, an), dtype)
    assert op(a, b).dtype.name == dtype
    c = a.clone()
    getattr(c, name + "_")(b)                                       # in place
    assert_close(c, ref(an, bn), dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", CDTYPES)
def test_unary_and_reductions(dtype, device):
    z, zn = crand((2, 3, 4), dtype, 3, device, "sliced")
    checks = [(-z, -zn), (tt.conj(z), np.conj(zn)), (z.conj_physical(), np.conj(zn)), (z.abs(), np.abs(zn)),
              (tt.angle(z), np.angle(zn)), (z.exp(), np.exp(zn)), (z.log(), np.log(zn)), (z.sqrt(), np.sqrt(zn)),
              (z.reciprocal(), 1 / zn), (z.square(), zn * zn), (z ** 3, zn ** 3), (z.sgn(), zn / np.abs(zn)),
              (z.sum(), zn.sum()), (z.sum(dim=-1), zn.sum(-1)), (z.sum((0, 2), keepdim=True), zn.sum((0, 2), keepdims=True)),
              (z.mean(1), zn.mean(1)), (tt.isreal(z), np.isreal(zn)), (z == z.conj(), zn == np.conj(zn)),
              (z != z, zn != zn), (z @ z.transpose(-1, -2), zn @ zn.swapaxes(-1, -2)), (z[0, 0] @ z[0, 1], zn[0, 0] @ zn[0, 1])]
    for i, (got, want) in enumerate(checks):
        tol_dtype = dtype if got.dtype.is_complex else REAL_OF[dtype] if got.dtype.is_floating_point else None
        assert_close(got, want, tol_dtype, what=f"check {i}")
    assert z.abs().dtype is (tt.float32 if dtype == "complex64" else tt.float64)
    assert tt.real(z).dtype is z.abs().dtype and tt.imag(z).shape == z.shape
    assert tt.angle(tt.tensor([-2.0, 0.0, 3.0])).tolist() == [3.1415927410125732, 0.0, 0.0]   # torch's, float32


@pytest.mark.parametrize("device", DEVICES)
def test_complex_and_polar(device):
    re = tt.tensor([1.0, -2.0, 0.5], device=device)
    im = tt.tensor([0.0, 3.0, -1.0], device=device)
    np.testing.assert_array_equal(values(tt.complex(re, im)), [1, -2 + 3j, 0.5 - 1j])
    r, th = tt.tensor([1.0, 2.0], dtype=tt.float64, device=device), tt.tensor([0.5, -2.0], dtype=tt.float64, device=device)
    p = tt.polar(r, th)
    assert p.dtype is tt.complex128
    assert_close(p, np.array([1.0, 2.0]) * np.exp(1j * np.array([0.5, -2.0])), "complex128")
    with pytest.raises(RuntimeError, match="same dtype"):
        tt.complex(re, im.double())


# ---------------------------------------------------------------- gradients

def _fd_grad(f, z0: np.ndarray, eps=1e-6):
    """Central differences of the real function f at complex z0: dL/dRe + i dL/dIm."""
    g = np.zeros_like(z0)
    for idx in np.ndindex(z0.shape):
        for unit in (1, 1j):
            zp, zm = z0.copy(), z0.copy()
            zp[idx] += eps * unit
            zm[idx] -= eps * unit
            g[idx] += unit * (f(zp) - f(zm)) / (2 * eps)
    return g


GRAD_CASES = [
    ("mul", lambda z, w: z * w), ("div", lambda z, w: z / w), ("add_real", lambda z, w: z + w.real * 2),
    ("abs", lambda z, w: z.abs() * w.real), ("angle", lambda z, w: tt.angle(z) * w.imag), ("exp", lambda z, w: (z * w).exp()),
    ("conj", lambda z, w: z.conj() * w), ("sum", lambda z, w: (z * w).sum(0)), ("matmul", lambda z, w: z @ w.transpose(0, 1)),
    ("polar", lambda z, w: tt.polar(z.abs(), tt.angle(z) * 2.0) * w),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name,fn", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradients_match_finite_differences(name, fn, device):
    z, zn = crand((3, 3), "complex128", 5, device)
    w, wn = crand((3, 3), "complex128", 6, device)
    weights = np.random.default_rng(7).uniform(-1, 1, (3, 3, 2))

    def loss(t, wt):   # a real loss of the (complex or real) result
        out = fn(t, wt)
        out = tt.view_as_real(out) if out.dtype.is_complex else tt.stack([out, out * 0], -1)
        return (out * tt.tensor(weights[: out.shape[0], : out.shape[1]] if out.dim() == 3 else weights[0], device=device)).sum()

    z.requires_grad_(True)
    loss(z, w).backward()
    fd = _fd_grad(lambda v: loss(tt.tensor(v, device=device), w).item(), zn)
    assert z.grad.dtype is tt.complex128
    np.testing.assert_allclose(values(z.grad), fd, rtol=1e-6, atol=1e-7)


def test_gradient_accumulates_into_a_complex_leaf():
    z = tt.tensor([1 + 1j, 2 - 1j], requires_grad=True)
    (tt.view_as_real(z * 2).sum() + tt.view_as_real(z * 3j).sum()).backward()
    # d/dRe: 2 + 0 (re of 3j z is -3 im) ...: L = 2re + 2im + (-3im + 3re) per element
    np.testing.assert_allclose(values(z.grad), [5 - 1j, 5 - 1j])


# ---------------------------------------------------------------- Llama's complex rotary embedding

def _precompute_freqs_cis(dim: int, end: int, theta: float = 10000.0):        # Meta's llama/model.py
    freqs = 1.0 / (theta ** (tt.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = tt.arange(end, device=freqs.device)
    freqs = tt.outer(t, freqs).float()
    return tt.polar(tt.ones_like(freqs), freqs)


def _apply_rotary_emb(xq, freqs_cis):
    xq_ = tt.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    shape = [d if i == 1 or i == xq_.ndim - 1 else 1 for i, d in enumerate(xq_.shape)]
    xq_out = tt.view_as_real(xq_ * freqs_cis.view(*shape)).flatten(3)
    return xq_out.type_as(xq)


def _rotary_real(x, dim, seqlen):   # the same rotation on (even, odd) pairs, with cos and sin
    freqs = 1.0 / (10000.0 ** (tt.arange(0, dim, 2, device=x.device)[: (dim // 2)].float() / dim))
    ang = tt.outer(tt.arange(seqlen, device=x.device).float(), freqs)[None, :, None, :]
    x0, x1 = x[..., 0::2], x[..., 1::2]
    return tt.stack([x0 * ang.cos() - x1 * ang.sin(), x0 * ang.sin() + x1 * ang.cos()], -1).flatten(3)


@pytest.mark.parametrize("device", DEVICES)
def test_llama_complex_rope_matches_real_rotation(device):
    B, T, H, D = 2, 5, 3, 8
    x = tt.randn(B, T, H, D, generator=tt.Generator().manual_seed(0)).to(device).requires_grad_(True)
    x2 = x.detach().clone().requires_grad_(True)
    freqs_cis = _precompute_freqs_cis(D, T * 2).to(device)[:T]
    assert freqs_cis.dtype is tt.complex64 and freqs_cis.shape == (T, D // 2)
    got, want = _apply_rotary_emb(x, freqs_cis), _rotary_real(x2, D, T)
    assert got.dtype is tt.float32 and got.shape == x.shape
    assert_close(got, want, "float32")
    g = tt.randn(B, T, H, D, generator=tt.Generator().manual_seed(1)).to(device)
    (got * g).sum().backward()
    (want * g).sum().backward()
    assert_close(x.grad, x2.grad, "float32")


# ---------------------------------------------------------------- checkpoints

def test_torch_checkpoint_of_complex_tensors_loads(tmp_path):
    import os
    d = tt.load(os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "torch_checkpoints", "complex.pt"))
    assert d["c64"].dtype is tt.complex64 and d["c128"].dtype is tt.complex128
    assert d["c64"].tolist() == [[1 + 2j, -3.5j], [0.25 + 0j, -1 - 1j]] and d["c64_column"].tolist() == [-3.5j, -1 - 1j]
    assert d["c128"].tolist() == [2.5 - 0.5j]
    tt.save(d, tmp_path / "again.pt", format="torch")       # and tinytorch writes them in torch's format
    again = tt.load(tmp_path / "again.pt")
    assert all(again[k].tolist() == d[k].tolist() and again[k].dtype is d[k].dtype for k in d)
