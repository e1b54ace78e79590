"""Bool bytes other than 0 and 1 (a uint8 buffer viewed as bool, a checkpoint's bool storage written by
another program) enter tinytorch as True for every nonzero byte at each entry point that shares or
reads raw memory: ``from_dlpack``, numpy operands of tensor ops and ``tinytorch.load`` of a PyTorch
checkpoint (zip and legacy formats, typed and untyped storages). The kernels read a bool byte as 0 or
1, so a byte of 2 used to count 2 in ``sum`` (257 for [0, 2, 255]), compare unequal to True and make
``nonzero`` write past its output. The reference is numpy's ``bytes != 0``.

Numpy operands of non-native byte order are converted (as numpy's ufuncs do) instead of shared:
a big-endian 1.0 used to read as 4.6e-41."""
from __future__ import annotations

import io
import pickle
import struct
import zipfile

import numpy as np
import pytest

import tinytorch as tt
from tinytorch._tensor.interop import as_tensor as foreign_tensor

BYTES = [0, 2, 255, 1, 0, 128, 7, 0]
EXPECTED = [b != 0 for b in BYTES]


def _bool_view(raw=BYTES) -> np.ndarray:
    """A writable bool array over the given bytes (no normalisation by numpy)."""
    return np.frombuffer(bytearray(raw), dtype=np.bool_)


def _check(x, expected=EXPECTED):
    """sum, casts, comparisons and indexing of a bool tensor against numpy's nonzero-is-True."""
    want = np.asarray(expected)
    assert x.dtype is tt.bool
    assert x.tolist() == want.tolist()
    assert x.sum().item() == int(want.sum())
    assert x.int().tolist() == want.astype(int).tolist()
    assert x.float().tolist() == want.astype(float).tolist()
    assert (x == tt.ones(want.shape, dtype=tt.bool)).tolist() == want.tolist()
    assert (~x).tolist() == (~want).tolist()
    flat = x.reshape(-1)
    assert flat.nonzero().reshape(-1).tolist() == np.flatnonzero(want).tolist()
    assert tt.arange(want.size)[flat].tolist() == np.flatnonzero(want).tolist()
    assert (x.numpy().view(np.uint8) <= 1).all()


# ------------------------------------------------------------------------------------- from_dlpack
def test_from_dlpack_normalises_bool_bytes():
    a = _bool_view()
    x = tt.from_dlpack(a)
    _check(x)
    assert a.view(np.uint8).tolist() == BYTES        # the producer's memory is left as it was


def test_from_dlpack_of_a_strided_bool_view():
    a = _bool_view().reshape(2, 4)[:, ::2]            # [[0, 255], [0, 7]]: strides (4, 2)
    x = tt.from_dlpack(a)
    assert x.shape == (2, 2) and x.stride() == (4, 2)
    _check(x, (a.view(np.uint8) != 0).tolist())


def test_from_dlpack_still_shares_clean_bool_memory():
    a = np.array([True, False, True])
    x = tt.from_dlpack(a)
    a[1] = True
    assert x.tolist() == [True, True, True]


def test_from_dlpack_copy_false_refuses_bool_bytes_it_would_have_to_copy():
    with pytest.raises(BufferError, match=r"copy=False, but the bool tensor holds bytes other than 0 and 1"):
        tt.from_dlpack(_bool_view(), copy=False)
    x = tt.from_dlpack(_bool_view(), copy=True)
    _check(x)


def test_from_dlpack_of_a_tinytorch_capsule():
    a = _bool_view()
    x = tt.from_dlpack(tt.from_dlpack(a).__dlpack__())
    _check(x)


# ------------------------------------------------------------------------------------ numpy operands
def test_numpy_bool_operands_are_normalised():
    """``np.logical_and(array, tensor)`` and the foreign-tensor conversion (Module.load_state_dict's)
    share numpy arrays; their bool bytes are read as nonzero-is-True."""
    ones = tt.ones(len(BYTES), dtype=tt.int64)
    got = np.add(_bool_view(), ones)                  # numpy hands the operands to tinytorch
    assert isinstance(got, tt.Tensor) and got.tolist() == (np.asarray(EXPECTED) + 1).tolist()
    _check(foreign_tensor(_bool_view()))


def test_numpy_operands_of_non_native_byte_order_are_converted():
    big = np.array([1.0, -2.5, 3.0e38], dtype=">f4")
    got = np.add(big, tt.zeros(3))
    assert got.tolist() == [1.0, -2.5, pytest.approx(3.0e38)]
    assert foreign_tensor(big).tolist() == got.tolist()
    assert foreign_tensor(np.array([1, 2 ** 40], dtype=">i8")).tolist() == [1, 2 ** 40]
    ro = np.arange(3.0)
    ro.flags.writeable = False
    assert foreign_tensor(ro).tolist() == [0.0, 1.0, 2.0]     # numpy's DLPack export refuses read-only


