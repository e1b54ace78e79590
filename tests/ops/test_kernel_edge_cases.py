"""Kernel edge cases: size overflow, strided argmax/argmin, silent wrong results in kernels.

Every expected behaviour and error type is PyTorch 2.13's. Cases that crashed (segfault, heap
overrun, hang) run in a subprocess, so a crash fails the test instead of killing pytest.
"""
import math
import subprocess
import sys
import textwrap

import pytest

import tinytorch as tt

NAN, INF = float("nan"), float("inf")


def run_isolated(body: str, timeout: float = 120) -> str:
    """Runs `body` in a fresh interpreter (tt imported); returns stdout; fails on a crash."""
    code = "import tinytorch as tt\n" + textwrap.dedent(body)
    try:
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"timed out (hang) after {timeout}s:\n{body}")
    assert r.returncode == 0, f"crashed or failed (rc={r.returncode}):\n{body}\n{r.stderr[-2000:]}"
    return r.stdout


def raises_isolated(expr: str, exc: str = "RuntimeError") -> str:
    """`expr` must raise `exc` (by name) in a fresh interpreter; returns the message."""
    out = run_isolated(f"""
        try:
            r = {expr}
        except Exception as e:
            print("RAISED", type(e).__name__, str(e).replace(chr(10), " "))
        else:
            print("NO ERROR", getattr(r, "shape", r))
    """)
    assert out.startswith(f"RAISED {exc} "), f"{expr}: expected {exc}, got: {out.strip()[:300]}"
    return out


# ---------------------------------------------------------------- 1. size overflow

OVERFLOW = [
    "tt.zeros(2**31, 2**31)",
    "tt.empty(2**62, dtype=tt.int32)",
    "tt.empty(2**63 - 1)",
    "tt.empty(2**63 - 1)[100000000].item()",
    "tt.ones(2**62)",
    "tt.full((2**62,), 1.5)",
    "tt.rand(2**62)",
    "tt.randn(2**62)",
    "tt.randint(0, 5, (2**62,))",
    "tt.arange(0, 2**62)",
    "tt.linspace(0, 1, 2**62)",
    "tt.eye(2**40)",
    "tt.eye(2**63 - 1, dtype=tt.uint8)",
    "tt.zeros(1).new_zeros((2**62,))",
    "tt.zeros_like(tt.tensor([1.]).expand(2**62))",
    "tt.tensor([1.]).expand(2**62).contiguous()",
    "tt.tensor([1.], dtype=tt.float64).expand(2**61, 4).contiguous()",
]


@pytest.mark.parametrize("expr", OVERFLOW)
def test_size_overflow_raises(expr):
    out = raises_isolated(expr)
    assert "overflow" in out


def test_allocation_too_large_for_memory_raises():
    # 2**48 float32 elements = 1 PiB: no overflow, but no machine has it
    out = raises_isolated("tt.empty(2**48)")
    assert "out of memory" in out and str(2**50) in out


def test_sizes_that_fit_still_work():
    assert tt.empty(0, 2**40).shape == (0, 2**40)
    assert tt.zeros(3, 4, dtype=tt.int32).sum().item() == 0
    assert tt.tensor([1.]).expand(2**62).shape == (2**62,)  # a view allocates nothing


# ---------------------------------------------------------------- 2. argmax / argmin without dim

def test_argmax_argmin_of_strided_view():
    d = tt.tensor([[1., 9.], [5., 0.]]).diagonal()  # [1, 0], stride 3
    assert d.argmax().item() == 0 and d.argmin().item() == 1
    assert d.argmax(keepdim=True).shape == (1,)
    t = tt.arange(12.).reshape(3, 4).t()  # non-contiguous, values in column order
    assert t.argmax().item() == 11 and t.argmin().item() == 0
    assert tt.tensor([3., 7., 5.])[::2].argmax().item() == 1  # [3, 5]


def test_argmax_of_expanded_tensor():
    out = run_isolated("""
        print(tt.tensor([1], dtype=tt.uint8).expand(10**8).argmax().item(),
              tt.tensor([2.]).expand(10**7).argmin().item())
    """)
    assert out.split() == ["0", "0"]


