"""Legacy PyTorch names: autograd.Variable, FloatTensor & co., cuda.FloatTensor, Tensor.type(str),
finfo, iinfo."""
import numpy as np
import pytest

import tinytorch
from tinytorch import autograd

tt = tinytorch
TYPES = [("FloatTensor", tt.float32), ("DoubleTensor", tt.float64), ("HalfTensor", tt.float16),
         ("BFloat16Tensor", tt.bfloat16), ("LongTensor", tt.int64), ("IntTensor", tt.int32),
         ("ShortTensor", tt.int16), ("CharTensor", tt.int8), ("ByteTensor", tt.uint8), ("BoolTensor", tt.bool)]


@pytest.mark.parametrize("name, dtype", TYPES)
def test_legacy_type_constructors(name, dtype):
    cls = getattr(tt, name)
    assert cls(2, 3).shape == (2, 3) and cls(2, 3).dtype == dtype
    assert cls(4).shape == (4,)
    assert cls(tt.Size([2, 1])).shape == (2, 1)
    assert cls().shape == (0,) and cls().dtype == dtype
    data = cls([1, 0, 1])
    assert data.dtype == dtype and data.tolist() == tt.tensor([1, 0, 1], dtype=dtype).tolist()
    same = tt.zeros(2, dtype=dtype)
    assert cls(same) is same
    np.testing.assert_array_equal(cls(np.array([2.0, 3.0])).float().numpy(), np.float32([2, 3]) if
                                  dtype != tt.bool else np.float32([1, 1]))


@pytest.mark.parametrize("name, dtype", TYPES)
def test_legacy_type_isinstance_by_dtype(name, dtype):
    cls = getattr(tt, name)
    for _, other in TYPES:
        assert isinstance(tt.zeros(2, dtype=other), cls) == (other == dtype)
    assert not isinstance(tt.zeros(2, dtype=dtype), getattr(tt.cuda, name))   # a CPU tensor
    assert not isinstance(np.zeros(2), cls)
    assert tt.zeros(1, dtype=dtype).type() == f"torch.{name}"


def test_legacy_types_errors():
    with pytest.raises(TypeError, match="dtype tinytorch.float32, got tinytorch.float64"):
        tt.FloatTensor(tt.ones(2, dtype=tt.float64))
    assert tt.CharTensor(2).dtype is tt.int8 and tt.CharTensor(2).shape == (2,)
    assert tt.ShortTensor([1]).dtype is tt.int16 and tt.ShortTensor([1]).tolist() == [1]
    assert not isinstance(tt.zeros(2, dtype=tt.int32), tt.ShortTensor)
    with pytest.raises(TypeError, match="expected sizes"):
        tt.FloatTensor([1], [2])
    if not tt.cuda.is_available():
        with pytest.raises(TypeError, match="cuda.FloatTensor not available"):
            tt.cuda.FloatTensor(2)


def test_tensor_type_conversions():
    x = tt.tensor([1.7, -2.2])
    assert x.type() == "torch.FloatTensor"
    assert x.type(tt.float32) is x and x.type("torch.FloatTensor") is x
    for spec in ("torch.LongTensor", "tinytorch.LongTensor", tt.LongTensor, tt.int64):
        y = x.type(spec)
        assert y.dtype == tt.int64 and y.tolist() == [1, -2]
    assert x.type("torch.DoubleTensor").dtype == tt.float64
    with pytest.raises(ValueError, match="invalid type: 'torch.Foo'"):
        x.type("torch.Foo")
    y = x.type(tt.CharTensor)
    assert y.dtype is tt.int8 and y.tolist() == [1, -2] and y.type() == "torch.CharTensor"


def test_variable():
    t = tt.ones(2)
    v = autograd.Variable(t)
    assert v is not t and not v.requires_grad and v.grad_fn is None
    v = autograd.Variable(t, requires_grad=True)
    assert v.requires_grad and not t.requires_grad
    v.data[0] = 5.0                                       # shares t's memory, as PyTorch
    assert t[0].item() == 5.0
    (v * 3).sum().backward()
    assert v.grad.tolist() == [3.0, 3.0]
    y = tt.ones(2, requires_grad=True) * 2
    assert autograd.Variable(y).grad_fn is None
    assert isinstance(t, autograd.Variable) and not isinstance([1], autograd.Variable)
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
        autograd.Variable([1, 2])
    with pytest.warns(UserWarning, match="volatile"):
        autograd.Variable(t, volatile=True)


FINFO = {   # dtype: (bits, eps, max, tiny, resolution), PyTorch's values
    tt.float32: (32, 2.0 ** -23, float(np.finfo(np.float32).max), 2.0 ** -126, 1e-6),
    tt.float64: (64, 2.0 ** -52, float(np.finfo(np.float64).max), 2.0 ** -1022, 1e-15),
    tt.float16: (16, 2.0 ** -10, 65504.0, 2.0 ** -14, 1e-3),
    tt.bfloat16: (16, 2.0 ** -7, 3.3895313892515355e+38, 2.0 ** -126, 0.01),
}


@pytest.mark.parametrize("dtype", list(FINFO))
def test_finfo(dtype):
    f = tt.finfo(dtype)
    bits, eps, mx, tiny, res = FINFO[dtype]
    assert (f.bits, f.eps, f.max, f.min, f.tiny, f.smallest_normal) == (bits, eps, mx, -mx, tiny, tiny)
    assert f.resolution == pytest.approx(res) and f.dtype == dtype.name
    # eps is the gap above 1: 1 + eps is representable, 1 + eps/2 rounds back to 1
    one = tt.ones(1, dtype=dtype)
    assert (one + f.eps).item() > 1.0 and (one + f.eps / 2).item() == 1.0
    assert tt.tensor([f.max], dtype=dtype).isfinite().item()


def test_finfo_default_and_errors():
    assert tt.finfo().dtype == "float32"
    with pytest.raises(TypeError, match="floating point input type"):
        tt.finfo(tt.int32)
    with pytest.raises(TypeError, match="integer input type"):
        tt.iinfo(tt.float32)
    with pytest.raises(TypeError, match="bool is not supported"):
        tt.iinfo(tt.bool)


@pytest.mark.parametrize("dtype, lo, hi", [(tt.uint8, 0, 255), (tt.int32, -2 ** 31, 2 ** 31 - 1),
                                           (tt.int64, -2 ** 63, 2 ** 63 - 1)])
def test_iinfo(dtype, lo, hi):
    i = tt.iinfo(dtype)
    assert (i.bits, i.min, i.max, i.dtype) == (dtype.itemsize * 8, lo, hi, dtype.name)


def test_matches_torch():
    torch = pytest.importorskip("torch")
    for d in FINFO:
        a, b = tt.finfo(d), torch.finfo(getattr(torch, d.name))
        for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
            assert getattr(a, field) == getattr(b, field), (d, field)
        assert repr(a) == repr(b)
    for d in (tt.uint8, tt.int32, tt.int64):
        a, b = tt.iinfo(d), torch.iinfo(getattr(torch, d.name))
        assert (a.bits, a.min, a.max, a.dtype) == (b.bits, b.min, b.max, b.dtype) and repr(a) == repr(b)
    for name, d in TYPES:
        assert tt.zeros(1, dtype=d).type() == torch.zeros(1, dtype=getattr(torch, d.name)).type()
