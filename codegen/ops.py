"""The op schema: one row per op. `python codegen/generate.py` writes from it the C++ op lists,
the elementwise Python functions and their backward tables, tinytorch.<op> exports, Tensor
methods and in-place variants, the autocast policy, and the rows the op-table tests run.

Adding a unary op with a kernel: a `Unary` row here and its scalar formula in
cpp/include/tinytorch/math.h (`UnaryFn::eval`). Adding a composite op: an `Op` row here and its
Python function in the family module. See docs/architecture.md, "Adding an op"."""
from schema import Binary, Functional, Keyword, Op, Schema, Unary

# ---------------------------------------------------------------------------------------------
# Unary kernels. grad: d/d input times grad; helpers such as _unary(...) live in _ops/elementwise.pyx.
U = Unary
UNARY = [
    #  name           dtypes        grad formula (times grad)                              test reference, domain
    U("neg", "integral", grad="-grad", inplace=True, aliases=("negative",), dunders=("__neg__",), ref="-x"),
    U("abs", "integral", grad="grad * _unary('sign', input)", inplace=True, aliases=("absolute",), dunders=("__abs__",), ref="np.abs(x)"),
    U("sign", "integral", grad="grad * 0.0", inplace=True, ref="np.nan_to_num(np.sign(x))"),
    U("exp", grad="grad * result", inplace=True, autocast="fp32", ref="np.exp(x)"),
    U("exp2", grad="grad * result * _LN2", inplace=True, ref="np.exp2(x)"),
    U("log", grad="grad / input", inplace=True, autocast="fp32", ref="np.log(x)", domain=(0.1, 3.0)),
    U("log2", grad="grad / (input * _LN2)", inplace=True, ref="np.log2(x)", domain=(0.1, 3.0)),
    U("log10", grad="grad / (input * _LN10)", inplace=True, ref="np.log10(x)", domain=(0.1, 3.0)),
    U("log1p", grad="grad / (input + 1.0)", grad_fn="Log1PBackward0", inplace=True, autocast="fp32",
      ref="np.log1p(x)", domain=(-0.5, 2.0)),
    U("expm1", grad="grad * (result + 1.0)", inplace=True, autocast="fp32", ref="np.expm1(x)"),
    U("sqrt", grad="grad / (result * 2.0)", inplace=True, ref="np.sqrt(x)", domain=(0.1, 3.0)),
    U("rsqrt", grad="grad * (result * result * result) * -0.5", inplace=True, autocast="fp32",
      ref="1 / np.sqrt(x)", domain=(0.2, 3.0)),
    U("sin", grad="grad * _unary('cos', input)", inplace=True, ref="np.sin(x)", domain=(-3.0, 3.0)),
    U("cos", grad="-grad * _unary('sin', input)", inplace=True, ref="np.cos(x)", domain=(-3.0, 3.0)),
    U("tan", grad="grad * (result * result + 1.0)", inplace=True, ref="np.tan(x)", domain=(-1.0, 1.0)),
    U("asin", grad="grad * _unary('rsqrt', 1.0 - input * input)", inplace=True, aliases=("arcsin",), ref="np.arcsin(x)",
      domain=(-0.8, 0.8)),
    U("acos", grad="-grad * _unary('rsqrt', 1.0 - input * input)", inplace=True, aliases=("arccos",), ref="np.arccos(x)",
      domain=(-0.8, 0.8)),
    U("atan", grad="grad / (input * input + 1.0)", inplace=True, aliases=("arctan",), ref="np.arctan(x)"),
    U("asinh", grad="grad * _unary('rsqrt', input * input + 1.0)", inplace=True, aliases=("arcsinh",), ref="np.arcsinh(x)"),
    U("acosh", grad="grad * _unary('rsqrt', input * input - 1.0)", inplace=True, aliases=("arccosh",), ref="np.arccosh(x)",
      domain=(1.2, 3.0)),
    U("atanh", grad="grad / (1.0 - input * input)", inplace=True, aliases=("arctanh",), ref="np.arctanh(x)", domain=(-0.8, 0.8)),
    U("sinh", grad="grad * _unary('cosh', input)", inplace=True, ref="np.sinh(x)"),
    U("cosh", grad="grad * _unary('sinh', input)", inplace=True, ref="np.cosh(x)"),
    U("tanh", grad="grad * (1 - result * result)", fused="tanh_backward(result)", inplace=True,
      ref="np.tanh(x)", domain=(-3.0, 3.0)),
    U("sigmoid", grad="grad * result * (1 - result)", fused="sigmoid_backward(result)", inplace=True,
      ref="sigmoid(x)", domain=(-4.0, 4.0)),
    U("relu", "integral", grad="grad * (result > 0)", fused="relu_backward(result)", inplace=True,
      ref="np.maximum(x, 0)"),
    U("erf", grad="grad * _TWO_OVER_SQRT_PI * _unary('exp', -(input * input))", inplace=True, ref="erf(x)"),
    U("erfinv", grad="grad * _SQRT_PI_OVER_2 * _unary('exp', result * result)", inplace=True,
      ref="erfinv(x)", domain=(-0.9, 0.9)),
    U("reciprocal", grad="-grad * result * result", inplace=True, autocast="fp32", ref="1 / x",
      domain=(0.3, 3.0)),
    U("square", "integral", grad="grad * input * 2.0", grad_fn="PowBackward0", inplace=True,
      ref="np.square(x)"),
    U("floor", "integral", grad="grad * 0.0", inplace=True, ref="np.floor(x)", domain=(-3.0, 3.0)),
    U("ceil", "integral", grad="grad * 0.0", inplace=True, ref="np.ceil(x)", domain=(-3.0, 3.0)),
    U("round", "integral", grad="grad * 0.0", inplace=True, public="F", ref="np.round(x)", domain=(-3.0, 3.0)),
    U("trunc", "integral", grad="grad * 0.0", inplace=True, aliases=("fix",), ref="np.trunc(x)", domain=(-3.0, 3.0)),
    U("isnan", "predicate", ref="np.isnan(x)"),
    U("isinf", "predicate", ref="np.isinf(x)"),
    U("isfinite", "predicate", ref="np.isfinite(x)"),
    U("logical_not", "predicate", inplace=True, dunders=("__invert__",), ref="np.logical_not(x)"),
    # activations: tinytorch.nn.functional only (as PyTorch), their fused backward tested equal to grad
    U("gelu", "float_only", grad="grad * _d_gelu(input)", fused="gelu_backward(input)", public=False,
      ref="0.5 * x * (1 + erf(x / math.sqrt(2)))", domain=(-3.0, 3.0)),
    U("gelu_tanh", "float_only", grad="grad * _d_gelu_tanh(input)", fused="gelu_tanh_backward(input)", public=False,
      grad_fn="GeluBackward0", ref="0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))",
      domain=(-3.0, 3.0)),
    U("silu", "float_only", grad="grad * _d_silu(input)", fused="silu_backward(input)", public="F",
      ref="x * sigmoid(x)", domain=(-3.0, 3.0)),
    U("softplus", "float_only", params=("beta=1.0", "threshold=20.0"), grad="_d_softplus(grad, input, beta, threshold)",
      fused="softplus_backward(input)", public="F", ref="np.where(x > 20, x, np.log1p(np.exp(np.minimum(x, 20))))",
      domain=(-3.0, 3.0)),
    U("leaky_relu", "float_only", params=("negative_slope=0.01",), grad="where(input > 0.0, grad, grad * negative_slope)",
      fused="leaky_relu_backward(input)", public="F", inplace=True, ref="np.where(x > 0, x, 0.01 * x)"),
    U("elu", "float_only", params=("alpha=1.0",), grad="where(input > 0.0, grad, grad * _unary('exp', input) * alpha)",
      fused="elu_backward(input)", public="F", ref="np.where(x > 0, x, np.expm1(x))"),
    U("mish", "float_only", grad="grad * _d_mish(input)", fused="mish_backward(input)", public="F",
      ref="x * np.tanh(np.log1p(np.exp(x)))", domain=(-3.0, 3.0)),
    U("hardswish", "float_only", grad="_d_hardswish(grad, input)", fused="hardswish_backward(input)", public="F",
      ref="x * np.clip(x + 3, 0, 6) / 6", domain=(-4.0, 4.0)),
    # kernels behind hand-written functions (clamp, pow): no exports of their own
    U("clamp_min", "integral", params=("min=0.0",), grad="where(input >= min, grad, 0.0)", public=False),
    U("clamp_max", "integral", params=("max=0.0",), grad="where(input <= max, grad, 0.0)", public=False),
    U("clamp", "integral", params=("min=0.0", "max=0.0"), grad_fn="ClampBackward1", public=False,
      grad="where((input >= min).logical_and(input <= max), grad, 0.0)"),
    U("pow_scalar", params=("exponent=1.0",), grad="_d_pow_scalar(grad, input, exponent)",
      grad_fn="PowBackward0", public=False),
    U("rpow_scalar", params=("base=1.0",), grad="grad * result * math.log(base)", grad_fn="PowBackward1",
      public=False),
]

