"""int8 and int16 as full integer dtypes, uint16/uint32/uint64 as storage types (casts, copies,
fills, indexing, shape ops; arithmetic raises NotImplementedError), as in PyTorch. Promotion is
checked against torch's own table (tests/fixtures/promotion_table.json, made by
make_promotion_table.py), values against numpy's integer arithmetic (which wraps as torch's does)."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import tinytorch as tt

FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.cuda)]
FULL = ["int8", "int16"]
STORAGE = ["uint16", "uint32", "uint64"]


def test_dtype_objects():
    for name, size, signed in [("int8", 1, True), ("int16", 2, True), ("uint16", 2, False), ("uint32", 4, False),
                               ("uint64", 8, False)]:
        d = getattr(tt, name)
        assert (d.itemsize, d.is_signed, d.is_floating_point, repr(d)) == (size, signed, False, f"tinytorch.{name}")
        i, n = tt.iinfo(d), np.iinfo(name)
        assert (i.min, i.max, i.bits) == (int(n.min), int(n.max), int(n.bits))
    assert tt.short is tt.int16
    assert tt.tensor([1]).short().dtype is tt.int16 and tt.tensor([1]).char().dtype is tt.int8
    assert tt.ShortTensor([1, 2]).dtype is tt.int16 and isinstance(tt.zeros(1, dtype=tt.int8), tt.CharTensor)
    assert tt.zeros(1, dtype=tt.int8).type() == "torch.CharTensor"
    assert tt.zeros(1, dtype=tt.uint32).type() == "torch.UInt32Tensor"


def test_promotion_matches_torch():
    ref = json.load(open(os.path.join(FIXTURES, "promotion_table.json")))
    names = ref["names"]
    for a in names:
        for b, want in zip(names, ref["table"][a]):
            if want is None:
                with pytest.raises(RuntimeError, match="Promotion for uint16, uint32, uint64 types is not supported"):
                    tt.promote_types(getattr(tt, a), getattr(tt, b))
            else:
                assert tt.promote_types(getattr(tt, a), getattr(tt, b)) is getattr(tt, want), (a, b)


def _pair(dtype, device, shape=(3, 4), seed=0):
    rng = np.random.default_rng(seed)
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)
    b = rng.integers(info.min, info.max, shape[-1:], endpoint=True).astype(dtype)
    b[b == 0] = 3
    return a, b, tt.tensor(a, device=device), tt.tensor(b, device=device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FULL)
def test_arithmetic_wraps_as_numpy(dtype, device):
    a, b, x, y = _pair(dtype, device)
    with np.errstate(all="ignore"):
        cases = {"add": (x + y, a + b), "sub": (x - y, a - b), "mul": (x * y, a * b),
                 "floor_divide": (x // y, a // b), "remainder": (x % y, a % b), "neg": (-x, -a),
                 "abs": (x.abs(), np.abs(a)), "bitwise_xor": (x ^ y, a ^ b), "max": (tt.maximum(x, y), np.maximum(a, b)),
                 "transposed add": (x.t() + 1, a.T + dtype_one(dtype))}
    for name, (got, want) in cases.items():
        assert got.dtype is getattr(tt, dtype), name
        np.testing.assert_array_equal(got.cpu().numpy(), want, err_msg=name)
    np.testing.assert_array_equal((x < y).cpu().numpy(), a < b)
    assert x.sum().dtype is tt.int64 and x.sum().item() == int(a.astype(np.int64).sum())
    np.testing.assert_array_equal(x.cumsum(1).cpu().numpy(), np.cumsum(a.astype(np.int64), 1))
    np.testing.assert_array_equal(x.sort(-1).values.cpu().numpy(), np.sort(a, -1))
    assert x.max().item() == a.max() and x.argmin().item() == int(np.argmin(a))
    np.testing.assert_array_equal((x + 1.5).cpu().numpy(), a.astype(np.float32) + np.float32(1.5))
    assert (x + 1000).dtype is getattr(tt, dtype)        # a Python int does not widen the tensor (torch)


def dtype_one(dtype):
    return np.array(1, dtype)


@pytest.mark.parametrize("device", DEVICES)
def test_int8_matmul_and_casts(device):
    a, _, x, _ = _pair("int8", device, (3, 5))
    b = np.arange(-7, 8, dtype=np.int8).reshape(5, 3)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal((x @ tt.tensor(b, device=device)).cpu().numpy(), a @ b)
    f = tt.tensor([-130.7, -1.5, 0.2, 127.9], device=device)
    np.testing.assert_array_equal(f.to(tt.int16).cpu().numpy(), np.array([-130, -1, 0, 127], np.int16))
    np.testing.assert_array_equal(x.float().cpu().numpy(), a.astype(np.float32))
    np.testing.assert_array_equal(x.to(tt.int16).to(tt.bfloat16).float().cpu().numpy(), a.astype(np.float32))


@pytest.mark.parametrize("dtype", FULL + STORAGE)
def test_fill_checks_the_range_as_torch(dtype):
    info = np.iinfo(dtype)
    t = tt.zeros(2, dtype=getattr(tt, dtype))
    top = min(int(info.max), 2**53)    # fill's value travels as a double (exact to 2**53)
    assert t.fill_(top).tolist() == [top] * 2
    with pytest.raises(RuntimeError, match="without overflow"):
        t.fill_(float(info.max) * 4 + 4)
    if info.min < 0:
        with pytest.raises(RuntimeError, match="without overflow"):
            t.fill_(int(info.min) - 1)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", STORAGE)
def test_storage_types_move_but_do_not_compute(dtype, device):
    info = np.iinfo(dtype)
    a = np.array([[0, 1, int(info.max)], [7, int(info.max) - 1, 3]], dtype)
    x = tt.tensor(a, device=device)
    assert x.dtype is getattr(tt, dtype) and x.cpu().numpy().dtype == np.dtype(dtype)
    np.testing.assert_array_equal(x.cpu().numpy(), a)
    np.testing.assert_array_equal(tt.cat([x, x.flip(0)]).cpu().numpy(), np.concatenate([a, a[::-1]]))
    np.testing.assert_array_equal(x.t().contiguous().cpu().numpy(), a.T)
    np.testing.assert_array_equal(x[:, tt.tensor([2, 0], device=device)].cpu().numpy(), a[:, [2, 0]])
    np.testing.assert_array_equal(x.to(tt.float64).cpu().numpy(), a.astype(np.float64))
    assert x[0, 2].item() == int(info.max)
    assert tt.full((2,), 5, dtype=getattr(tt, dtype), device=device).tolist() == [5, 5]
    assert repr(tt.tensor([1, 2], dtype=getattr(tt, dtype))) == f"tensor([1, 2], dtype=tinytorch.{dtype})"
    with pytest.raises(NotImplementedError, match=f"not implemented for {dtype}.*storage types"):
        x + x
    with pytest.raises(NotImplementedError, match=f"not implemented for {dtype}"):
        x.sum()
    with pytest.raises(RuntimeError, match="Promotion for uint16, uint32, uint64"):
        x + tt.ones(3, dtype=tt.int32, device=device)


@pytest.mark.parametrize("dtype", FULL + STORAGE)
def test_numpy_dlpack_and_files_round_trip(dtype, tmp_path):
    info = np.iinfo(dtype)
    a = np.array([int(info.min), 0, 1, int(info.max)], dtype)
    x = tt.from_numpy(a)
    assert x.dtype is getattr(tt, dtype) and np.shares_memory(x.numpy(), a)
    np.testing.assert_array_equal(np.from_dlpack(x), a)
    np.testing.assert_array_equal(tt.from_dlpack(a).numpy(), a)
    tt.save({"x": x}, tmp_path / "x.st")
    back = tt.load(tmp_path / "x.st")["x"]
    assert isinstance(back, tt.Tensor) and back.dtype is x.dtype
    np.testing.assert_array_equal(back.numpy(), a)
    if dtype in STORAGE:    # torch pickles these through untyped storages, which tinytorch only reads
        with pytest.raises(TypeError, match=f"can't save a {dtype} tensor"):
            tt.save({"x": x}, tmp_path / "x.pt", format="torch")
        return
    tt.save({"x": x}, tmp_path / "x.pt", format="torch")
    np.testing.assert_array_equal(tt.load(tmp_path / "x.pt")["x"].numpy(), a)


def test_a_torch_int8_checkpoint_loads_as_a_tensor():
    q = tt.load(os.path.join(FIXTURES, "torch_checkpoints", "int8.pt"))["q"]
    assert q.dtype is tt.int8 and q.tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("device", DEVICES)
def test_view_dtype_reinterprets_the_bytes(device):
    """Tensor.view(dtype) as PyTorch's: the same memory read as another dtype (values from torch 2.13)."""
    x = tt.tensor([1.0, 2.0], device=device)
    assert x.view(tt.int32).tolist() == [1065353216, 1073741824]
    assert tt.tensor([0, 1, 2, 3], dtype=tt.uint8, device=device).view(tt.int16).tolist() == [256, 770]
    a = tt.zeros(4, 2, device=device)[1:]
    h = a.view(tt.float16)
    assert (h.shape, h.stride(), h.storage_offset()) == ((3, 4), (4, 1), 4)
    h[0, 1] = 1.875                          # writes through: the upper half of a[0, 0]'s bits
    assert a[0, 0].item() == np.array([0, 1.875], np.float16).view(np.float32)[0]
    w = tt.ones(2, 4, device=device).view(tt.float64)
    assert w.shape == (2, 2) and w.view(tt.float32).tolist() == [[1.0] * 4] * 2
    assert not tt.ones(2, requires_grad=True).view(tt.int32).requires_grad
    with pytest.raises(RuntimeError, match="self.dim\\(\\) cannot be 0 to view float32 as float16"):
        tt.tensor(1.0).view(tt.float16)
    with pytest.raises(RuntimeError, match="self.stride\\(0\\) must be divisible by 2 .* but got 3"):
        tt.zeros(3, 3)[:, :2].view(tt.float64)
    with pytest.raises(RuntimeError, match="self.size\\(-1\\) must be divisible by 2 .* but got 3"):
        tt.zeros(3).view(tt.float64)
