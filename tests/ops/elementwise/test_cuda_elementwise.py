"""CUDA elementwise kernels (unary, binary, where, clamp with tensor bounds) against the CPU kernels:
every UnaryOp/BinaryOp, every dtype they support, contiguous and non-contiguous GPU inputs
(transposed, sliced, expanded, misaligned), broadcasting, 0-dim CPU scalars mixed with GPU tensors,
special values (NaN, +-inf, +-0, ties for round) and error behaviour.

Run on a GPU machine:  python -m pytest -q tests/ops/elementwise/test_cuda_elementwise.py"""
import numpy as np
import pytest

import tinytorch as tt
from tinytorch._core.tensor_base import _wrap
from support.cuda_helpers import check, layout_view
from support.numeric import FLOAT_DTYPES, TOL

pytestmark = pytest.mark.cuda

INT_DTYPES = ["int32", "int64", "uint8"]
LAYOUTS = ["contiguous", "transposed", "sliced", "expanded", "misaligned"]
SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, 1.5, 2.5, -2.5, 1.0]


def pair(shape, dtype="float32", layout="contiguous", lo=-2.0, hi=2.0, seed=0, specials=None):
    """The same values as a CPU tensor and a GPU tensor, the layout built on each device."""
    rng = np.random.default_rng(seed)
    base_shape, view = layout_view(shape, layout)
    if dtype in INT_DTYPES:
        data = rng.integers(int(lo), int(hi) + 1, base_shape)
    elif dtype == "bool":
        data = rng.integers(0, 2, base_shape).astype(bool)
    else:
        data = rng.uniform(lo, hi, base_shape)
        if specials:
            flat = data.reshape(-1)
            k = min(len(specials), flat.size)
            flat[:k] = specials[:k]
    base = tt.tensor(data, dtype=getattr(tt, dtype))
    return view(base), view(base.cuda())


def unary(name, x, a=0.0, b=0.0):
    return _wrap(getattr(tt._C, name)(x._impl, a, b))


def binary(name, x, y, s0=1.0, s1=0.0):
    ox = x._impl if isinstance(x, tt.Tensor) else x
    oy = y._impl if isinstance(y, tt.Tensor) else y
    return _wrap(getattr(tt._C, name)(ox, oy, s0, s1))


# ---------------------------------------------------------------- unary