# ---------------------------------------------------------------------------------------------
# Binary kernels. grad: (d/d input, d/d other), each times grad; only what the needed ones read is saved.
B = Binary
BINARY = [
    B("add", "arith_bool", alpha=True, grad=("grad", "grad if alpha == 1.0 else grad * alpha"),
      dunders=("__add__", "r:__radd__", "i:__iadd__"), inplace=True, ref="x + y"),
    B("sub", alpha=True, aliases=("subtract",), grad=("grad", "-grad if alpha == 1.0 else grad * -alpha"),
      dunders=("__sub__", "r:__rsub__", "i:__isub__"), inplace=True, ref="x - y"),
    B("mul", "arith_bool", aliases=("multiply",), grad=("grad * other", "grad * input"), dunders=("__mul__", "r:__rmul__", "i:__imul__"),
      inplace=True, ref="x * y"),
    B("div", "true_divide", grad=("grad / other", "-grad * result / other"), public=False, ref="x / y",
      domain=(0.5, 2.0)),
    B("pow", grad=("_d_pow_input(grad, input, other)", "_d_pow_exponent(grad, input, other, result)"),
      grad_fn="PowBackward1", public=False, ref="np.power(x, y)", domain=(0.5, 2.0)),
    B("maximum", "arith_bool", grad=("grad * _max_weight(input, other)", "grad * (1.0 - _max_weight(input, other))"),
      ref="np.maximum(x, y)"),
    B("minimum", "arith_bool", grad=("grad * _max_weight(other, input)", "grad * (1.0 - _max_weight(other, input))"),
      ref="np.minimum(x, y)"),
    B("remainder", grad=("grad", "-grad * _binary('floor_divide', input, other)"),
      dunders=("__mod__", "r:__rmod__"), inplace=True, ref="np.mod(x, y)", domain=(0.5, 3.0)),
    B("floor_divide", dunders=("__floordiv__", "r:__rfloordiv__"), inplace=True, ref="np.floor_divide(x, y)",
      domain=(0.5, 3.0)),
    B("atan2", "floating", aliases=("arctan2",), grad=("grad * other / (input * input + other * other)",
                                 "-grad * input / (input * input + other * other)"), inplace=True,
      ref="np.arctan2(x, y)"),
    B("eq", "compare", dunders=("__eq__",), inplace=True, ref="x == y"),
    B("ne", "compare", aliases=("not_equal",), dunders=("__ne__",), inplace=True, ref="x != y"),
    B("lt", "compare", aliases=("less",), dunders=("__lt__",), inplace=True, ref="x < y"),
    B("le", "compare", aliases=("less_equal",), dunders=("__le__",), inplace=True, ref="x <= y"),
    B("gt", "compare", aliases=("greater",), dunders=("__gt__",), inplace=True, ref="x > y"),
    B("ge", "compare", aliases=("greater_equal",), dunders=("__ge__",), inplace=True, ref="x >= y"),
    B("logical_and", "logical", inplace=True, ref="np.logical_and(x, y)"),
    B("logical_or", "logical", inplace=True, ref="np.logical_or(x, y)"),
    B("logical_xor", "logical", inplace=True, ref="np.logical_xor(x, y)"),
    B("bitwise_and", "bitwise", dunders=("__and__",), inplace=True),
    B("bitwise_or", "bitwise", dunders=("__or__",), inplace=True),
    B("bitwise_xor", "bitwise", dunders=("__xor__",), inplace=True),
] + [
    # fused activation backwards, (grad, saved) -> grad_in: the `fused=` kernels of the unary rows
    B(f"{name}_backward", "floating", public=False)
    for name in ("relu", "sigmoid", "tanh", "gelu", "gelu_tanh", "silu", "softplus", "leaky_relu", "elu", "mish",
                 "hardswish")
]

