"""The op table (rows from the schema, codegen/ops.py, via tests/support/op_table.py): every row with a
reference against its float64 numpy reference on every device, float dtype and layout, broadcasting
for binary rows; gradients against central differences (gradcheck) and, on the GPU, against the CPU's;
second derivatives against finite differences of the gradient; each fused backward kernel equal to
the schema's formula."""
import numpy as np
import pytest

import tinytorch as tt
from support.numeric import DEVICES, FLOAT_DTYPES, GRAD_TOL, TOL, assert_close, make, to_numpy
from support.op_table import DIFFERENTIABLE, FUSED, ROWS

LAYOUTS = ["contiguous", "transposed", "sliced", "expanded"]
BROADCAST = [((4, 5), (4, 5)), ((4, 1), (1, 5)), ((2, 3, 4), (3, 1)), ((), (3, 2))]


def _inputs(row, shape, dtype, layout, seed, requires_grad=False, device="cpu"):
    lo, hi = row.domain
    return make(shape, dtype, layout, lo, hi, seed=seed, requires_grad=requires_grad, device=device)


def _check_forward(row, y, expected, dtype, device):
    assert y.device.type == device
    if row.bool_result:
        assert y.dtype == tt.bool
        np.testing.assert_array_equal(y.cpu().numpy(), expected)
        return
    assert y.dtype.name == dtype
    rtol, atol = TOL[dtype]
    assert_close(y, expected, dtype, tol=(rtol, atol * max(1.0, np.abs(expected).max())), what=row.name)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name", sorted(n for n, r in ROWS.items() if not r.binary))
def test_unary_forward(name, dtype, layout, device):
    row = ROWS[name]
    x, xr = _inputs(row, (5, 7), dtype, layout, seed=len(name), device=device)
    _check_forward(row, row.call(x), row.ref(xr), dtype, device)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shapes", BROADCAST, ids=str)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name", sorted(n for n, r in ROWS.items() if r.binary))
def test_binary_forward(name, dtype, shapes, device):
    row = ROWS[name]
    a, ar = _inputs(row, shapes[0], dtype, "contiguous", seed=1, device=device)
    b, br = _inputs(row, shapes[1], dtype, "transposed" if len(shapes[1]) == 2 else "contiguous", seed=2,
                    device=device)
    y = row.call(a, b)
    expected = row.ref(ar, br)
    assert tuple(y.shape) == np.shape(expected)
    _check_forward(row, y, expected, dtype, device)


def _args(row, requires_grad=True, dtype="float64", seed=3):
    shapes = [(3, 4), (4,)] if row.binary else [(3, 4)]
    return [_inputs(row, s, dtype, "transposed" if i == 0 and len(s) == 2 else "contiguous", seed + i,
                    requires_grad)[0] for i, s in enumerate(shapes)]


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_gradient_matches_finite_differences(name):
    row = ROWS[name]
    assert tt.autograd.gradcheck(row.call, tuple(_args(row)))


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_gpu_gradient_matches_cpu(name, dtype):
    """Input gradients on the GPU equal the CPU's (same values, strided on both)."""
    row = ROWS[name]
    cpu = _args(row, dtype=dtype, seed=len(name))
    gpu = [x.detach().to("cuda").requires_grad_() for x in cpu]
    y_cpu, y_gpu = row.call(*cpu), row.call(*gpu)
    g = tt.ones(*y_cpu.shape, dtype=y_cpu.dtype)
    g_cpu = tt.autograd.grad(y_cpu, cpu, g, allow_unused=True)
    g_gpu = tt.autograd.grad(y_gpu, gpu, g.to("cuda"), allow_unused=True)
    for a, b in zip(g_cpu, g_gpu):
        assert (a is None) == (b is None)
        if a is not None:
            assert b.device.type == "cuda"
            assert_close(b, to_numpy(a), dtype, tol=GRAD_TOL[dtype], what=f"{name} gradient")


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_second_derivative_matches_finite_differences(name):
    """d/dx <grad f(x), v> from autograd (create_graph) against central differences of grad f."""
    row = ROWS[name]
    args = _args(row)
    rng = np.random.default_rng(0)
    w = tt.tensor(rng.uniform(0.5, 1.5, tuple(row.call(*args).shape)))   # weights of the output

    def grads(*xs):
        return tt.autograd.grad((row.call(*xs) * w).sum(), xs, create_graph=True)

    def directional(*xs):   # a scalar function of xs whose gradient is the Hessian times v
        return sum((g * tt.tensor(rng_v)).sum() for g, rng_v in zip(grads(*xs), vs))

    vs = [np.random.default_rng(i + 5).uniform(-1, 1, tuple(x.shape)) for i, x in enumerate(args)]
    d = directional(*args)
    # a gradient that does not depend on the inputs (piecewise-linear ops): zero second derivative
    hv = tt.autograd.grad(d, args, allow_unused=True) if d.requires_grad else [None] * len(args)
    eps = 1e-6
    for i, x in enumerate(args):
        xr = to_numpy(x)
        numeric = np.zeros_like(xr)
        for k in np.ndindex(xr.shape):
            vals = []
            for sign in (1, -1):
                shifted = [a.detach().clone() for a in args]
                xs = xr.copy()
                xs[k] += sign * eps
                shifted[i] = tt.tensor(xs).requires_grad_()
                for j, s in enumerate(shifted):
                    s.requires_grad_(True)
                vals.append(sum(float((g * tt.tensor(v)).sum()) for g, v in zip(grads(*shifted), vs)))
            numeric[k] = (vals[0] - vals[1]) / (2 * eps)
        got = np.zeros_like(xr) if hv[i] is None else to_numpy(hv[i])
        np.testing.assert_allclose(got, numeric, rtol=1e-4, atol=1e-6, err_msg=f"{name}: d/d input {i}")


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name", FUSED)
def test_fused_backward_kernel_equals_formula(name, dtype):
    """The fused kernel runs in a plain backward; create_graph=True runs the schema's formula."""
    row = ROWS[name]
    x, _ = _inputs(row, (6, 5), dtype, "transposed", seed=7, requires_grad=True)
    g, _ = _inputs(row, (6, 5), dtype, "contiguous", seed=8, requires_grad=True)
    fused, = tt.autograd.grad(row.call(x), x, g)
    formula, = tt.autograd.grad(row.call(x), x, g, create_graph=True)
    assert fused.grad_fn is None and formula.grad_fn is not None   # two different code paths ran
    rtol, atol = GRAD_TOL[dtype]
    assert_close(fused, to_numpy(formula), dtype, tol=(rtol, atol), what=name)