# _C name -> (a, b, input range): every UnaryOp.
UNARY = {
    "neg": (0, 0, (-2, 2)), "abs": (0, 0, (-2, 2)), "sign": (0, 0, (-2, 2)), "exp": (0, 0, (-5, 5)),
    "log": (0, 0, (0.05, 3)), "log1p": (0, 0, (-0.9, 2)), "expm1": (0, 0, (-2, 2)), "sqrt": (0, 0, (0, 3)),
    "rsqrt": (0, 0, (0.1, 3)), "sin": (0, 0, (-3, 3)), "cos": (0, 0, (-3, 3)), "tanh": (0, 0, (-3, 3)),
    "sigmoid": (0, 0, (-6, 6)), "relu": (0, 0, (-2, 2)), "gelu": (0, 0, (-3, 3)), "gelu_tanh": (0, 0, (-3, 3)),
    "silu": (0, 0, (-3, 3)), "softplus": (1.0, 20.0, (-3, 3)), "leaky_relu": (0.1, 0, (-2, 2)),
    "elu": (1.0, 0, (-2, 2)), "mish": (0, 0, (-3, 3)), "hardswish": (0, 0, (-4, 4)), "erf": (0, 0, (-2, 2)),
    "reciprocal": (0, 0, (0.3, 3)), "square": (0, 0, (-2, 2)), "logical_not": (0, 0, (-1, 1)),
    "floor": (0, 0, (-3, 3)), "ceil": (0, 0, (-3, 3)), "round": (0, 0, (-3, 3)), "trunc": (0, 0, (-3, 3)),
    "log2": (0, 0, (0.05, 3)), "log10": (0, 0, (0.05, 3)), "exp2": (0, 0, (-4, 4)), "tan": (0, 0, (-1.2, 1.2)),
    "asin": (0, 0, (-0.99, 0.99)), "acos": (0, 0, (-0.99, 0.99)), "atan": (0, 0, (-3, 3)),
    "sinh": (0, 0, (-3, 3)), "cosh": (0, 0, (-3, 3)), "clamp_min": (0.1, 0, (-2, 2)),
    "clamp_max": (0.3, 0, (-2, 2)), "clamp": (-0.5, 0.7, (-2, 2)), "pow_scalar": (3.0, 0, (-2, 2)),
    "rpow_scalar": (2.0, 0, (-3, 3)), "isnan": (0, 0, (-1, 1)), "isinf": (0, 0, (-1, 1)),
    "isfinite": (0, 0, (-1, 1)),
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_float(name, dtype, layout):
    a, b, (lo, hi) = UNARY[name]
    xc, xg = pair((37, 29), dtype, layout, lo, hi, seed=len(name), specials=SPECIALS)
    check(unary(name, xg, a, b), unary(name, xc, a, b), f"{name} {dtype} {layout}")


@pytest.mark.parametrize("exponent", [2.0, 0.5, 3.0, -1.0, 1.7])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_pow_scalar_special_exponents(exponent, dtype):
    xc, xg = pair((50,), dtype, "contiguous", 0.0, 3.0, seed=1, specials=SPECIALS)
    check(unary("pow_scalar", xg, exponent), unary("pow_scalar", xc, exponent), f"x ** {exponent}")


# ops that keep an integer dtype (the op layer computes the others in float32)
INT_UNARY = {
    "neg": (0, 0), "abs": (0, 0), "sign": (0, 0), "relu": (0, 0), "square": (0, 0), "floor": (0, 0),
    "ceil": (0, 0), "round": (0, 0), "trunc": (0, 0), "clamp_min": (1, 0), "clamp_max": (2, 0),
    "clamp": (-1, 3), "pow_scalar": (3, 0), "isnan": (0, 0), "isinf": (0, 0), "isfinite": (0, 0),
    "logical_not": (0, 0), "exp": (0, 0), "sqrt": (0, 0), "sigmoid": (0, 0),
}


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "misaligned"])
@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("name", sorted(INT_UNARY))
def test_unary_integer(name, dtype, layout):
    a, b = INT_UNARY[name]
    lo = 0 if dtype == "uint8" else -5
    xc, xg = pair((9, 33), dtype, layout, lo, 5, seed=3)
    check(unary(name, xg, a, b), unary(name, xc, a, b), f"{name} {dtype} {layout}")


@pytest.mark.parametrize("name", ["logical_not", "isnan", "isinf", "isfinite"])
def test_unary_bool(name):
    xc, xg = pair((7, 40), "bool", "transposed", seed=4)
    check(unary(name, xg), unary(name, xc), name)


def test_unary_errors_match_cpu():
    xc, xg = pair((3, 4), "bool")
    for x in (xc, xg):
        with pytest.raises(TypeError):
            unary("neg", x)


def test_unary_large_and_in_place():
    xc, xg = pair(((1 << 20) + 3,), "float32", "contiguous", -3, 3, seed=5)
    check(tt.exp(xg), tt.exp(xc), "exp 2^20+3")
    hc, hg = pair(((1 << 20) + 5,), "bfloat16", "contiguous", -3, 3, seed=6)
    check(tt.nn.functional.gelu(hg), tt.nn.functional.gelu(hc), "gelu bf16")
    # in place through a strided view writes through to the base
    bc, bg = pair((64, 64), "float32", "contiguous", seed=7)
    vc, vg = bc.transpose(0, 1), bg.transpose(0, 1)
    vc.relu_()
    vg.relu_()
    check(bg, bc, "relu_ through a transposed view")


# ---------------------------------------------------------------- binary