# ---------------------------------------------------------------------------------------------
# Ops written by hand in their family module (formula beside the forward, or composite).
E, S, R, NORM, I = ("tinytorch._ops.elementwise", "tinytorch._ops.shape", "tinytorch._ops.reduce",
                    "tinytorch._ops.norm", "tinytorch._ops.index")
LA, CONV, DROP = "tinytorch._ops.linalg", "tinytorch._ops.conv", "tinytorch._ops.dropout"
C, NUM, RND = "tinytorch._composites.contractions", "tinytorch._composites.numerics", "tinytorch._tensor.random"
O = Op
# keywords PyTorch takes that the implementations lack, accepted by their forms (an Op row's keywords=)
CUDNN_ENABLE = Keyword(True, "cudnn_enable (bool): ignored (PyTorch's switch for cuDNN's kernel). Default: ``True``")
SPARSE_GRAD = Keyword(False, "sparse_grad (bool, optional): if ``True``, gradient w.r.t. :attr:`input` will be a "
                      "sparse tensor. Default: ``False``", unsupported="sparse gradients need sparse tensors, which "
                      "tinytorch does not have")
OPS = [
    # elementwise, hand-written because of their argument handling
    O("clamp", E, aliases=("clip",), inplace="clamp_", inplace_function=True),
    O("clamp_min", E, inplace="clamp_min_", inplace_function=True),
    O("clamp_max", E, inplace="clamp_max_", inplace_function=True),
    O("pow", E, inplace="pow_", dunders=("__pow__", "r:__rpow__", "i:__ipow__"), autocast="fp32"),
    O("div", E, aliases=("divide", "true_divide"), inplace="div_", dunders=("__truediv__", "r:__rtruediv__", "i:__itruediv__")),
    O("rsub", E, method=False),
    O("where", E, method_impl="_where_method"),
    O("copy_", E, function=False),
    O("fill_", E, function=False, inplace_function=True),
    O("zero_", E, function=False, inplace_function=True),
    # shape (views: formula in _ops/shape.pyx)
    O("view", S, function=False), O("view_as", S, function=False), O("reshape", S), O("reshape_as", S, function=False),
    O("transpose", S, aliases=("swapaxes", "swapdims"), inplace="view", keywords={"swapaxes": {"axis0": "dim0", "axis1": "dim1"}}),
    O("t", S, inplace="view", ref="x.T"), O("permute", S), O("movedim", S, aliases=("moveaxis",)),
    O("expand", S, function=False), O("expand_as", S, function=False), O("broadcast_to", S), O("squeeze", S, inplace="view"),
    O("unsqueeze", S, inplace="view"), O("flatten", S, ref="x.reshape(-1)"), O("unflatten", S), O("narrow", S), O("select", S), O("unbind", S),
    O("split", S, keywords={"Tensor.split": {"split_size": "split_size_or_sections"}}),
    O("chunk", S), O("unfold", S, function=False), O("diagonal", S), O("as_strided", S, inplace="view", inplace_function=True),
    O("contiguous", S, function=False), O("clone", S, ref="x.copy()"),
    O("view_as_real", S, method=False), O("view_as_complex", S, method=False),
    # reductions and scans (fused kernels, formulas in _ops/reduce.pyx)
    O("sum", R, ref="np.sum(x)"), O("mean", R, ref="np.mean(x)"), O("prod", R, ref="np.prod(x)", domain=(0.7, 1.3)), O("amax", R, ref="np.max(x)"), O("amin", R, ref="np.min(x)"), O("max", R, ref="np.max(x)"), O("min", R, ref="np.min(x)"),
    O("argmax", R), O("argmin", R), O("all", R), O("any", R), O("var", R, ref="np.var(x, ddof=1)"), O("std", R, ref="np.std(x, ddof=1)"),
    O("logsumexp", R, autocast="fp32"), O("norm", R, autocast="fp32", ref="np.sqrt(np.sum(x * x))"), O("cumsum", R, autocast="fp32", inplace="copy"),
    O("cumprod", R, autocast="fp32", inplace="copy"),
    # softmax and normalizations (fused kernels, formulas in _ops/norm.pyx)
    O("softmax", NORM, autocast="fp32"), O("log_softmax", NORM, autocast="fp32"),
    O("layer_norm", NORM, method=False, autocast="fp32", keywords={"layer_norm": {"cudnn_enable": CUDNN_ENABLE}}),
    O("rms_norm", NORM, method=False),
    # indexing
    O("__getitem__", I, function=False, method_impl="getitem"), O("__setitem__", I, function=False, method_impl="setitem"),
    O("index_select", I), O("gather", I, keywords={"gather": {"sparse_grad": SPARSE_GRAD}}), O("scatter", I, inplace="scatter_"),
    O("scatter_add", I, inplace="scatter_add_"), O("masked_fill", I, inplace="masked_fill_"), O("masked_select", I),
    O("nonzero", I), O("index_put", I, inplace="index_put_", inplace_function=True), O("flip", S), O("roll", I),
    O("repeat", I, function=False), O("tril", I, inplace="copy", ref="np.tril(x)"), O("triu", I, inplace="copy", ref="np.triu(x)"), O("sort", I), O("argsort", I), O("topk", I),
    O("cat", S, method=False, aliases=("concat", "concatenate")), O("stack", I, method=False),
    O("hstack", I, method=False), O("vstack", I, method=False, aliases=("row_stack",)),
    # matrix products (formulas in _ops/linalg.pyx), convolutions (_ops/conv.pyx), dropout (tinytorch.embedding,
    # weight first as torch's top level, is tinytorch/_toplevel/nn_functional.py's)
    O("matmul", LA, dunders=("__matmul__", "r:__rmatmul__"), autocast="lower"), O("mm", LA, autocast="lower"),
    O("bmm", LA, autocast="lower"),
    O("conv1d", CONV, method=False, autocast="lower"), O("conv2d", CONV, method=False, autocast="lower"),
    O("dropout", DROP, method=False, keywords={"dropout": {"train": "training"}}),
    # random (in-place samplers)
    O("uniform_", RND, function=False), O("normal_", RND, function=False), O("bernoulli_", RND, function=False),
    O("bernoulli", RND, function=False, method_impl="_bernoulli_method"),
    O("multinomial", "tinytorch._composites.sampling", grad="none"),
    # composites: autograd records their parts
    O("dot", C, grad="composite"), O("vdot", C, grad="composite", method_impl="dot"),
    O("inner", C, grad="composite"), O("outer", C, grad="composite", aliases=("ger",)),
    O("kron", C, grad="composite"),
    O("einsum", C, grad="composite", method=False, autocast="lower"),
    O("tensordot", C, grad="composite", method=False, autocast="lower"),
    O("cdist", NUM, grad="composite", method=False, autocast="fp32"),
    O("logaddexp", NUM, grad="composite", ref="np.logaddexp(x, y)", domain=(-30.0, 30.0)),
] + [O(n, NUM, grad="composite", method=False) for n in (
    "meshgrid", "cartesian_prod", "block_diag", "trapezoid", "trapz", "bucketize", "searchsorted",
    "combinations", "cumulative_trapezoid")] + [O(n, NUM, grad="composite") for n in ("cross", "cov", "corrcoef")] + [
    # top-level linear algebra (tinytorch/linalg/_toplevel.py over tinytorch.linalg; formulas in _ops/decomposition.pyx)
    O(n, "tinytorch.linalg._toplevel", grad="composite") for n in (
        "inverse", "det", "logdet", "slogdet", "cholesky", "qr", "svd", "pinverse", "matrix_power")]

