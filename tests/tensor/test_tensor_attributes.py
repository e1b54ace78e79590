"""Tensor attributes and queries as PyTorch's: nbytes, itemsize, layout, is_signed, get_device,
is_same_size, is_nonzero, the is_<backend> flags, new, new_empty_strided and empty_strided."""
from __future__ import annotations

import tinytorch as tt


def test_attributes_and_queries():
    x = tt.zeros(3, 5, dtype=tt.float16)
    assert (x.nbytes, x.itemsize) == (30, 2)
    assert x.layout is tt.strided and repr(tt.strided) == "torch.strided"
    assert x.is_signed() and tt.is_signed(x) and not tt.zeros(2, dtype=tt.uint8).is_signed()
    assert x.get_device() == -1
    assert x.is_same_size(tt.ones(3, 5)) and not x.is_same_size(tt.ones(5, 3))
    assert tt.tensor([2.0]).is_nonzero() and not tt.tensor(0).is_nonzero()
    for flag in ("is_meta", "is_mps", "is_xpu", "is_ipu", "is_mtia", "is_maia", "is_nested", "is_mkldnn"):
        assert getattr(x, flag) is False, flag
    assert x.is_distributed() is False and tt.is_distributed(x) is False
    assert x.new().shape == (0,) and x.new(2, 3).shape == (2, 3) and x.new(2, 3).dtype == tt.float16
    assert x.new([1.0, 2.0]).tolist() == [1.0, 2.0]
    s = x.new_empty_strided((2, 3), (1, 2))
    assert s.shape == (2, 3) and s.stride() == (1, 2) and s.dtype == tt.float16
    e = tt.empty_strided((2, 3), (3, 1), dtype=tt.float64)
    assert e.stride() == (3, 1) and e.dtype == tt.float64
