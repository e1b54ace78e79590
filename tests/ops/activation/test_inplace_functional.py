"""``inplace=True`` of F.selu, F.celu, F.threshold, F.hardsigmoid, F.dropout1d and F.dropout2d (and
of their modules), as PyTorch's: the result is written into the input, the input is returned, its
version counter moves, and values and gradients equal the out-of-place result's. The F.<name>_
spellings (elu_, celu_, selu_, hardtanh_, leaky_relu_, threshold_, rrelu_) write into their input."""
import pytest

import tinytorch as tt
import tinytorch.nn as nn
import tinytorch.nn.functional as F
from support.numeric import assert_close, make

# name -> (functional call, module, input shape)
CASES = {
    "selu": (lambda x, inplace: F.selu(x, inplace=inplace), lambda inplace: nn.SELU(inplace=inplace), (3, 5)),
    "celu": (lambda x, inplace: F.celu(x, 0.7, inplace=inplace), lambda inplace: nn.CELU(0.7, inplace=inplace),
             (3, 5)),
    "threshold": (lambda x, inplace: F.threshold(x, 0.1, -2.0, inplace=inplace),
                  lambda inplace: nn.Threshold(0.1, -2.0, inplace=inplace), (3, 5)),
    "hardsigmoid": (lambda x, inplace: F.hardsigmoid(x, inplace=inplace),
                    lambda inplace: nn.Hardsigmoid(inplace=inplace), (3, 5)),
    "dropout1d": (lambda x, inplace: F.dropout1d(x, 0.5, True, inplace=inplace),
                  lambda inplace: nn.Dropout1d(0.5, inplace=inplace), (4, 8, 3)),
    "dropout2d": (lambda x, inplace: F.dropout2d(x, 0.5, True, inplace=inplace),
                  lambda inplace: nn.Dropout2d(0.5, inplace=inplace), (4, 8, 3, 2)),
}


def _input(shape):
    tt.manual_seed(1)
    return tt.randn(*shape) * 4.0   # values on both sides of every threshold


def _same(a, b) -> bool:
    return a.shape == b.shape and bool((a == b).all())


@pytest.mark.parametrize("name", sorted(CASES))
def test_functional_inplace_writes_into_input(name):
    fn, _, shape = CASES[name]
    x = _input(shape)
    tt.manual_seed(0)
    expected = fn(x.clone(), False)
    before = x.clone()
    version = x._version
    tt.manual_seed(0)
    out = fn(x, True)
    assert out is x
    assert x._version > version
    assert _same(x, expected)
    assert not _same(x, before)


@pytest.mark.parametrize("name", sorted(CASES))
def test_module_inplace_writes_into_input(name):
    _, make, shape = CASES[name]
    x = _input(shape)
    tt.manual_seed(0)
    expected = make(False)(x.clone())
    tt.manual_seed(0)
    out = make(True)(x)
    assert out is x
    assert _same(x, expected)


@pytest.mark.parametrize("name", sorted(CASES))
def test_out_of_place_leaves_input(name):
    fn, make, shape = CASES[name]
    x = _input(shape)
    before = x.clone()
    assert fn(x, False) is not x
    assert make(False)(x) is not x
    assert _same(x, before)


@pytest.mark.parametrize("name", sorted(CASES))
def test_inplace_gradient_through_non_leaf(name):
    fn, _, shape = CASES[name]
    a = _input(shape).requires_grad_()
    w = tt.randn(*shape)
    tt.manual_seed(0)
    (fn(a * 1.5, False) * w).sum().backward()
    expected = a.grad.clone()
    a.grad = None
    tt.manual_seed(0)
    y = a * 1.5
    out = fn(y, True)
    assert out is y
    (out * w).sum().backward()
    assert _same(a.grad, expected)


@pytest.mark.parametrize("name", sorted(CASES))
def test_inplace_on_leaf_requiring_grad_raises(name):
    fn, _, shape = CASES[name]
    a = _input(shape).requires_grad_()
    with pytest.raises(RuntimeError, match="leaf Variable"):
        fn(a, True)


@pytest.mark.parametrize("name", ["dropout1d", "dropout2d"])
def test_channel_dropout_inplace_is_identity_in_eval(name):
    fn, make, shape = CASES[name]
    x = _input(shape)
    before = x.clone()
    m = make(True).eval()
    assert m(x) is x
    assert _same(x, before)


# ----------------------------------------------------------------------------- F.<name>_ spellings
@pytest.mark.parametrize("name, args", [("elu_", (0.7,)), ("celu_", (1.3,)), ("selu_", ()),
                                        ("hardtanh_", (-0.5, 0.8)), ("leaky_relu_", (0.2,)),
                                        ("threshold_", (0.1, -3.0)), ("rrelu_", (0.1, 0.3))])
def test_inplace_spellings(name, args):
    x = make((3, 4), "float64", seed=20)[0]
    ref = getattr(F, name[:-1])(x, *args)
    y = x.clone()
    out = getattr(F, name)(y, *args)
    assert out is y
    assert_close(y, ref.numpy(), "float64")
