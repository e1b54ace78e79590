"""Tensor.__format__, randint's overloads and the Tensor.unique method, as PyTorch."""
import numpy as np
import pytest

import tinytorch
from tinytorch import nn

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


@pytest.mark.parametrize("call, low, high, shape", [
    (lambda g: tinytorch.randint(5, (3, 4), generator=g), 0, 5, (3, 4)),
    (lambda g: tinytorch.randint(2, 9, (50,), generator=g), 2, 9, (50,)),
    (lambda g: tinytorch.randint(-3, 0, [2, 5], generator=g), -3, 0, (2, 5)),
    (lambda g: tinytorch.randint(7, size=(6,), generator=g), 0, 7, (6,)),
    (lambda g: tinytorch.randint(1, 4, size=(6,), generator=g), 1, 4, (6,)),
    (lambda g: tinytorch.randint(high=3, size=(40,), generator=g), 0, 3, (40,)),
    (lambda g: tinytorch.randint(low=1, high=3, size=(40,), generator=g), 1, 3, (40,)),
    (lambda g: tinytorch.randint(10, tinytorch.Size([4, 2]), generator=g), 0, 10, (4, 2)),
])
def test_randint_overloads(call, low, high, shape):
    g = tinytorch.Generator().manual_seed(0)
    out = call(g)
    assert out.shape == shape and out.dtype == tinytorch.int64
    v = out.numpy()
    assert v.min() >= low and v.max() < high
    if out.numel() >= 40:
        assert len(np.unique(v)) == high - low        # every value drawn


def test_randint_dtype_and_requires_grad():
    x = tinytorch.randint(3, 10, (5,), dtype=tinytorch.float32, requires_grad=True)
    assert x.dtype == tinytorch.float32 and x.requires_grad
    with pytest.raises(RuntimeError, match="floating point"):
        tinytorch.randint(3, (2,), requires_grad=True)


@pytest.mark.parametrize("args, kwargs, error, match", [
    ((5,), {}, TypeError, "size"),
    ((5, 3), {}, TypeError, r"argument 'size' \(position 2\) must be tuple of ints, not int"),
    ((5, 2, (3,)), {}, RuntimeError, "from=5 >= to=2"),
    ((3, 3, (1,)), {}, RuntimeError, "from=3 >= to=3"),
    (((2,),), {}, TypeError, "high"),
])
def test_randint_bad_arguments(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        tinytorch.randint(*args, **kwargs)


def test_randint_like():
    x = tinytorch.zeros(3, 2, dtype=tinytorch.int32)
    a, b = tinytorch.randint_like(x, 4), tinytorch.randint_like(x, 4, 6)
    assert a.shape == (3, 2) and a.dtype == tinytorch.int32 and a.max().item() < 4
    assert b.min().item() >= 4 and b.max().item() < 6


def test_unique_method():
    x = tinytorch.tensor([[3, 1], [3, 2]])
    v, inv, cnt = x.unique(return_inverse=True, return_counts=True)
    ref_v, ref_inv, ref_cnt = np.unique(x.numpy(), return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(v.numpy(), ref_v)
    np.testing.assert_array_equal(inv.numpy(), ref_inv.reshape(2, 2))
    np.testing.assert_array_equal(cnt.numpy(), ref_cnt)
    np.testing.assert_array_equal(tinytorch.tensor([2.0, -1.0, 2.0]).unique().numpy(), [-1.0, 2.0])
