"""Bool arrays whose bytes are not all 0 or 1 (a uint8 buffer viewed as bool, a file's BOOL
entry) enter as True for every nonzero byte, so sums count them, casts give 1 and comparisons
with True hold, as the values such an array means."""
from __future__ import annotations

import json
import struct

import numpy as np
import pytest

import tinytorch as tt

BYTES = [0, 2, 255, 1, 0, 128]
EXPECTED = [False, True, True, True, False, True]


def _array():
    return np.array(BYTES, dtype=np.uint8).view(np.bool_)


@pytest.mark.parametrize("make", [tt.from_numpy, tt.as_tensor, tt.tensor, lambda a: tt.tensor(a, dtype=tt.float32)],
                         ids=["from_numpy", "as_tensor", "tensor", "tensor_float"])
def test_numpy_bool_bytes_become_true(make):
    x = make(_array())
    np.testing.assert_array_equal(x.numpy().astype(bool), EXPECTED)
    assert x.sum().item() == 4
    assert x.long().tolist() == [int(v) for v in EXPECTED]
    assert x.float().tolist() == [float(v) for v in EXPECTED]
    assert (x == True).tolist() == EXPECTED          # noqa: E712
    assert x.logical_not().tolist() == [not v for v in EXPECTED]


def test_strided_and_2d_arrays():
    a = np.array([[0, 3], [4, 0], [1, 9]], dtype=np.uint8).view(np.bool_)
    x = tt.from_numpy(a.T)                           # a non-contiguous view
    assert x.tolist() == [[False, True, True], [True, False, True]]
    assert x.sum(1).tolist() == [2, 2]


def test_normalized_bool_arrays_still_share_memory():
    a = np.array([True, False, True])
    x = tt.from_numpy(a)
    a[1] = True
    assert x.tolist() == [True, True, True]


def test_safetensors_bool_entry(tmp_path):
    data = bytes(BYTES)
    header = json.dumps({"m": {"dtype": "BOOL", "shape": [len(BYTES)], "data_offsets": [0, len(BYTES)]}}).encode()
    header += b" " * (-len(header) % 8)
    path = tmp_path / "bools.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header + data)
    m = tt.load(str(path))["m"]
    assert m.tolist() == EXPECTED and m.sum().item() == 4 and m.int().tolist() == [int(v) for v in EXPECTED]
