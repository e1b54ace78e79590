"""The autograd API beyond backward(): custom ``autograd.Function``, ``autograd.grad`` and double
backward (create_graph=True) checked against finite differences."""
import numpy as np
import pytest

import tinytorch as tt
from tinytorch.autograd import Function, gradcheck
from conftest import to_numpy


def leaf(values, dtype=tt.float64):
    return tt.tensor(values, dtype=dtype, requires_grad=True)


# ------------------------------------------------------------------ custom Function

class MulAdd(Function):
    """(x * y + 1, x - y) with x, y tensors and a scalar ``k`` scaling the first output."""

    @staticmethod
    def forward(ctx, x, y, k):
        ctx.save_for_backward(x, y)
        ctx.k = k
        ctx.seen_needs = ctx.needs_input_grad
        assert not tt.is_grad_enabled()       # forward runs without recording
        return (x * y + 1.0) * k, x - y

    @staticmethod
    def backward(ctx, g0, g1):
        x, y = ctx.saved_tensors
        return g0 * y * ctx.k + g1, g0 * x * ctx.k - g1, None


def test_custom_function_multiple_outputs():
    x = leaf([1.0, 2.0])
    y = leaf([3.0, -1.0])
    a, b = MulAdd.apply(x, y, 2.0)
    assert a.grad_fn.name() == "MulAddBackward" and b.grad_fn is a.grad_fn
    np.testing.assert_array_equal(to_numpy(a), [8, -2])
    (a.sum() + (b * 3.0).sum()).backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [2 * 3 + 3, 2 * -1 + 3])
    np.testing.assert_array_equal(to_numpy(y.grad), [2 * 1 - 3, 2 * 2 - 3])
    # one output unused: its gradient is materialized as zeros
    x.grad = y.grad = None
    a, b = MulAdd.apply(x, y, 1.0)
    b.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [1, 1])
    assert gradcheck(lambda p, q: MulAdd.apply(p, q, 0.5), (leaf([0.3, -0.7]), leaf([1.1, 0.2])))


def test_custom_function_needs_input_grad():
    x = leaf([1.0])
    c = tt.tensor([2.0], dtype=tt.float64)
    captured = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, a, b):
            captured["fwd"] = ctx.needs_input_grad
            return a * b

        @staticmethod
        def backward(ctx, g):
            captured["bwd"] = ctx.needs_input_grad
            return g * 2.0, g * 100.0     # second is dropped: c doesn't need grad

    out = Probe.apply(x, c)
    out.backward()
    assert captured["fwd"] == (True, False) and captured["bwd"] == (True, False)
    assert c.grad is None and to_numpy(x.grad).tolist() == [2.0]
    # no input requires grad: no node, output doesn't require grad
    assert not Probe.apply(c, c).requires_grad


def test_custom_function_mark_non_differentiable():
    class SortWithIndex(Function):
        @staticmethod
        def forward(ctx, x):
            v, i = x.sort()
            ctx.mark_non_differentiable(i)
            ctx.save_for_backward(i)
            return v, i

        @staticmethod
        def backward(ctx, gv, gi):
            i, = ctx.saved_tensors
            return tt.zeros_like(gv).scatter(0, i, gv)

    x = leaf([3.0, 1.0, 2.0])
    v, i = SortWithIndex.apply(x)
    assert v.requires_grad and not i.requires_grad
    (v * tt.tensor([1.0, 2.0, 3.0], dtype=tt.float64)).sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [3, 1, 2])