# _C name -> (s0, s1, range of a, range of b): every BinaryOp on floats.
BINARY_FLOAT = {
    "add": (1.0, 0, (-2, 2), (-2, 2)), "sub": (1.0, 0, (-2, 2), (-2, 2)), "mul": (1.0, 0, (-2, 2), (-2, 2)),
    "div": (1.0, 0, (-2, 2), (0.2, 2)), "pow": (1.0, 0, (0.1, 2), (-2, 2)),
    "maximum": (1.0, 0, (-2, 2), (-2, 2)), "minimum": (1.0, 0, (-2, 2), (-2, 2)),
    "remainder": (1.0, 0, (-5, 5), (-2, 2)), "floor_divide": (1.0, 0, (-5, 5), (-2, 2)),
    "atan2": (1.0, 0, (-2, 2), (-2, 2)),
    "eq": (1.0, 0, (-2, 2), (-2, 2)), "ne": (1.0, 0, (-2, 2), (-2, 2)), "lt": (1.0, 0, (-2, 2), (-2, 2)),
    "le": (1.0, 0, (-2, 2), (-2, 2)), "gt": (1.0, 0, (-2, 2), (-2, 2)), "ge": (1.0, 0, (-2, 2), (-2, 2)),
    "logical_and": (1.0, 0, (-1, 1), (-1, 1)), "logical_or": (1.0, 0, (-1, 1), (-1, 1)),
    "logical_xor": (1.0, 0, (-1, 1), (-1, 1)),
    "relu_backward": (1.0, 0, (-2, 2), (-1, 1)), "sigmoid_backward": (1.0, 0, (-2, 2), (0, 1)),
    "tanh_backward": (1.0, 0, (-2, 2), (-1, 1)), "gelu_backward": (1.0, 0, (-2, 2), (-3, 3)),
    "gelu_tanh_backward": (1.0, 0, (-2, 2), (-3, 3)), "silu_backward": (1.0, 0, (-2, 2), (-3, 3)),
    "softplus_backward": (2.0, 3.0, (-2, 2), (-3, 3)), "leaky_relu_backward": (0.1, 0, (-2, 2), (-2, 2)),
    "elu_backward": (1.5, 0, (-2, 2), (-2, 2)), "mish_backward": (1.0, 0, (-2, 2), (-3, 3)),
    "hardswish_backward": (1.0, 0, (-2, 2), (-4, 4)),
}
SHAPES = [((4, 5), (4, 5)), ((4, 5), (5,)), ((4, 1), (1, 5)), ((2, 3, 4), (3, 1)), ((), (3, 2)), ((3, 2), ()),
          ((33, 65), (33, 65))]


def _quantize(t):  # values on a 0.5 grid, so comparisons see equal elements
    return (t * 2).round() / 2


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name", sorted(BINARY_FLOAT))
def test_binary_float_broadcast(name, dtype, shapes):
    s0, s1, ra, rb = BINARY_FLOAT[name]
    ac, ag = pair(shapes[0], dtype, "contiguous", *ra, seed=1, specials=SPECIALS[:3])
    bc, bg = pair(shapes[1], dtype, "contiguous", *rb, seed=2)
    if name in ("eq", "ne", "lt", "le", "gt", "ge", "maximum", "minimum"):
        ac, ag, bc, bg = _quantize(ac), _quantize(ag), _quantize(bc), _quantize(bg)
    check(binary(name, ag, bg, s0, s1), binary(name, ac, bc, s0, s1), f"{name} {dtype} {shapes}")


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name", ["add", "mul", "div", "pow", "maximum", "lt", "atan2", "gelu_backward",
                                  "silu_backward", "remainder"])
def test_binary_float_layouts(name, dtype, layout):
    s0, s1, ra, rb = BINARY_FLOAT[name]
    ac, ag = pair((24, 40), dtype, layout, *ra, seed=3, specials=SPECIALS)
    bc, bg = pair((24, 40), dtype, "transposed" if layout == "contiguous" else "contiguous", *rb, seed=4)
    check(binary(name, ag, bg, s0, s1), binary(name, ac, bc, s0, s1), f"{name} {dtype} {layout}")


