"""Double backward (create_graph=True): Hessian-vector products against central differences of
the gradient for ops whose first backward is a fused kernel (activations, conv2d, pooling, losses,
dropout, embedding) or a division-free formula at zeros (prod, cumprod); composite formulas equal
to the fused kernels they replace under create_graph."""
import itertools

import numpy as np
import pytest

import tinytorch as tt
from support.numeric import to_numpy

F = tt.nn.functional


def leaf(values, dtype=tt.float64):
    return tt.tensor(values, dtype=dtype, requires_grad=True)


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
    return F.dropout(x, 0.4)


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
    "gelu": lambda x: (F.gelu(x) * x).sum(),
    "gelu_tanh": lambda x: (F.gelu(x, approximate="tanh") ** 2).sum(),
    "silu": lambda x: (F.silu(x) * x).sum(),
    "softplus": lambda x: (F.softplus(x, beta=2.0, threshold=1.5) ** 2).sum(),
    "leaky_relu": lambda x: (F.leaky_relu(x, 0.2) ** 3).sum(),
    "elu": lambda x: (F.elu(x, alpha=0.7) ** 2).sum(),
    "mish": lambda x: (F.mish(x) * x).sum(),
    "hardswish": lambda x: (F.hardswish(x * 3.0) ** 2).sum(),
    # fused backward kernels linear in the gradient: the forward op is their adjoint
    "dropout": lambda x: (_seeded_dropout(x) ** 3).sum(),
    "embedding": lambda x: (F.embedding(tt.tensor([[0, 1], [1, 1]]), x.view(2, 2), padding_idx=0)
                            ** 3).sum() + (F.embedding(tt.tensor([1, 0]), x.view(2, 2)) ** 2).sum(),
    "nll_loss": lambda x: F.nll_loss(x.view(2, 2).log_softmax(1), tt.tensor([1, 0]),
                                                    weight=tt.tensor([0.3, 2.0], dtype=tt.float64)) ** 2
    + F.nll_loss(x.view(2, 2) ** 3, tt.tensor([0, -100]), reduction="sum") ** 2
    + (F.nll_loss(x.view(2, 2) * x.view(2, 2), tt.tensor([1, 1]), reduction="none") ** 2).sum(),
    # pooling backward kernels are linear in the gradient too
    "max_pool2d": lambda x: (F.max_pool2d(x.view(1, 2, 2) * x.view(2, 2).t(), 2, 1, padding=1)
                             ** 3).sum(),
    "avg_pool2d": lambda x: (F.avg_pool2d(x.view(1, 1, 2, 2), 2, 1, padding=1,
                                                         count_include_pad=False) ** 3).sum(),
    "adaptive_avg_pool2d": lambda x: (F.adaptive_avg_pool2d(x.view(1, 2, 2) ** 2, (1, 2))
                                      ** 3).sum(),
    # composite linear formula (the fused backward kernel is used only without create_graph)
    "linear": lambda x: (F.linear(x.view(2, 2), x.view(2, 2).t(), x[:2]) ** 2).sum()
    + (F.linear(x.view(1, 2, 2), x.view(2, 2)) ** 3).sum(),
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
        y = F.conv2d(x, w, b, **kw)
        if "w" not in out_w:
            out_w["w"] = tt.tensor(np.random.default_rng(7).uniform(0.5, 1.5, tuple(y.shape)))
        return ((y ** 2) * out_w["w"]).sum() + (y.sum() * b.sum()) ** 2
    _hvp_check(f, np.random.default_rng(3).uniform(-1, 1, nx + nw + nb), seed=len(case))