def test_custom_function_wrong_gradient_count_and_gradcheck_catches_bad_backward():
    class TooMany(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2.0

        @staticmethod
        def backward(ctx, g):
            return g, g, g

    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        TooMany.apply(leaf([1.0])).backward()

    class Wrong(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * x                         # should be 2 * g * x

    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        gradcheck(Wrong.apply, (leaf([0.5, 1.5]),))
    assert gradcheck(Wrong.apply, (leaf([0.5, 1.5]),), raise_exception=False) is False


def test_custom_function_returning_its_input():
    class Ident(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 3.0

    x = leaf([1.0, 2.0])
    y = Ident.apply(x)
    assert y is not x and x.is_leaf and not y.is_leaf
    y.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [3, 3])


# ------------------------------------------------------------------ autograd.grad

def test_autograd_grad_allow_unused():
    x, y, z = leaf([1.0, 2.0]), leaf([3.0]), leaf([5.0])
    out = (x * y).sum()
    gx, gz = tt.autograd.grad(out, [x, z], retain_graph=True, allow_unused=True)
    np.testing.assert_array_equal(to_numpy(gx), [3, 3])
    assert gz is None
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        tt.autograd.grad(out, [x, z], retain_graph=True)
    gz, = tt.autograd.grad(out, [z], materialize_grads=True)
    np.testing.assert_array_equal(to_numpy(gz), [0])
    assert x.grad is None and y.grad is None   # grad() doesn't accumulate


def test_autograd_grad_with_grad_outputs_and_multiple_outputs():
    x = leaf([1.0, 2.0, 3.0])
    a, b = x * 2.0, x.sum()
    go = tt.tensor([1.0, 0.0, -1.0], dtype=tt.float64)
    g, = tt.autograd.grad([a, b], [x], grad_outputs=[go, tt.tensor(10.0, dtype=tt.float64)])
    np.testing.assert_array_equal(to_numpy(g), [12, 10, 8])


def test_autograd_grad_of_non_leaf_intermediate():
    x = leaf([1.0, 2.0])
    h = x * 3.0
    out = (h * h).sum()
    gh, gx = tt.autograd.grad(out, [h, x])
    np.testing.assert_array_equal(to_numpy(gh), [6, 12])
    np.testing.assert_array_equal(to_numpy(gx), [18, 36])


def test_autograd_grad_input_not_requiring_grad_raises():
    x = leaf([1.0])
    with pytest.raises(RuntimeError, match="does not require grad"):
        tt.autograd.grad((x * 2).sum(), [tt.ones(1)])


def _hvp_check(f, x0, seed=0, eps=1e-6):
    """Hessian-vector product by double backward vs central differences of the gradient."""
    rng = np.random.default_rng(seed)
    v = rng.uniform(-1, 1, np.shape(x0))
    x = leaf(x0)
    g, = tt.autograd.grad(f(x), [x], create_graph=True)
    assert g.requires_grad, "create_graph=True must give a differentiable gradient"
    hv, = tt.autograd.grad((g * tt.tensor(v, dtype=tt.float64)).sum(), [x])

    def grad_at(xv):
        xx = leaf(xv)
        gg, = tt.autograd.grad(f(xx), [xx])
        return to_numpy(gg)
    numeric = (grad_at(np.asarray(x0) + eps * v) - grad_at(np.asarray(x0) - eps * v)) / (2 * eps)
    np.testing.assert_allclose(to_numpy(hv), numeric, rtol=1e-5, atol=1e-7)
    return to_numpy(hv)


def test_double_backward_cube_exact():
    x = leaf([1.0, -2.0, 0.5])
    y = (x ** 3).sum()
    g, = tt.autograd.grad(y, x, create_graph=True)
    np.testing.assert_allclose(to_numpy(g), 3 * np.array([1.0, -2.0, 0.5]) ** 2)
    g2, = tt.autograd.grad(g.sum(), x, create_graph=True)
    np.testing.assert_allclose(to_numpy(g2), 6 * np.array([1.0, -2.0, 0.5]))
    g3, = tt.autograd.grad(g2.sum(), x)
    np.testing.assert_allclose(to_numpy(g3), [6, 6, 6])


def _seeded_dropout(x):
    tt.manual_seed(0)                       # the same mask at every evaluation
    return tt.nn.functional.dropout(x, 0.4)


DOUBLE_BACKWARD = {
    "cube": lambda x: (x ** 3).sum(),
    "sin_exp": lambda x: (x.sin() * x.exp()).sum(),
    "tanh_sigmoid": lambda x: (x.tanh() + x.sigmoid() * x).sum(),
    "relu_sq": lambda x: (x.relu() * x).sum(),
    "div_log": lambda x: (x.abs().log() / (x * x + 1.0)).sum(),
    "sqrt_rsqrt": lambda x: ((x * x + 1.0).sqrt() + (x * x + 2.0).rsqrt()).sum(),
    "pow_tensor": lambda x: ((x * x + 1.0) ** x).sum(),
    "mul_broadcast": lambda x: (x.view(2, 2) * x.view(2, 2).t()).sum(),
    "max_min": lambda x: tt.maximum(x, x * 0.5).sum() * tt.minimum(x, -x).sum(),
    "sum_sq": lambda x: x.sum() ** 2,
    "mean_var": lambda x: x.view(2, 2).var(1).sum() + x.mean() ** 2,
    "std": lambda x: x.std(),
    "prod": lambda x: x.prod(),
    "logsumexp": lambda x: x.view(2, 2).logsumexp(1).sum() * x.sum(),
    "softmax": lambda x: (x.view(2, 2).softmax(-1) * tt.tensor([[1.0, 2.0], [3.0, -1.0]], dtype=tt.float64)).sum() ** 2,
    "log_softmax": lambda x: (x.log_softmax(0) ** 2).sum(),
    "norm": lambda x: x.norm() ** 3,
    "cumsum_cumprod": lambda x: (x.cumsum(0) ** 2).sum() + x.cumprod(0).sum(),
    "index": lambda x: (x[tt.tensor([0, 0, 3])] ** 3).sum() + (x.view(2, 2)[:, 1] ** 2).prod(),
    "gather_cat": lambda x: (tt.cat([x, x.gather(0, tt.tensor([2, 1]))]) ** 3).sum(),
    "amax": lambda x: x.amax() ** 2 + x.max(0).values ** 3,
    "where_clamp": lambda x: (tt.where(x > 0, x ** 2, x ** 3).clamp(-5, 5) ** 2).sum(),
    # activations whose first backward is a fused kernel: a composite formula under create_graph
    "gelu": lambda x: (tt.nn.functional.gelu(x) * x).sum(),
    "gelu_tanh": lambda x: (tt.nn.functional.gelu(x, approximate="tanh") ** 2).sum(),
    "silu": lambda x: (tt.nn.functional.silu(x) * x).sum(),
    "softplus": lambda x: (tt.nn.functional.softplus(x, beta=2.0, threshold=1.5) ** 2).sum(),
    "leaky_relu": lambda x: (tt.nn.functional.leaky_relu(x, 0.2) ** 3).sum(),
    "elu": lambda x: (tt.nn.functional.elu(x, alpha=0.7) ** 2).sum(),
    "mish": lambda x: (tt.nn.functional.mish(x) * x).sum(),
    "hardswish": lambda x: (tt.nn.functional.hardswish(x * 3.0) ** 2).sum(),
    # fused backward kernels linear in the gradient: the forward op is their adjoint
    "dropout": lambda x: (_seeded_dropout(x) ** 3).sum(),
    "embedding": lambda x: (tt.nn.functional.embedding(tt.tensor([[0, 1], [1, 1]]), x.view(2, 2), padding_idx=0)
                            ** 3).sum() + (tt.nn.functional.embedding(tt.tensor([1, 0]), x.view(2, 2)) ** 2).sum(),
    "nll_loss": lambda x: tt.nn.functional.nll_loss(x.view(2, 2).log_softmax(1), tt.tensor([1, 0]),
                                                    weight=tt.tensor([0.3, 2.0], dtype=tt.float64)) ** 2
    + tt.nn.functional.nll_loss(x.view(2, 2) ** 3, tt.tensor([0, -100]), reduction="sum") ** 2
    + (tt.nn.functional.nll_loss(x.view(2, 2) * x.view(2, 2), tt.tensor([1, 1]), reduction="none") ** 2).sum(),
    # pooling backward kernels are linear in the gradient too
    "max_pool2d": lambda x: (tt.nn.functional.max_pool2d(x.view(1, 2, 2) * x.view(2, 2).t(), 2, 1, padding=1)
                             ** 3).sum(),
    "avg_pool2d": lambda x: (tt.nn.functional.avg_pool2d(x.view(1, 1, 2, 2), 2, 1, padding=1,
                                                         count_include_pad=False) ** 3).sum(),
    "adaptive_avg_pool2d": lambda x: (tt.nn.functional.adaptive_avg_pool2d(x.view(1, 2, 2) ** 2, (1, 2))
                                      ** 3).sum(),
    # composite linear formula (the fused backward kernel is used only without create_graph)
    "linear": lambda x: (tt.nn.functional.linear(x.view(2, 2), x.view(2, 2).t(), x[:2]) ** 2).sum()
    + (tt.nn.functional.linear(x.view(1, 2, 2), x.view(2, 2)) ** 3).sum(),
}


@pytest.mark.parametrize("name", sorted(DOUBLE_BACKWARD))
def test_double_backward_matches_finite_differences(name):
    _hvp_check(DOUBLE_BACKWARD[name], [0.7, -1.3, 0.4, 1.1], seed=len(name))


# prod and cumprod take division-free formulas where the input has zeros; their gradients must
# still depend on the zeros (a masked formula would give a wrong second derivative there).
AT_ZEROS = {
    "prod": lambda x: x.prod() + (x.view(2, 2).prod(1) ** 2).sum() + (x.view(2, 2).prod(0) * x[:2]).sum(),
    "cumprod": lambda x: (x.cumprod(0) * tt.tensor([1.0, -2.0, 0.5, 3.0], dtype=tt.float64)).sum() ** 2
    + (x.view(2, 2).cumprod(1) ** 2).sum(),
}


@pytest.mark.parametrize("name", sorted(AT_ZEROS))
@pytest.mark.parametrize("x0", [[0.0, -1.3, 0.4, 1.1], [0.7, 0.0, 0.0, 1.1], [0.7, -1.3, 0.4, 0.0], [0.0] * 4])
def test_double_backward_at_zeros(name, x0):
    # eps 1e-4: the gradient at x = +-eps divides by x (rounding / eps), and these are polynomials
    _hvp_check(AT_ZEROS[name], x0, seed=len(name), eps=1e-4)


CONV_CASES = {  # name: (x shape, w shape, conv2d kwargs)
    "plain": ((2, 2, 5, 5), (3, 2, 3, 3), {}),
    "stride_pad_groups": ((1, 4, 6, 5), (4, 2, 3, 2), {"stride": (2, 1), "padding": 1, "groups": 2}),
    "dilation_unbatched": ((2, 6, 7), (2, 2, 2, 3), {"dilation": (2, 1), "padding": (1, 0)}),
    "same_even_kernel": ((1, 2, 5, 6), (2, 2, 2, 4), {"padding": "same"}),
}


@pytest.mark.parametrize("case", sorted(CONV_CASES))
def test_conv2d_double_backward(case):
    # Hessian-vector products in x, weight and bias together (gradient-penalty style)
    xs, ws, kw = CONV_CASES[case]
    nx, nw, nb = int(np.prod(xs)), int(np.prod(ws)), ws[0]
    out_w = {}

    def f(v):
        x, w, b = v[:nx].view(*xs), v[nx:nx + nw].view(*ws), v[nx + nw:]
        y = tt.nn.functional.conv2d(x, w, b, **kw)
        if "w" not in out_w:
            out_w["w"] = tt.tensor(np.random.default_rng(7).uniform(0.5, 1.5, tuple(y.shape)))
        return ((y ** 2) * out_w["w"]).sum() + (y.sum() * b.sum()) ** 2
    _hvp_check(f, np.random.default_rng(3).uniform(-1, 1, nx + nw + nb), seed=len(case))


ACTIVATIONS = {
    "gelu": lambda x: tt.nn.functional.gelu(x),
    "gelu_tanh": lambda x: tt.nn.functional.gelu(x, approximate="tanh"),
    "silu": tt.nn.functional.silu,
    "softplus": lambda x: tt.nn.functional.softplus(x, beta=1.5, threshold=2.0),
    "leaky_relu": lambda x: tt.nn.functional.leaky_relu(x, 0.1),
    "elu": lambda x: tt.nn.functional.elu(x, alpha=1.3),
    "mish": tt.nn.functional.mish,
    "hardswish": tt.nn.functional.hardswish,
}


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_composite_gradient_matches_fused_kernel(name, dtype):
    # the create_graph formula and the fused kernel agree, edges included (0, +-3, the threshold)
    vals = np.concatenate([np.linspace(-5, 5, 41), [0.0, -3.0, 3.0, 4.0 / 3.0, 1e-3, -1e-3]])
    x = tt.tensor(vals, dtype=getattr(tt, dtype), requires_grad=True)
    fused, = tt.autograd.grad(ACTIVATIONS[name](x).sum(), x)
    composite, = tt.autograd.grad(ACTIVATIONS[name](x).sum(), x, create_graph=True)
    rtol = {"float64": 1e-12, "float32": 1e-5, "float16": 4e-3, "bfloat16": 3e-2}[dtype]
    np.testing.assert_allclose(to_numpy(composite), to_numpy(fused), rtol=rtol, atol=rtol)


def test_double_backward_through_fused_kernel_raises():
    x = leaf([0.5, -0.3, 1.2])
    g, = tt.autograd.grad(tt.nn.functional.layer_norm(x, (3,)).pow(3).sum(), x, create_graph=True)
    with pytest.raises(NotImplementedError, match="double backward through"):
        tt.autograd.grad(g.sum(), x)


def test_backward_create_graph_populates_differentiable_grad():
    x = leaf([2.0])
    (x ** 3).backward(create_graph=True)
    assert x.grad.requires_grad
    np.testing.assert_allclose(to_numpy(x.grad), [12.0])
    g = x.grad
    x.grad = None
    g.backward()
    np.testing.assert_allclose(to_numpy(x.grad), [12.0])   # d(3x^2)/dx = 6x