@pytest.mark.parametrize("alpha", [1.0, -0.5, 2.0])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_add_sub_alpha(alpha, dtype):
    ac, ag = pair((100,), dtype, seed=5)
    bc, bg = pair((100,), dtype, seed=6)
    for name in ("add", "sub"):
        check(binary(name, ag, bg, alpha), binary(name, ac, bc, alpha), f"{name} alpha={alpha}")


INT_BINARY = ["add", "sub", "mul", "maximum", "minimum", "remainder", "floor_divide", "pow", "eq", "ne", "lt",
              "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
              "bitwise_xor", "div", "atan2"]


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "expanded"])
@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("name", INT_BINARY)
def test_binary_integer(name, dtype, layout):
    lo = 0 if dtype == "uint8" else -7
    ac, ag = pair((6, 35), dtype, layout, lo, 7, seed=7)
    bc, bg = pair((6, 35), dtype, "contiguous", 0 if name == "pow" else lo, 3 if name == "pow" else 7, seed=8)
    if name in ("remainder", "floor_divide"):   # integer division by zero raises (test below)
        bc, bg = bc.masked_fill(bc == 0, 1), bg.masked_fill(bg == 0, 1)
    check(binary(name, ag, bg), binary(name, ac, bc), f"{name} {dtype} {layout}")


@pytest.mark.parametrize("name", ["remainder", "floor_divide"])
def test_integer_division_by_zero_does_not_sync(name):
    # as PyTorch: the CPU raises ZeroDivisionError, CUDA does not check (that would sync every op)
    a, b = tt.tensor([4, 5], device="cuda"), tt.tensor([1, 0], device="cuda")
    assert getattr(tt, name)(a, b).cpu().tolist()[0] == (0 if name == "remainder" else 4)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        getattr(tt, name)(a.cpu(), b.cpu())
    assert (a + 1).cpu().tolist() == [5, 6]   # the context still works


BOOL_BINARY = ["add", "mul", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge", "logical_and",
               "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor"]


@pytest.mark.parametrize("name", BOOL_BINARY)
def test_binary_bool(name):
    ac, ag = pair((5, 48), "bool", "transposed", seed=9)
    bc, bg = pair((5, 48), "bool", "contiguous", seed=10)
    check(binary(name, ag, bg), binary(name, ac, bc), name)


@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_xor"])
def test_binary_unsupported_dtype_raises(name):
    for dev in ("cpu", "cuda"):
        x = tt.ones(4).to(dev)
        with pytest.raises(TypeError):
            binary(name, x, x)
    for dev in ("cpu", "cuda"):
        x = tt.ones(4, dtype=tt.bool).to(dev)
        with pytest.raises(RuntimeError, match="Subtraction"):    # PyTorch's type and message
            binary("sub", x, x)


def test_binary_large_and_misaligned():
    n = (1 << 22) + 7
    ac, ag = pair((n,), "float32", seed=11)
    bc, bg = pair((n,), "float32", seed=12)
    check(ag + bg, ac + bc, "add 2^22+7")
    check(ag.narrow(0, 1, n - 1) * bg.narrow(0, 0, n - 1), ac.narrow(0, 1, n - 1) * bc.narrow(0, 0, n - 1),
          "mul misaligned")
    hc, hg = pair((n,), "float16", seed=13)
    check(hg > 0.25, hc > 0.25, "gt half")


# ---------------------------------------------------------------- CPU scalars mixed with GPU tensors

@pytest.mark.parametrize("dtype", FLOAT_DTYPES + ["int32", "int64", "uint8"])
def test_python_scalars_with_gpu_tensors(dtype):
    lo = 0 if dtype == "uint8" else -3
    xc, xg = pair((7, 9), dtype, "transposed", lo, 3, seed=14)
    cases = [
        lambda x: x * 2, lambda x: x + 1, lambda x: 2 - x, lambda x: x - 1.5, lambda x: x / 3,
        lambda x: 3 / (x * 0 + 2), lambda x: x > 1, lambda x: 1 <= x, lambda x: x == 2,
        lambda x: tt.maximum(x, tt.tensor(1)), lambda x: x + tt.tensor(2.5, dtype=tt.float64),
        lambda x: tt.tensor(4) - x, lambda x: x % 2, lambda x: x // 2, lambda x: tt.add(x, 2, alpha=3),
        lambda x: tt.pow(x * 0 + 2, tt.tensor(3)),
    ]
    for i, f in enumerate(cases):
        yg, yc = f(xg), f(xc)
        check(yg, yc, f"case {i} {dtype}")


