"""Regression tests for API edge cases (bad arguments, empty and huge inputs): each case behaves as PyTorch 2.x does — the same
result, or an error of the same type. Anything that crashed the interpreter runs in a subprocess."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn.functional as F

# the child imports the same tinytorch as this process (installed, or a dev build's source tree)
_ENV = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(tt.__file__))))


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=os.path.dirname(__file__), env=_ENV,
                          capture_output=True, text=True, timeout=120)


# ------------------------------------------------------------------ 1. tensor hooks

@pytest.mark.parametrize("leaf", [False, True])
def test_hook_returning_non_tensor_is_type_error(leaf):
    # used to segfault (an unchecked cast of the hook's result); torch: TypeError
    r = _run(f"""
        import numpy as np
        import tinytorch as tt
        for ret in (1, "s", [1.0, 2.0, 3.0], (1,), np.ones(3)):
            x = tt.ones(3, requires_grad=True)
            h = x if {leaf} else x * 2
            h.register_hook(lambda g, ret=ret: ret)
            try:
                (h * 1).sum().backward() if {leaf} else h.sum().backward()
            except TypeError as e:
                assert "hook returned" in str(e), e
            else:
                raise SystemExit("no TypeError for " + type(ret).__name__)
        print("OK")
        """)
    assert r.returncode == 0 and "OK" in r.stdout, (r.returncode, r.stdout, r.stderr[-2000:])


@pytest.mark.parametrize("leaf", [False, True])
def test_hook_changing_dtype_or_shape_is_runtime_error(leaf):
    for change in (lambda g: g.double(), lambda g: g[:2]):
        x = tt.ones(3, requires_grad=True)
        h = x if leaf else x * 2
        h.register_hook(change)
        with pytest.raises(RuntimeError, match="has changed the (type|size) of value"):
            (h * 1).sum().backward()


def test_hook_returning_tensor_or_none_still_works():
    x = tt.ones(3, requires_grad=True)
    h = x * 2
    h.register_hook(lambda g: g * 3)
    h.register_hook(lambda g: None)
    h.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 6.0, 6.0])


# ------------------------------------------------------------------ 2. silent wrong results

def test_clamp_promotes_with_float_bounds():
    i = tt.tensor([-5, 0, 5])
    for out, want in ((tt.clamp(i, -2.5, 3.5), [-2.5, 0.0, 3.5]), (tt.clamp(i, min=-2.5), [-2.5, 0.0, 5.0]),
                      (tt.clamp(i, max=3.5), [-5.0, 0.0, 3.5]), (i.clip(-2.5, 3.5), [-2.5, 0.0, 3.5])):
        assert out.dtype == tt.float32
        np.testing.assert_allclose(out.numpy(), want)
    same = tt.clamp(i, -2, 3)
    assert same.dtype == tt.int64 and same.tolist() == [-2, 0, 3]
    assert tt.clamp(tt.ones(2, dtype=tt.float16), -2.5, 3.5).dtype == tt.float16
    with pytest.raises(RuntimeError, match="can't be cast"):
        i.clone().clamp_(-2.5, 3.5)


def test_einsum_repeated_subscript_sizes_must_match():
    with pytest.raises(RuntimeError, match="repeated for operand 0"):
        tt.einsum("ii->i", tt.ones(7, 2))
    with pytest.raises(RuntimeError):
        tt.einsum("ii", tt.ones(7, 2))
    np.testing.assert_allclose(tt.einsum("ii->i", tt.eye(3) * 2).numpy(), [2.0, 2.0, 2.0])


@pytest.mark.parametrize("pool", [F.max_pool2d, F.avg_pool2d])
def test_pool_zero_or_negative_stride_raises(pool):
    x = tt.ones(1, 1, 4, 4)
    for stride in (0, (0, 1), -1):
        with pytest.raises(RuntimeError, match="stride"):
            pool(x, 2, stride=stride)
    assert tuple(pool(x, 2, stride=1).shape) == (1, 1, 3, 3)


def test_pool1d_zero_stride_raises():
    for pool in (F.max_pool1d, F.avg_pool1d):
        with pytest.raises(RuntimeError, match="stride"):
            pool(tt.ones(1, 1, 4), 2, stride=0)


def test_stack_dim_out_of_range():
    xs = [tt.ones(2, 3)] * 2
    for d in (-4, 3):
        with pytest.raises(IndexError, match="Dimension out of range"):
            tt.stack(xs, dim=d)
    assert tuple(tt.stack(xs, dim=-3).shape) == (2, 2, 3)
    assert tuple(tt.stack(xs, dim=2).shape) == (2, 3, 2)


def test_movedim_dims_checked():
    x = tt.ones(2, 3)
    for src, dst in ((0, 2), (2, 0), (-3, 0)):
        with pytest.raises(IndexError, match="Dimension out of range"):
            tt.movedim(x, src, dst)
    with pytest.raises(RuntimeError, match="repeated dim"):
        tt.movedim(x, (0, 0), (0, 1))
    with pytest.raises(RuntimeError, match="same number of dims"):
        tt.movedim(x, (0, 1), (0,))
    assert tuple(tt.movedim(tt.ones(2, 3, 4), 0, -1).shape) == (3, 4, 2)


def test_roll_0d_with_dims_raises():
    s = tt.tensor(1.0)
    for d in (0, -1):
        with pytest.raises(IndexError, match="has no dimensions"):
            tt.roll(s, 1, d)
    assert tt.roll(s, 1).item() == 1.0
    with pytest.raises(IndexError):
        tt.roll(tt.ones(3), 1, 1)


@pytest.mark.parametrize("op", ["sum", "mean", "var", "std", "amax", "logsumexp", "norm"])
def test_repeated_reduction_dims_raise(op):
    x = tt.ones(2, 3)
    for dims in ((0, 0), (1, -1)):
        with pytest.raises(RuntimeError, match="appears multiple times"):
            getattr(tt, op)(x, dim=dims)
    with pytest.raises(RuntimeError, match="appears multiple times"):   # 0-dim: 0 and -1 are one dim
        tt.sum(tt.tensor(1.0), dim=(0, -1))
    assert tuple(getattr(tt, op)(x, dim=(0, 1)).shape) == ()


# ------------------------------------------------------------------ 3. backward errors

def test_dot_product_matmul_backward():
    a = tt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = tt.tensor([4.0, 5.0, 6.0], requires_grad=True)
    (a @ b).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [4.0, 5.0, 6.0])
    np.testing.assert_allclose(b.grad.numpy(), [1.0, 2.0, 3.0])


@pytest.mark.parametrize("op", ["sum", "mean", "amax", "logsumexp", "var", "std", "prod", "norm"])
@pytest.mark.parametrize("dim", [0, -1])
def test_reduction_over_dim_of_0d_backward(op, dim):
    x = tt.tensor(2.0, requires_grad=True)
    y = getattr(tt, op)(x, dim=dim)
    y.backward()
    if op in ("var", "std"):     # one element, correction 1: nan, as PyTorch
        assert np.isnan(y.item()) and np.isnan(x.grad.item())
    else:
        assert y.item() == pytest.approx(2.0) and x.grad.item() == pytest.approx(1.0)
    assert tuple(x.grad.shape) == ()


def test_prod_0d_zero_backward():
    x = tt.tensor(0.0, requires_grad=True)
    tt.prod(x, dim=0).backward()
    assert x.grad.item() == 1.0


def test_second_backward_without_saved_tensors():
    a = tt.ones(3, requires_grad=True)
    z = (a + a) + 1
    z.sum().backward()
    z.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [4.0, 4.0, 4.0])
    s = a.sum()
    s.backward()
    s.backward()
    # a node that saved tensors still refuses, as PyTorch
    m = (a * a).sum()
    m.backward()
    with pytest.raises(RuntimeError, match="second time"):
        m.backward()


# ------------------------------------------------------------------ 4. misleading errors

def test_div_trunc():
    out = tt.div(tt.ones(3), tt.tensor([2, 2, 2]), rounding_mode="trunc")
    assert out.dtype == tt.float32 and out.tolist() == [0.0, 0.0, 0.0]
    q = tt.div(tt.tensor([2 ** 53 + 1, -7, 7, -6]), tt.tensor([1, 2, -2, 3]), rounding_mode="trunc")
    assert q.dtype == tt.int64 and q.tolist() == [2 ** 53 + 1, -3, -3, -2]   # exact for integers
    assert tt.div(tt.tensor([5, -5]), 2.0, rounding_mode="trunc").tolist() == [2.0, -2.0]
    assert tt.div(7, tt.tensor([-2]), rounding_mode="trunc").tolist() == [-3]
    h = tt.div(tt.ones(3, dtype=tt.float16), tt.tensor([2, 2, 2]), rounding_mode="trunc")
    assert h.dtype == tt.float16
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        tt.div(tt.tensor([1]), tt.tensor([0]), rounding_mode="trunc")
    x = tt.tensor([5.0, -5.0])
    x.div_(2.0, rounding_mode="trunc")
    assert x.tolist() == [2.0, -2.0]


def test_movedim_0d():
    s = tt.tensor(1.0)
    for d in (0, -1, (0,), ()):
        assert tt.movedim(s, d, d).item() == 1.0
    with pytest.raises(IndexError, match="Dimension out of range"):
        tt.movedim(s, 1, 0)
