"""Tensor repr as PyTorch's: columns padded to a common width, one notation per
tensor, wrapping at 80 columns, summarization, size=(0, 3) for empty tensors. EXPECTED holds
torch 2.13's reprs of the same tensors (with 'torch.' spelled 'tinytorch.');
test_matches_torch recomputes them when torch is installed. Tensor.__format__ as PyTorch's (a 0-d
tensor formats as its Python scalar)."""
import pytest

import tinytorch
from tinytorch import nn

# (id, builder(T) -> tensor) evaluated with torch and tinytorch
CASES = [
    ("float_mixed", lambda T: T.tensor([[1.5, -22.25, 3.0], [0.125, 1000.0, -7.0]])),
    ("float_int_valued", lambda T: T.tensor([[1.0, -20.0], [300.0, 4.0]])),
    ("float_sci_big", lambda T: T.tensor([1e10, 1.0, -2.5])),
    ("float_sci_small", lambda T: T.tensor([1e-5, 0.5, 2.0])),
    ("float_nonfinite", lambda T: T.tensor([float("nan"), float("inf"), -float("inf"), 1.25])),
    ("float_int_nonfinite", lambda T: T.tensor([float("nan"), 2.0, -3.0])),
    ("int_widths", lambda T: T.tensor([[1, -200], [30000, 4]])),
    ("bool", lambda T: T.tensor([[True, False], [False, True]])),
    ("empty_2d", lambda T: T.zeros(0, 3)),
    ("empty_1d", lambda T: T.zeros(0)),
    ("empty_int", lambda T: T.zeros(2, 0, dtype=T.int64)),
    ("scalar", lambda T: T.tensor(3.5)),
    ("scalar_int", lambda T: T.tensor(-4)),
    ("float64", lambda T: T.tensor([1.5, 2.0], dtype=T.float64)),
    ("float16", lambda T: T.tensor([0.1, 2.0], dtype=T.float16)),
    ("int32", lambda T: T.tensor([1, 2], dtype=T.int32)),
    ("uint8", lambda T: T.tensor([1, 255], dtype=T.uint8)),
    ("zeros_float", lambda T: T.zeros(2, 2)),
    ("long_row", lambda T: T.arange(30, dtype=T.float32) * 1.5),
    ("summarized", lambda T: T.arange(2000).reshape(40, 50)),
    ("summarized_float", lambda T: T.arange(1200, dtype=T.float32) / 7),
    ("three_d", lambda T: T.arange(12).reshape(2, 2, 3)),
    ("requires_grad", lambda T: T.tensor([1.0, 2.5], requires_grad=True)),
    ("neg_zero", lambda T: T.tensor([-0.0, 0.5])),
]

EXPECTED = {
    "float_mixed": "tensor([[ 1.5000e+00, -2.2250e+01,  3.0000e+00],\n        [ 1.2500e-01,  1.0000e+03, -7.0000e+00]])",
    "float_int_valued": "tensor([[  1., -20.],\n        [300.,   4.]])",
    "float_sci_big": "tensor([ 1.0000e+10,  1.0000e+00, -2.5000e+00])",
    "float_sci_small": "tensor([1.0000e-05, 5.0000e-01, 2.0000e+00])",
    "float_nonfinite": "tensor([   nan,    inf,   -inf, 1.2500])",
    "float_int_nonfinite": "tensor([nan,  2., -3.])",
    "int_widths": "tensor([[    1,  -200],\n        [30000,     4]])",
    "bool": "tensor([[ True, False],\n        [False,  True]])",
    "empty_2d": "tensor([], size=(0, 3))",
    "empty_1d": "tensor([])",
    "empty_int": "tensor([], size=(2, 0), dtype=tinytorch.int64)",
    "scalar": "tensor(3.5000)",
    "scalar_int": "tensor(-4)",
    "float64": "tensor([1.5000, 2.0000], dtype=tinytorch.float64)",
    "float16": "tensor([0.1000, 2.0000], dtype=tinytorch.float16)",
    "int32": "tensor([1, 2], dtype=tinytorch.int32)",
    "uint8": "tensor([  1, 255], dtype=tinytorch.uint8)",
    "zeros_float": "tensor([[0., 0.],\n        [0., 0.]])",
    "long_row": "tensor([ 0.0000,  1.5000,  3.0000,  4.5000,  6.0000,  7.5000,  9.0000, 10.5000,\n        12.0000, 13.5000, 15.0000, 16.5000, 18.0000, 19.5000, 21.0000, 22.5000,\n        24.0000, 25.5000, 27.0000, 28.5000, 30.0000, 31.5000, 33.0000, 34.5000,\n        36.0000, 37.5000, 39.0000, 40.5000, 42.0000, 43.5000])",
    "summarized": "tensor([[   0,    1,    2,  ...,   47,   48,   49],\n        [  50,   51,   52,  ...,   97,   98,   99],\n        [ 100,  101,  102,  ...,  147,  148,  149],\n        ...,\n        [1850, 1851, 1852,  ..., 1897, 1898, 1899],\n        [1900, 1901, 1902,  ..., 1947, 1948, 1949],\n        [1950, 1951, 1952,  ..., 1997, 1998, 1999]])",
    "summarized_float": "tensor([0.0000e+00, 1.4286e-01, 2.8571e-01,  ..., 1.7100e+02, 1.7114e+02,\n        1.7129e+02])",
    "three_d": "tensor([[[ 0,  1,  2],\n         [ 3,  4,  5]],\n\n        [[ 6,  7,  8],\n         [ 9, 10, 11]]])",
    "requires_grad": "tensor([1.0000, 2.5000], requires_grad=True)",
    "neg_zero": "tensor([-0.0000, 0.5000])"
}