# ---------------------------------------------------------------------------------------------
# PyTorch names real programs use, composed from existing ops (module per group below)
PW, IX = "tinytorch._composites.pointwise", "tinytorch._composites.indexing"
RS, ST = "tinytorch._composites.reshaping", "tinytorch._composites.statistics"
OPS += [
    O("unique", NUM, grad="composite"), O("diff", NUM, grad="composite"), O("histc", NUM, grad="composite"),
    O("bincount", NUM, grad="composite"),
    # elementwise composites (tinytorch/_composites/pointwise.py)
    # round(decimals=) over the round kernel (its row above: the kernel's own function is _ops.elementwise.round)
    O("round", PW, grad="composite", inplace="round_", inplace_function=True),
    O("lerp", PW, grad="composite", inplace="copy"),
    O("addcmul", PW, grad="composite", inplace="copy"), O("addcdiv", PW, grad="composite", inplace="copy"),
    O("hypot", PW, grad="composite", inplace="copy", ref="np.hypot(x, y)"),
    O("sinc", PW, grad="composite", inplace="copy", inplace_function=True, ref="np.sinc(x)"),
    O("deg2rad", PW, grad="composite", inplace="copy", inplace_function=True, ref="np.deg2rad(x)"),
    O("rad2deg", PW, grad="composite", inplace="copy", inplace_function=True, ref="np.rad2deg(x)"),
    O("frac", PW, grad="composite", inplace="copy", inplace_function=True, ref="x - np.trunc(x)"),
    O("fmod", PW, grad="composite", inplace="copy", ref="np.fmod(x, y)", domain=(0.5, 3.0)),
    O("copysign", PW, grad="composite", inplace="copy"),
    O("heaviside", PW, grad="none", inplace="copy", ref="np.heaviside(x, y)"),
    O("xlogy", PW, grad="composite", inplace="copy", inplace_function=True, ref="x * np.log(y)", domain=(0.1, 3.0)),
    O("logaddexp2", PW, grad="composite", ref="np.logaddexp2(x, y)", domain=(-30.0, 30.0)),
    O("float_power", PW, grad="composite", inplace="copy"),
    O("nan_to_num", PW, grad="composite", inplace="copy", inplace_function=True, ref="np.nan_to_num(x)"),
    O("signbit", PW, grad="none"), O("isposinf", PW, grad="none"), O("isneginf", PW, grad="none"),
    O("isclose", PW, grad="none"), O("allclose", PW, grad="none"), O("equal", PW, grad="none"),
    O("isin", PW, grad="none", method=False),
    # indexing, scans, matrix products (tinytorch/_composites/indexing.py)
    O("index_add", IX, grad="composite", inplace="index_add_"),
    O("scatter_reduce", IX, grad="composite", inplace="scatter_reduce_"),
    O("take_along_dim", IX, grad="composite"), O("repeat_interleave", IX, grad="composite"),
    O("diag", IX, grad="composite"), O("trace", IX, grad="composite", ref="np.trace(x)"),
    O("median", ST, grad="composite"), O("cummax", IX, grad="composite"), O("cummin", IX, grad="composite"),
    O("logcumsumexp", IX, grad="composite"), O("count_nonzero", IX, grad="none"),
    O("atleast_1d", IX, grad="composite", method=False), O("atleast_2d", IX, grad="composite", method=False, ref="np.atleast_2d(x)"),
    O("atleast_3d", IX, grad="composite", method=False), O("broadcast_tensors", IX, grad="composite", method=False),
    O("vander", IX, grad="composite", method=False),
    # matrix products (tinytorch/_composites/contractions.py)
    O("addmm", C, grad="composite", autocast="lower", inplace="copy"),
    O("baddbmm", C, grad="composite", autocast="lower", inplace="copy"),
    O("addbmm", C, grad="composite", inplace="copy"), O("addmv", C, grad="composite", inplace="copy", inplace_function=True),
    O("addr", C, grad="composite", inplace="copy"), O("mv", C, grad="composite"),
    O("chain_matmul", C, grad="composite", method=False),
    O("random_", IX, grad="none", function=False),
    # shapes and index helpers (tinytorch/_composites/reshaping.py), statistics (tinytorch/_composites/statistics.py)
    O("tile", RS, grad="composite"), O("ravel", RS, grad="composite", ref="np.ravel(x)"), O("fliplr", RS, grad="composite", ref="np.fliplr(x)"),
    O("flipud", RS, grad="composite", ref="np.flipud(x)"), O("rot90", RS, grad="composite", ref="np.rot90(x)"),
    O("column_stack", RS, grad="composite", method=False), O("dstack", RS, grad="composite", method=False),
    O("tensor_split", RS, grad="composite"), O("hsplit", RS, grad="composite"), O("vsplit", RS, grad="composite"),
    O("dsplit", RS, grad="composite"), O("diag_embed", RS, grad="composite"), O("diagflat", RS, grad="composite", ref="np.diagflat(x)"),
    O("take", RS, grad="composite"), O("argwhere", RS, grad="none"), O("positive", RS, grad="composite", ref="x"),
    O("tril_indices", RS, grad="none", method=False), O("triu_indices", RS, grad="none", method=False),
    O("unravel_index", RS, grad="none", method=False),
    O("nansum", ST, grad="composite", ref="np.nansum(x)"), O("nanmean", ST, grad="composite", ref="np.nanmean(x)"),
    O("std_mean", ST, grad="composite", method=False), O("var_mean", ST, grad="composite", method=False),
    O("aminmax", ST, grad="composite"), O("kthvalue", ST, grad="composite"), O("quantile", ST, grad="composite"),
    O("nanquantile", ST, grad="composite"), O("msort", ST, grad="composite", ref="np.sort(x, axis=0)"), O("dist", ST, grad="composite", ref="np.sqrt(np.sum((x - y) ** 2))"),
    O("logit", PW, grad="composite", inplace="copy", inplace_function=True, ref="np.log(x / (1 - x))",
      domain=(0.05, 0.95)),
    O("fmax", PW, grad="composite", ref="np.fmax(x, y)"), O("fmin", PW, grad="composite", ref="np.fmin(x, y)"),
]