ACTIVATIONS = {
    "gelu": lambda x: F.gelu(x),
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "silu": F.silu,
    "softplus": lambda x: F.softplus(x, beta=1.5, threshold=2.0),
    "leaky_relu": lambda x: F.leaky_relu(x, 0.1),
    "elu": lambda x: F.elu(x, alpha=1.3),
    "mish": F.mish,
    "hardswish": F.hardswish,
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


def test_third_derivative_through_conv2d_raises():
    # conv2d's double backward runs its two kernels unrecorded: differentiating once more raises
    x, w = leaf(np.ones((1, 1, 4, 4))), leaf(np.ones((1, 1, 3, 3)))
    g, = tt.autograd.grad((F.conv2d(x, w) ** 2).sum(), x, create_graph=True)
    h, = tt.autograd.grad((g ** 2).sum(), w, create_graph=True)
    with pytest.raises(NotImplementedError, match="double backward through ConvolutionBackwardBackward"):
        tt.autograd.grad(h.sum(), x)


NORM_CASES = [((4, 6), 1, True, True), ((2, 3, 5), 2, True, False), ((3, 8), 1, False, False), ((2, 2, 3), 1, True, True)]


@pytest.mark.parametrize("shape,nd,weighted,bias", NORM_CASES)
@pytest.mark.parametrize("kind", ["layer_norm", "rms_norm"])
def test_norm_composite_gradients_match_fused_kernel(kind, shape, nd, weighted, bias):
    rng = np.random.default_rng(len(shape) + nd)
    x = leaf(rng.standard_normal(shape) * 3 + 1)
    w = leaf(rng.uniform(0.5, 1.5, shape[-nd:])) if weighted else None
    b = leaf(rng.standard_normal(shape[-nd:])) if bias and kind == "layer_norm" else None
    if kind == "layer_norm":
        out = F.layer_norm(x, shape[-nd:], w, b, eps=1e-3)
    else:
        out = F.rms_norm(x, shape[-nd:], w, eps=1e-3)
    g = tt.tensor(rng.standard_normal(shape))
    leaves = [t for t in (x, w, b) if t is not None]
    fused = tt.autograd.grad(out, leaves, g, retain_graph=True)
    composite = tt.autograd.grad(out, leaves, g, create_graph=True)
    assert composite[0].requires_grad          # (the bias gradient is sum(g): constant when g is)
    for a, c in zip(fused, composite):
        np.testing.assert_allclose(to_numpy(c), to_numpy(a), rtol=1e-10, atol=1e-12)


CE_CASES = list(itertools.product([(5, 4), (3, 4, 2, 3), (4,)], ["none", "mean", "sum"], [False, True],
                                  [False, True], [0.0, 0.2]))


def _ce_inputs(shape, weighted, ignore, seed):
    rng = np.random.default_rng(seed)
    c = shape[1] if len(shape) > 1 else shape[0]
    tv = rng.integers(0, c, (shape[0],) + shape[2:] if len(shape) > 1 else ())
    if ignore and len(shape) > 1:
        tv.flat[0] = -100
    w = tt.tensor(rng.uniform(0.5, 2.0, c), dtype=tt.float64) if weighted else None
    return rng.standard_normal(shape), tt.tensor(tv), w


@pytest.mark.parametrize("shape,reduction,weighted,ignore,smoothing", CE_CASES)
def test_cross_entropy_composite_gradient_matches_fused_kernel(shape, reduction, weighted, ignore, smoothing):
    xv, t, w = _ce_inputs(shape, weighted, ignore, seed=len(CE_CASES))
    x = leaf(xv)
    out = F.cross_entropy(x, t, weight=w, reduction=reduction, label_smoothing=smoothing)
    g = tt.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)))
    fused, = tt.autograd.grad(out, x, g, retain_graph=True)
    composite, = tt.autograd.grad(out, x, g, create_graph=True)
    assert composite.requires_grad
    np.testing.assert_allclose(to_numpy(composite), to_numpy(fused), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("reduction,smoothing", [("mean", 0.0), ("mean", 0.3), ("none", 0.1), ("sum", 0.0)])
def test_cross_entropy_double_backward(reduction, smoothing):
    xv, t, w = _ce_inputs((3, 4, 2), True, True, seed=5)
    scale = tt.tensor(np.random.default_rng(2).uniform(0.5, 1.5, (3, 2) if reduction == "none" else ()))

    def f(x):
        loss = F.cross_entropy(x.view(3, 4, 2) * x.view(3, 4, 2), t, weight=w, reduction=reduction,
                               label_smoothing=smoothing)
        return (loss * scale).sum() ** 2
    _hvp_check(f, xv.reshape(-1), seed=3)
