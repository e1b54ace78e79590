"""tinytorch.<name>_(input, ...): PyTorch's in-place functions (torch.relu_, torch.clamp_, ...), exported
by the op schema for every unary op with an in-place form; each writes into input and returns it,
with the out-of-place function's values."""
import numpy as np
import pytest

import tinytorch as tt
from tinytorch._generated import functional as _functional
from support.numeric import FLOAT_DTYPES, make, to_numpy

INTEGER_ONLY = {"gcd_", "lcm_"}   # tested on integer tensors in test_pointwise_composites.py
# tested with the arguments their shapes need: addmv_/index_put_ in ops/composites/test_op_forms.py,
# as_strided_ in ops/shape/test_inplace_shape.py
OWN_ARGUMENTS = {"addmv_", "index_put_", "as_strided_"}
INPLACE = sorted(n for n in [*_functional.__all__, *_functional.DEFERRED] if n.endswith("_") and not n.startswith("_")
                 and n not in INTEGER_ONLY | OWN_ARGUMENTS)
# extra arguments per function (the rest take input only)
ARGS = {"clamp_": (-0.5, 0.5), "clip_": (-0.5, 0.5), "clamp_min_": (0.1,), "clamp_max_": (0.1,),
        "xlogy_": (2.0,), "fill_": (0.25,), "ldexp_": (tt.tensor([1, -2, 0, 3, 1, 2]),)}
# the out-of-place form where tinytorch.<name> is not a function (clamp_min/clamp_max are methods)
BASE = {"clamp_min_": lambda x, v: x.clamp_min(v), "clamp_max_": lambda x, v: x.clamp_max(v),
        "zero_": lambda x: tt.zeros_like(x)}


def test_the_schema_exports_pytorchs_in_place_functions():
    for name in ("relu_", "sigmoid_", "tanh_", "sin_", "exp_", "sqrt_", "clamp_", "clip_", "clamp_min_",
                 "nan_to_num_", "xlogy_"):
        assert callable(getattr(tt, name)), name
    assert len(INPLACE) >= 50
    assert not hasattr(tt, "add_")   # PyTorch has no binary in-place functions at the top level


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", INPLACE)
def test_in_place_function_writes_the_out_of_place_result(name, dtype):
    base = BASE.get(name) or getattr(tt, name[:-1])
    x, _ = make((4, 6), dtype, layout="transposed", low=-0.9, high=0.9, seed=3)
    want = to_numpy(base(x, *ARGS.get(name, ())))
    y = x.clone() if x.is_contiguous() else x.detach().clone().t().contiguous().t()
    assert not y.is_contiguous()          # written in place through the strides
    out = getattr(tt, name)(y, *ARGS.get(name, ()))
    assert out is y
    np.testing.assert_array_equal(to_numpy(y), want)


def test_in_place_function_errors():
    with pytest.raises(TypeError):
        tt.relu_([1.0, -1.0])
    leaf = tt.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        tt.sin_(leaf)


# torch.<name>_(x) writes <name>(x) into x: (name, low, high) input range inside the op's domain
INPLACE_UNARY = [(n, 0.1, 0.9) for n in (
    "abs", "acos", "arccos", "arcsin", "arcsinh", "arctan", "arctanh", "asin", "asinh", "atan", "atanh",
    "ceil", "cos", "cosh", "deg2rad", "erf", "exp", "exp2", "expm1", "fix", "floor", "frac", "log", "log10",
    "log1p", "log2", "neg", "negative", "rad2deg", "reciprocal", "relu", "round", "rsqrt", "sigmoid", "sin",
    "sinc", "sinh", "sqrt", "square", "tan", "tanh", "trunc")] + [("acosh", 1.1, 3.0), ("arccosh", 1.1, 3.0)]


@pytest.mark.parametrize("name,low,high", INPLACE_UNARY)
@pytest.mark.parametrize("layout", ["transposed", "sliced"])
def test_toplevel_inplace_unary_matches_out_of_place(name, low, high, layout):
    for dtype in FLOAT_DTYPES:
        x, _ = make((3, 4), dtype, layout, low=low, high=high)
        expected = to_numpy(getattr(tt, name)(x))
        out = getattr(tt, name + "_")(x)
        assert out is x
        np.testing.assert_array_equal(to_numpy(x), expected, err_msg=f"{name}_ {dtype}")