# ---------------------------------------------------------------- 3. silent wrong results

FLOATS = [tt.float32, tt.float64, tt.float16, tt.bfloat16]


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_relu_threshold_keep_nan(dtype):
    x = tt.tensor([NAN, -1.0, 2.0], dtype=dtype)
    for y in (tt.relu(x), x.relu(), x.clone().relu_(), tt.nn.functional.relu(x),
              tt.nn.functional.threshold(x, 0.0, 5.0), tt.nn.functional.threshold(x.clone(), 0.0, 5.0, True)):
        v = y.float().tolist()
        assert math.isnan(v[0]), v
    assert tt.nn.functional.threshold(x, 0.0, 5.0).float().tolist()[1:] == [5.0, 2.0]


def test_relu_backward_passes_gradient_at_nan():
    x = tt.tensor([NAN, -1.0, 2.0], requires_grad=True)
    tt.relu(x).sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 1.0]  # threshold_backward: NaN <= 0 is false


def test_hardswish_infinities_and_nan():
    y = tt.nn.functional.hardswish(tt.tensor([-INF, INF, NAN, -3.0, 3.0, 1.0])).tolist()
    assert math.isnan(y[0]) and y[1] == INF and math.isnan(y[2])
    assert y[3:] == pytest.approx([0.0, 3.0, 4.0 / 6.0])
    x = tt.tensor([NAN, -4.0, 4.0, 2.0], requires_grad=True)
    tt.nn.functional.hardswish(x).sum().backward()
    assert x.grad.tolist() == pytest.approx([1.0, 0.0, 1.0, 7.0 / 6.0])  # torch's hardswish_backward


