"""PyTorch's conventions: shape errors of Linear/Conv/pooling are RuntimeError
(BatchNorm/InstanceNorm rank errors stay ValueError, as PyTorch); PyTorch's parameter names."""
import inspect

import pytest

import tinytorch as tt
from tinytorch import nn

RUNTIME_ERRORS = [   # (layer, bad input): PyTorch raises RuntimeError for each
    (lambda: nn.Linear(3, 4), (2, 5)),
    (lambda: nn.Linear(3, 4), ()),
    (lambda: nn.Conv2d(3, 4, 3), (1, 2, 8, 8)),
    (lambda: nn.Conv2d(3, 4, 3), (8, 8)),
    (lambda: nn.Conv1d(3, 4, 3), (1, 2, 8)),
    (lambda: nn.Conv1d(3, 4, 3), (1, 1, 2, 8)),
    (lambda: nn.ConvTranspose2d(3, 4, 3), (1, 2, 8, 8)),
    (lambda: nn.MaxPool2d(2), (8,)),
    (lambda: nn.Bilinear(2, 3, 4), (5, 3)),
    (lambda: nn.BatchNorm1d(3), (4, 5)),          # channel mismatch: RuntimeError in PyTorch
]


@pytest.mark.parametrize("build, shape", RUNTIME_ERRORS)
def test_shape_errors_are_runtime_errors(build, shape):
    layer = build()
    args = (tt.ones(shape),) if not isinstance(layer, nn.Bilinear) else (tt.ones(shape), tt.ones(5, 3))
    with pytest.raises(RuntimeError, match=type(layer).__name__ + "|mat1 and mat2"):
        layer(*args)


@pytest.mark.parametrize("build, shape", [(lambda: nn.BatchNorm2d(3), (3, 4, 4)), (lambda: nn.InstanceNorm2d(3), (8,))])
def test_norm_rank_errors_are_value_errors_as_torch(build, shape):
    with pytest.raises(ValueError, match="expected"):
        build()(tt.ones(shape))


def test_matches_torch_error_types():
    torch = pytest.importorskip("torch")
    for build, shape in RUNTIME_ERRORS:
        ours = build()
        theirs = getattr(torch.nn, type(ours).__name__)(*_ctor_args(ours))
        args = (torch.ones(shape),) if not isinstance(ours, nn.Bilinear) else (torch.ones(shape), torch.ones(5, 3))
        with pytest.raises(RuntimeError):
            theirs(*args)


def _ctor_args(m):
    name = type(m).__name__
    if name == "Linear":
        return (m.in_features, m.out_features)
    if name == "Bilinear":
        return (m.in1_features, m.in2_features, m.out_features)
    if name.startswith("Conv"):
        return (m.in_channels, m.out_channels, m.kernel_size)
    if name == "MaxPool2d":
        return (2,)
    return (m.num_features,)


@pytest.mark.parametrize("fn", ["empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like",
                                "randint_like", "numel"])
def test_first_parameter_is_input(fn):
    assert list(inspect.signature(getattr(tt, fn)).parameters)[0] == "input"
    x = tt.ones(2, 3)
    if fn == "full_like":
        assert tt.full_like(input=x, fill_value=2.0).tolist() == [[2.0] * 3] * 2
    elif fn == "randint_like":
        assert tt.randint_like(input=x, high=3).shape == (2, 3)
    elif fn == "numel":
        assert tt.numel(input=x) == 6
    else:
        assert getattr(tt, fn)(input=x).shape == (2, 3)


def test_functional_first_parameters_are_torch_names():
    F = nn.functional
    for name in dir(F):
        f = getattr(F, name)
        if name.startswith("_") or not callable(f) or inspect.isclass(f):
            continue
        try:
            params = list(inspect.signature(f).parameters)
        except (TypeError, ValueError):
            continue
        assert not params or params[0] != "x", f"F.{name} names its first parameter x"
    assert list(inspect.signature(tt.promote_types).parameters) == ["type1", "type2"]
