"""CUDA interop: DLPack both ways with PyTorch (zero-copy, streams ordered), __cuda_array_interface__,
pickling/saving CUDA tensors, PyTorch checkpoints saved from the GPU, subclasses on the GPU."""
from __future__ import annotations

import io
import pickle

import numpy as np
import pytest

import tinytorch as tt
from support.numeric import FLOAT_DTYPES, to_numpy

pytestmark = pytest.mark.cuda

ALL_DTYPES = FLOAT_DTYPES + ["int64", "int32", "uint8", "bool"]


def _values(dtype, shape=(4, 6)):
    base = tt.tensor(np.arange(np.prod(shape)).reshape(shape) % 7, dtype=tt.float32)
    return (base > 3) if dtype == "bool" else base.to(getattr(tt, dtype))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_dlpack_roundtrip_zero_copy_on_gpu(dtype):
    t = _values(dtype).cuda().t()[1:]  # strided, offset
    assert t.__dlpack_device__() == (2, 0)
    back = tt.from_dlpack(t.__dlpack__(max_version=(1, 0)))
    assert back.device == t.device and back.data_ptr() == t.data_ptr() and back.stride() == t.stride()
    np.testing.assert_array_equal(to_numpy(back), to_numpy(t))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_dlpack_with_torch_cuda(dtype):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    t = _values(dtype).cuda()[:, ::2]
    x = torch.from_dlpack(t)
    assert x.is_cuda and x.data_ptr() == t.data_ptr() and tuple(x.stride()) == t.stride()
    np.testing.assert_array_equal(x.float().cpu().numpy(), to_numpy(t.float()))
    a = torch.arange(12, device="cuda").reshape(3, 4).t().to(getattr(torch, dtype))
    y = tt.from_dlpack(a)
    assert y.is_cuda and y.data_ptr() == a.data_ptr() and y.stride() == tuple(a.stride())
    np.testing.assert_array_equal(to_numpy(y.float()), a.float().cpu().numpy())


def test_dlpack_stream_ordering_with_torch():
    """The producer's pending work is ordered before the consumer's stream: a large kernel queued on
    tinytorch's side stream is complete when torch reads the tensor on its own stream."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    side = tt.cuda.Stream()
    with tt.cuda.stream(side):
        big = tt.ones(4096, 4096, device="cuda")
        for _ in range(4):
            big = big @ big / 4096.0  # queued, not finished
    ts = torch.cuda.Stream()
    with torch.cuda.stream(ts):
        with tt.cuda.stream(side):
            x = torch.from_dlpack(big)  # torch passes its current stream; tinytorch's side stream is waited on
        total = x.sum().item()
    assert total == 4096 * 4096


def test_cuda_array_interface():
    t = _values("float32").cuda().t()
    cai = t.__cuda_array_interface__
    assert cai["version"] == 3 and cai["typestr"] == "<f4" and cai["shape"] == (6, 4)
    assert cai["strides"] == (4, 24) and cai["data"] == (t.data_ptr(), False)
    assert tt.ones(3, device="cuda").__cuda_array_interface__["strides"] is None
    with pytest.raises(TypeError, match="BFloat16"):
        tt.ones(2, device="cuda").bfloat16().__cuda_array_interface__
    with pytest.raises(RuntimeError, match="requires grad"):
        tt.ones(2, device="cuda", requires_grad=True).__cuda_array_interface__
    assert not hasattr(tt.ones(2), "__cuda_array_interface__")
    try:
        import cupy  # noqa: F401
    except ImportError:
        return
    arr = cupy.asarray(t)
    assert arr.data.ptr == t.data_ptr()


def test_pickle_and_torch_checkpoint_of_cuda_tensors(tmp_path):
    t = _values("float32").cuda()
    back = pickle.loads(pickle.dumps(t))
    assert back.is_cuda and back.data_ptr() != t.data_ptr()
    np.testing.assert_array_equal(to_numpy(back), to_numpy(t))
    obj = {"w": t, "wt": t.t()}
    tt.save(obj, tmp_path / "g.pt", format="torch")
    on_gpu = tt.load(tmp_path / "g.pt")
    assert on_gpu["w"].is_cuda and on_gpu["w"]._impl.storage_ptr == on_gpu["wt"]._impl.storage_ptr
    on_cpu = tt.load(tmp_path / "g.pt", map_location="cpu")
    assert on_cpu["wt"].is_cpu and on_cpu["wt"].stride() == (1, 6)
    np.testing.assert_array_equal(on_cpu["wt"].numpy(), to_numpy(t.t()))
    torch = pytest.importorskip("torch")
    o = torch.load(str(tmp_path / "g.pt"), weights_only=True, map_location="cpu")
    np.testing.assert_array_equal(o["wt"].numpy(), to_numpy(t.t()))
    buf = io.BytesIO()
    torch.save({"x": torch.arange(6.0, device="cuda" if torch.cuda.is_available() else "cpu")}, buf)
    buf.seek(0)
    x = tt.load(buf)["x"]
    assert x.tolist() == [0, 1, 2, 3, 4, 5]


def test_subclass_on_gpu():
    class Tagged(tt.Tensor):
        pass
    s = tt.ones(3, device="cuda").as_subclass(Tagged)
    r = (s * 2).cpu()
    assert type(r) is Tagged and r.tolist() == [2.0, 2.0, 2.0]