def test_scalar_operand_zero_dim_gpu_and_in_place():
    sg, sc = tt.tensor(1.5).cuda(), tt.tensor(1.5)
    check(sg + 2, sc + 2, "0-dim gpu + python")
    check(sg * tt.tensor(3.0), sc * tt.tensor(3.0), "0-dim gpu * 0-dim cpu")
    xc, xg = pair((5, 6), "float32", seed=15)
    xc.add_(2)
    xg.add_(2)
    xc.mul_(tt.tensor(-1.5))
    xg.mul_(tt.tensor(-1.5))
    check(xg, xc, "in-place with scalars")
    ic, ig = pair((5, 6), "int32", seed=16)
    check(ig + 1.5, ic + 1.5, "int tensor + float scalar promotes")
    bc, bg = pair((5, 6), "bool", seed=17)
    check(bg + True, bc + True, "bool + True")
    check(bg * 2, bc * 2, "bool * 2")


def test_non_scalar_cpu_operand_raises():
    xg = tt.ones(3).cuda()
    with pytest.raises(RuntimeError):
        xg + tt.ones(3)
    with pytest.raises(RuntimeError):
        tt.ones(3) * xg


# ---------------------------------------------------------------- where / clamp

@pytest.mark.parametrize("dtype", FLOAT_DTYPES + INT_DTYPES + ["bool"])
def test_where(dtype):
    cc, cg = pair((6, 1, 8), "bool", "contiguous", seed=18)
    ac, ag = pair((6, 5, 8), dtype, "transposed" if dtype != "bool" else "contiguous", 0, 5, seed=19)
    bc, bg = pair((5, 8), dtype, "sliced", 0, 5, seed=20)
    check(tt.where(cg, ag, bg), tt.where(cc, ac, bc), f"where {dtype}")
    check(tt.where(cg, ag, 0), tt.where(cc, ac, 0), f"where scalar {dtype}")


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + ["int32", "int64"])
def test_clamp_tensor_bounds(dtype):
    xc, xg = pair((8, 9), dtype, "transposed", -5, 5, seed=21, specials=SPECIALS[:3])
    lc, lg = pair((9,), dtype, "contiguous", -3, 0, seed=22)
    hc, hg = pair((8, 1), dtype, "contiguous", 0, 3, seed=23)
    check(tt.clamp(xg, lg, hg), tt.clamp(xc, lc, hc), "both")
    check(tt.clamp(xg, min=lg), tt.clamp(xc, min=lc), "min only")
    check(tt.clamp(xg, max=hg), tt.clamp(xc, max=hc), "max only")


# ---------------------------------------------------------------- autograd through the fused backwards

@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("fn", ["relu", "sigmoid", "tanh", "gelu", "silu", "mish", "hardswish", "softplus", "elu"])
def test_activation_grads(fn, dtype):
    rng = np.random.default_rng(24)
    data, wdata = rng.uniform(-3, 3, (16, 17)), rng.uniform(-1, 1, (16, 17))
    grads = []
    for dev in ("cpu", "cuda"):
        x = tt.tensor(data, dtype=getattr(tt, dtype)).to(dev).requires_grad_()
        y = getattr(tt.nn.functional, fn)(x)
        w = tt.tensor(wdata, dtype=getattr(tt, dtype)).to(dev)
        (y * w).sum().backward()
        grads.append(x.grad)
    assert grads[1].device.type == "cuda"
    check(grads[1], grads[0], f"{fn} grad", tol=(TOL[dtype][0] * 4, TOL[dtype][1] * 4))