# ------------------------------------------------------------------------------- PyTorch checkpoints
def _tensor_record(out: bytearray, name: str, storage_class: str, numel: int, size: tuple, v3_dtype=None) -> None:
    """One ``name: _rebuild_tensor_v2/v3(storage 0, 0, size, contiguous stride, False, {})`` item
    of a protocol-2 pickle, as torch.save writes it."""
    def s(v: str) -> bytes:
        return b"X" + struct.pack("<I", len(v)) + v.encode()

    def i(v: int) -> bytes:
        return b"J" + struct.pack("<i", v)

    def ints(vs) -> bytes:
        return b"(" + b"".join(i(v) for v in vs) + b"t"

    stride = tuple(int(np.prod(size[k + 1:])) for k in range(len(size)))
    out += s(name) + (b"ctorch._utils\n_rebuild_tensor_v3\n" if v3_dtype else b"ctorch._utils\n_rebuild_tensor_v2\n")
    out += b"((" + s("storage") + b"ctorch\n" + storage_class.encode() + b"\n" + s("0") + s("cpu") + i(numel) + b"tQ"
    out += i(0) + ints(size) + ints(stride) + b"\x89" + b"ccollections\nOrderedDict\n)R"
    if v3_dtype:
        out += b"ctorch\n" + v3_dtype.encode() + b"\n"
    out += b"tR"


def _pickle(storage_class: str, numel: int, size: tuple, v3_dtype=None) -> bytes:
    out = bytearray(b"\x80\x02}(")
    _tensor_record(out, "m", storage_class, numel, size, v3_dtype)
    return bytes(out + b"u.")


def _zip_checkpoint(pkl: bytes, data: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", pkl)
        z.writestr("archive/byteorder", b"little")
        z.writestr("archive/data/0", data)
        z.writestr("archive/version", b"3\n")
    return out.getvalue()


def _legacy_checkpoint(pkl: bytes, data: bytes, element_size: int) -> bytes:
    """torch's legacy format: magic number, protocol, sys info, the structure, the storage keys, then
    each storage as its element count and bytes."""
    header = b"".join(pickle.dumps(v, protocol=2) for v in (
        0x1950A86A20F9469CFC6C, 1001, {"protocol_version": 1001, "little_endian": True,
                                       "type_sizes": {"short": 2, "int": 4, "long": 4}}))
    keys = pickle.dumps(["0"], protocol=2)
    return header + pkl + keys + struct.pack("<q", len(data) // element_size) + data


CHECKPOINTS = {
    "zip, BoolStorage": lambda: _zip_checkpoint(_pickle("BoolStorage", len(BYTES), (2, 4)), bytes(BYTES)),
    "zip, untyped storage as bool (v3)": lambda: _zip_checkpoint(
        _pickle("UntypedStorage", len(BYTES), (2, 4), "bool"), bytes(BYTES)),
    "legacy, BoolStorage": lambda: _legacy_checkpoint(_pickle("BoolStorage", len(BYTES), (2, 4)), bytes(BYTES), 1),
    "legacy, untyped storage as bool (v3)": lambda: _legacy_checkpoint(
        _pickle("UntypedStorage", len(BYTES), (2, 4), "bool"), bytes(BYTES), 1),
}


@pytest.mark.parametrize("name", list(CHECKPOINTS))
def test_checkpoint_bool_storage_is_normalised(tmp_path, name):
    path = tmp_path / "bools.pt"
    path.write_bytes(CHECKPOINTS[name]())
    m = tt.load(str(path))["m"]
    assert m.shape == (2, 4)
    _check(m, np.reshape(EXPECTED, (2, 4)).tolist())


def test_legacy_untyped_storage_read_as_another_dtype_gets_the_file_bytes(tmp_path):
    """A legacy checkpoint's storage data follows its pickle, so a storage reinterpreted while
    unpickling (``_rebuild_tensor_v3`` on an untyped storage) used to copy the still-empty buffer:
    uninitialised memory loaded as the tensor's values."""
    values = np.array([1.5, -2.0, 3.25, 1e30], dtype=np.float32)
    path = tmp_path / "untyped.pt"
    path.write_bytes(_legacy_checkpoint(_pickle("UntypedStorage", values.nbytes, (4,), "float32"),
                                        values.tobytes(), 1))
    assert tt.load(str(path))["m"].tolist() == values.tolist()
