"""Creation functions composed from existing ops: logspace, range (deprecated, its end included)
and combinations, against numpy."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import tinytorch as tt
from support.numeric import FLOAT_DTYPES, assert_close


def test_creation_functions():
    for dtype in FLOAT_DTYPES:
        out = tt.logspace(-1, 2, 7, base=2.0, dtype=getattr(tt, dtype))
        assert_close(out, np.logspace(-1, 2, 7, base=2.0), dtype)
    assert tt.logspace(0, 3, 4).dtype == tt.get_default_dtype()
    with pytest.warns(UserWarning, match="deprecated"):
        r = tt.range(1, 2, 0.25)
    assert_close(r, [1.0, 1.25, 1.5, 1.75, 2.0], "float32")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert tt.range(5, 1, -2).tolist() == [5.0, 3.0, 1.0]
    c = tt.combinations(tt.tensor([1.0, 2.0, 3.0]), 2, with_replacement=True)
    assert c.tolist() == [[1, 1], [1, 2], [1, 3], [2, 2], [2, 3], [3, 3]]
    assert tt.combinations(tt.arange(3), 3).tolist() == [[0, 1, 2]]
    assert tt.combinations(tt.arange(2), 3).shape == (0, 3)