@pytest.mark.parametrize("name, build", CASES, ids=[c[0] for c in CASES])
def test_repr_as_torch(name, build):
    assert repr(build(tinytorch)) == EXPECTED[name]


@pytest.mark.parametrize("name, build", CASES, ids=[c[0] for c in CASES])
def test_matches_torch(name, build):
    torch = pytest.importorskip("torch")
    assert repr(build(tinytorch)) == repr(build(torch)).replace("torch.", "tinytorch.")


def test_set_printoptions():
    x = tinytorch.tensor([1.23456789, 2.0])
    try:
        tinytorch.set_printoptions(precision=2)
        assert repr(x) == "tensor([1.23, 2.00])"
        tinytorch.set_printoptions(sci_mode=True)
        assert repr(x) == "tensor([1.23e+00, 2.00e+00])"
        tinytorch.set_printoptions(profile="default")
        tinytorch.set_printoptions(threshold=3, edgeitems=1)
        assert repr(tinytorch.arange(10)) == "tensor([0,  ..., 9])"
    finally:
        tinytorch.set_printoptions(profile="default")
    assert repr(x) == "tensor([1.2346, 2.0000])"


FORMAT_CASES = [   # (tensor, spec, expected): a 0-d tensor formats as its Python scalar
    (tinytorch.tensor(1.23456), ".4f", "1.2346"),
    (tinytorch.tensor(1.5), "", "1.5"),
    (tinytorch.tensor(1.5, dtype=tinytorch.float64), "8.2e", "1.50e+00"),
    (tinytorch.tensor(3), "04d", "0003"),
    (tinytorch.tensor(7), ">5", "    7"),
    (tinytorch.tensor(True), "", "True"),
    (tinytorch.tensor(0.25, dtype=tinytorch.bfloat16), ".3f", "0.250"),
    (tinytorch.tensor(12.0, requires_grad=True), ".1f", "12.0"),
]


@pytest.mark.parametrize("t, spec, expected", FORMAT_CASES)
def test_zero_dim_format(t, spec, expected):
    assert format(t, spec) == expected
    assert f"{t:{spec}}" == expected


def test_format_of_other_tensors_as_torch():
    t = tinytorch.ones(2)
    assert f"{t}" == repr(t)
    with pytest.raises(TypeError, match="unsupported format string passed to Tensor.__format__"):
        f"{t:.2f}"
    p = nn.Parameter(tinytorch.tensor(2.0))
    with pytest.raises(TypeError, match="Parameter.__format__"):
        f"{p:.2f}"


def test_format_matches_torch():
    torch = pytest.importorskip("torch")
    for t, spec, _ in FORMAT_CASES:
        ref = torch.tensor(t.detach().float().item(), dtype=getattr(torch, t.dtype.name))
        assert format(t, spec) == format(ref, spec)