def test_float_floor_divide_follows_fmod():
    a = tt.tensor([INF, -INF, 5.0, 1.0, 0.0, -7.0, 7.5])
    b = tt.tensor([2.0, 2.0, INF, 0.0, 0.0, 2.0, -2.0])
    for y in (tt.floor_divide(a, b), a // b, tt.div(a, b, rounding_mode="floor")):
        v = y.tolist()
        assert math.isnan(v[0]) and math.isnan(v[1]) and math.isnan(v[4])
        assert v[2] == 0.0 and v[3] == INF and v[5] == -4.0 and v[6] == -4.0
    assert math.isnan((tt.tensor([INF]) // 2.0).item())


INT_DIVS = [
    lambda a, b: tt.floor_divide(a, b),
    lambda a, b: a // b,
    lambda a, b: tt.remainder(a, b),
    lambda a, b: a % b,
    lambda a, b: tt.div(a, b, rounding_mode="floor"),
    lambda a, b: a.clone().floor_divide_(b),
]


@pytest.mark.parametrize("dtype", [tt.int64, tt.int32, tt.uint8], ids=str)
@pytest.mark.parametrize("k", range(len(INT_DIVS)))
def test_integer_division_by_zero_raises(dtype, k):
    f = INT_DIVS[k]
    a = tt.tensor([1, 2, 3], dtype=dtype)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        f(a, tt.tensor([1, 0, 1], dtype=dtype))
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        f(a, 0)
    assert f(a, tt.tensor([1, 2, 1], dtype=dtype)).tolist() == f(a, tt.tensor([1, 2, 1], dtype=dtype)).tolist()
    assert tt.floor_divide(a, 2).tolist() == [0, 1, 1]


def test_float_division_by_zero_does_not_raise():
    assert (tt.tensor([1.0, 2.0]) // 0).tolist() == [INF, INF]
    assert tt.floor_divide(tt.zeros(0, dtype=tt.int64), tt.zeros(0, dtype=tt.int64)).shape == (0,)


def test_tensor_integer_range_checked():
    with pytest.raises(RuntimeError, match="without overflow"):
        tt.tensor([-1, 256, 300], dtype=tt.uint8)
    with pytest.raises(RuntimeError, match="without overflow"):
        tt.tensor([-256], dtype=tt.uint8)
    with pytest.raises(RuntimeError, match="without overflow"):
        tt.tensor([2**31], dtype=tt.int32)
    assert tt.tensor([-1, -255, 255], dtype=tt.uint8).tolist() == [255, 1, 255]  # torch wraps these
    assert tt.tensor([2**31 - 1, -2**31], dtype=tt.int32).tolist() == [2**31 - 1, -2**31]


def test_fill_values_checked():
    m = tt.tensor([True, False])
    for v in (NAN, INF, -INF, 2.0**63):
        with pytest.raises(RuntimeError, match="without overflow"):
            tt.tensor([1, 2]).masked_fill(m, v)
    with pytest.raises(RuntimeError, match="without overflow"):
        tt.tensor([1, 2], dtype=tt.uint8).masked_fill(m, 300)
    with pytest.raises(RuntimeError, match="without overflow"):
        tt.tensor([1.0, 2.0], dtype=tt.float16).masked_fill(m, 1e10)
    with pytest.raises(RuntimeError, match="without overflow"):
        tt.full((2,), 300, dtype=tt.uint8)
    with pytest.raises(RuntimeError, match="without overflow"):
        tt.full((2,), NAN, dtype=tt.int32)
    with pytest.raises(RuntimeError, match="without overflow"):
        tt.zeros(2, dtype=tt.int32).fill_(2**40)
    assert tt.tensor([1, 2], dtype=tt.uint8).masked_fill(m, -1).tolist() == [255, 2]
    assert tt.tensor([1, 2]).masked_fill(m, 2.5).tolist() == [2, 2]
    assert tt.tensor([False, False]).masked_fill(m, NAN).tolist() == [True, False]
    assert tt.tensor([1.0, 2.0], dtype=tt.float16).masked_fill(m, INF).tolist() == [INF, 2.0]
    assert (tt.tensor([1.0]) + 1e300).item() == INF  # Python scalars in arithmetic are not checked
    assert (tt.tensor([1, 2], dtype=tt.uint8) + 300).tolist() == [45, 46]


def test_integer_negative_power_raises():
    for x in (tt.tensor([2], dtype=tt.uint8), tt.tensor([2]), tt.tensor([2], dtype=tt.int32)):
        with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed"):
            tt.pow(x, -3)
        with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed"):
            x ** -1
        with pytest.raises(RuntimeError, match="Integers to negative integer powers are not allowed"):
            x.clone().pow_(-1)
    assert tt.pow(tt.tensor([2], dtype=tt.uint8), 3).tolist() == [8]
    assert tt.pow(tt.tensor([2]), tt.tensor([-1])).tolist() == [0]  # tensor exponents: no check (torch)
    assert tt.pow(tt.tensor([2]), -3.0).tolist() == [0.125]


def test_gather_scatter_reject_negative_indices():
    x = tt.arange(5.0)
    for idx in (-1, 5):
        with pytest.raises(RuntimeError, match=f"index {idx} is out of bounds for dimension 0 with size 5"):
            tt.gather(x, 0, tt.tensor([idx]))
        with pytest.raises(RuntimeError, match=f"index {idx} is out of bounds for dimension 0 with size 5"):
            tt.zeros(5).scatter_add(0, tt.tensor([idx]), tt.ones(1))
        with pytest.raises(RuntimeError, match=f"index {idx} is out of bounds for dimension 0 with size 5"):
            tt.zeros(5).scatter(0, tt.tensor([idx]), tt.ones(1))
        with pytest.raises(RuntimeError, match=f"index {idx} is out of bounds for dimension 0 with size 5"):
            tt.zeros(5).scatter(0, tt.tensor([idx]), 1.0)
        with pytest.raises(IndexError):
            tt.index_select(x, 0, tt.tensor([idx]))
    assert tt.gather(x, 0, tt.tensor([4, 0])).tolist() == [4.0, 0.0]
    assert tt.index_select(x, 0, tt.tensor([4, 0])).tolist() == [4.0, 0.0]
    assert x[tt.tensor([-1])].tolist() == [4.0]  # advanced indexing wraps, as in PyTorch