# ---------------------------------------------------------------------------------------------
# tinytorch.nn.functional functions with an autocast policy (matmul-like ones in lower precision)
FUNCTIONAL = [Functional(n, "lower") for n in (
    "linear", "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "prelu", "scaled_dot_product_attention")] + [
    Functional(n, "fp32") for n in (
        "softmax", "log_softmax", "softmin", "layer_norm", "group_norm", "rms_norm", "instance_norm", "cross_entropy",
        "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div", "binary_cross_entropy_with_logits",
        "cosine_similarity", "cosine_embedding_loss", "margin_ranking_loss", "hinge_embedding_loss",
        "soft_margin_loss", "triplet_margin_loss", "poisson_nll_loss", "gaussian_nll_loss",
        "multilabel_soft_margin_loss", "multi_margin_loss", "softplus", "normalize", "pairwise_distance")]

# linalg.lu's unpacking at the top level (tinytorch/linalg/_lu.py), as torch.lu_unpack
OPS += [O("lu_unpack", "tinytorch.linalg._lu", grad="composite", method=False)]

# 3-D convolutions composed from the 2-D kernels (tinytorch/_composites/conv3d.py)
OPS += [O(n, "tinytorch._composites.conv3d", grad="composite", method=False, autocast="lower")
        for n in ("conv3d", "conv_transpose3d")]
FUNCTIONAL += [Functional(n, "lower") for n in ("conv3d", "conv_transpose3d")]
OPS += [O("embedding_bag", "tinytorch._composites.embedding_bag", grad="composite", method=False)]

# integer gcd/lcm and ldexp (tinytorch/_composites/pointwise.py), nanmedian (_composites/indexing.py),
# unique_consecutive (_composites/numerics.py), matrix_exp (tinytorch/linalg/_composites.py, as torch.matrix_exp)
OPS += [
    O("gcd", PW, grad="none", inplace="copy", inplace_function=True),
    O("lcm", PW, grad="none", inplace="copy", inplace_function=True),
    O("ldexp", PW, grad="composite", inplace="copy", inplace_function=True),
    O("nanmedian", ST, grad="composite"), O("unique_consecutive", NUM, grad="composite"),
    O("matrix_exp", "tinytorch.linalg._toplevel", grad="composite"),
]

# ---------------------------------------------------------------------------------------------
# PyTorch's other forms of names, each pointing at its one implementation
T, SC = "tinytorch._tensor.tensor", "tinytorch._composites.scatter"
MX, SMP = "tinytorch._composites.matrix", "tinytorch._composites.sampling"
# function forms of Tensor queries and views the class defines (torch.detach(x) is x.detach())
OPS += [O(n, T, grad="none", method=False, impl=f"Tensor.{n}", of_method=True) for n in (
    "detach", "detach_", "is_signed", "is_floating_point", "is_complex", "is_nonzero", "is_same_size",
    "is_distributed", "get_device", "adjoint")]
OPS += [
    # writes at positions (tinytorch/_composites/scatter.py)
    O("index_fill", SC, grad="composite", inplace="copy"), O("index_copy", SC, grad="composite", inplace="copy"),
    O("put", SC, grad="composite", inplace="copy"), O("masked_scatter_", SC, grad="composite", function=False),
    O("fill_diagonal_", SC, grad="composite", function=False),
    # norms and integrals (_composites/numerics.py), shapes (_composites/reshaping.py)
    O("renorm", NUM, grad="composite", inplace="copy"),
    O("sum_to_size", RS, grad="composite", function=False),
    O("split_with_sizes", RS, grad="composite"), O("unsafe_split", RS, grad="composite"),
    O("unsafe_split_with_sizes", RS, grad="composite"), O("unsafe_chunk", RS, grad="composite"),
    # elementwise (_composites/pointwise.py): torch.fill, and the activations torch has at the top level
    O("fill", PW, grad="composite", method=False),
    O("prelu", PW, grad="composite", autocast="lower"), O("hardshrink", PW, grad="composite"),
    # in-place random fills (_composites/sampling.py)
    *[O(n, SMP, grad="none", function=False) for n in ("exponential_", "log_normal_", "cauchy_", "geometric_")],
    # top-level matrix functions outside torch.linalg (_composites/matrix.py)
    O("frobenius_norm", MX, grad="composite", method=False), O("nuclear_norm", MX, grad="composite", method=False),
    O("cholesky_solve", MX, grad="composite"), O("cholesky_inverse", MX, grad="composite"),
]

# complex numbers (tinytorch/_composites/complex.py; Tensor.real/.imag are properties of the class)
CX = "tinytorch._composites.complex"
OPS += [O(n, CX, grad="composite", method=False) for n in ("complex", "polar", "real", "imag")]
OPS += [O(n, CX, grad="composite") for n in ("conj", "conj_physical", "resolve_conj", "resolve_neg", "angle", "sgn")]
OPS += [O(n, CX, grad="none") for n in ("is_conj", "is_neg", "isreal")]

SCHEMA = Schema(unary=UNARY, binary=BINARY, ops=OPS, functional=FUNCTIONAL)
SCHEMA.check()
