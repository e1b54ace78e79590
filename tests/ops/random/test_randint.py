"""randint's overloads (high only; low and high; size as a tuple or list), its dtype and
requires_grad, PyTorch's argument errors, and randint_like."""
import numpy as np
import pytest

import tinytorch


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
