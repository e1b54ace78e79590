"""PyTorch's alternative names (the numpy-style absolute, arcsin, ..., fix; arctan2, not_equal,
moveaxis, ...) give the results of the names they alias, as functions, methods and in-place forms."""
import numpy as np
import pytest

import tinytorch as tt


@pytest.mark.parametrize("alias, name", [("absolute", "abs"), ("arcsin", "asin"), ("arccos", "acos"),
                                         ("arctan", "atan"), ("arcsinh", "asinh"), ("arccosh", "acosh"),
                                         ("arctanh", "atanh"), ("fix", "trunc")])
def test_numpy_style_aliases(alias, name):
    x = tt.tensor([0.5, -0.25, 0.75]) if name != "acosh" else tt.tensor([1.5, 2.0, 3.0])
    np.testing.assert_array_equal(getattr(tt, alias)(x).numpy(), getattr(tt, name)(x).numpy())
    np.testing.assert_array_equal(getattr(x, alias)().numpy(), getattr(x, name)().numpy())
    y = x.clone()
    getattr(y, alias + "_")()
    np.testing.assert_array_equal(y.numpy(), getattr(tt, name)(x).numpy())


def test_binary_and_shape_aliases():
    x, y = tt.tensor([1.0, -2.0]), tt.tensor([-1.0, 3.0])
    np.testing.assert_array_equal(tt.arctan2(x, y).numpy(), tt.atan2(x, y).numpy())
    assert tt.not_equal(x, y).tolist() == [True, True] and x.not_equal(x).tolist() == [False, False]
    assert tt.moveaxis(tt.zeros(2, 3, 4), 0, -1).shape == (3, 4, 2)
