"""Gradients of every differentiable op: one table, three checks per row.

* ``test_gradcheck``: tinytorch.autograd.gradcheck (analytic vs central differences) in float64,
  on random inputs with contiguous, transposed, sliced and expanded (broadcast) layouts.
* ``test_low_precision_grad``: float32 / float16 / bfloat16 gradients (for a random upstream
  gradient) agree with the float64 gradient of the same (rounded) inputs within GRAD_TOL.
* ``test_double_backward``: Hessian-vector products by double backward vs finite differences.

Exact values at non-smooth points (ties, kinks, zeros), casts and setitem: test_autograd_exact.py.
matmul / linear / conv / pool / embedding / dropout / losses live on another branch.
"""
import zlib

import numpy as np
import pytest

import tinytorch as tt
from support.numeric import GRAD_TOL, assert_close, make, to_numpy
from tinytorch.autograd import gradcheck

S = tt._ops.shape
I = tt._ops.index


class In:
    """One differentiable input: random uniform in [lo, hi) with a memory layout
    ('contiguous', 'transposed', 'sliced', or 'expanded': a size-1 leaf broadcast to ``shape``
    inside the function), or fixed ``values``; ``distinct`` gives well-separated values exactly
    representable in bfloat16 (for sort/topk/max, whose gradients depend on the order)."""

    def __init__(self, shape=(3, 4), layout="contiguous", lo=-2.0, hi=2.0, values=None, distinct=False):
        self.shape, self.layout, self.lo, self.hi = tuple(shape), layout, lo, hi
        self.values, self.distinct = values, distinct


def R(*shape, layout="contiguous", lo=-2.0, hi=2.0):
    return In(shape, layout, lo, hi)


def T(*shape, lo=-2.0, hi=2.0):
    return In(shape, "transposed", lo, hi)


def SL(*shape, lo=-2.0, hi=2.0):
    return In(shape, "sliced", lo, hi)


def E(*shape, lo=-2.0, hi=2.0):
    return In(shape, "expanded", lo, hi)


def V(values):
    return In(np.shape(values), values=np.asarray(values, dtype=np.float64))


def D(*shape):
    return In(shape, distinct=True)


# ------------------------------------------------------------------ constants used by the rows
IDX = tt.tensor([2, 0, 2, 1])                      # repeated index: gradients accumulate
GATHER_IDX = tt.tensor([[0, 2, 1, 0], [2, 2, 0, 1], [1, 0, 0, 2]])
SCATTER_IDX = tt.tensor([[0, 1, 2, 0], [0, 0, 1, 0]])   # duplicate targets: scatter_add accumulates
PERM_IDX = tt.tensor([[0, 1, 2, 1], [2, 0, 1, 0]])     # for scatter: no duplicate targets per column
MASK = tt.tensor([[True, False, True, False], [False, False, True, True], [True, True, False, False]])
MASK_ROW = tt.tensor([True, False, False, True])   # broadcasts over (3, 4)
BOOL1 = tt.tensor([True, False, True])


def _inplace(method, *args, **kw):
    def fn(x, *rest):
        y = x * 1.0                                 # a non-leaf that requires grad
        getattr(y, method)(*args, *rest, **kw)
        return y
    return fn


def _setitem(key):
    def fn(x, v):
        y = x.clone()
        y[key] = v
        return y * 1.0
    return fn


def _index_put_(indices, accumulate=False):
    def fn(x, v):
        y = x.clone()
        y.index_put_(indices, v, accumulate=accumulate)
        return y
    return fn


def _copy_(x, src):
    y = x * 2.0
    y.copy_(src)
    return y + x                                  # x still gets a gradient through the second use


def _zero_(x):
    y = x * 2.0
    y.zero_()
    return y + x * x


def _masked_fill_(x):
    y = x * 2.0                                   # (x.exp() would save y: in-place then errors, as PyTorch)
    y.masked_fill_(MASK, -1.5)
    return y


# name -> (fn, [inputs], kwargs)
OPS = {
    # ---------------------------------------------------------------- unary elementwise
    "neg": (tt.neg, [T(3, 4)], {}),
    "abs": (tt.abs, [SL(3, 4)], {}),
    "sign": (tt.sign, [R(3, 4)], {}),
    "exp": (tt.exp, [T(3, 4)], {}),
    "exp2": (lambda x: x.exp2() if hasattr(x, "exp2") else tt._ops.elementwise.exp2(x), [R(3, 4)], {}),
    "log": (tt.log, [SL(3, 4, lo=0.2, hi=3)], {}),
    "log2": (tt.log2, [R(3, 4, lo=0.2, hi=3)], {}),
    "log10": (tt.log10, [T(3, 4, lo=0.2, hi=3)], {}),
    "log1p": (tt.log1p, [R(3, 4, lo=-0.5, hi=2)], {}),
    "expm1": (tt.expm1, [E(3, 4)], {}),
    "sqrt": (tt.sqrt, [T(3, 4, lo=0.2, hi=3)], {}),
    "rsqrt": (tt.rsqrt, [R(3, 4, lo=0.3, hi=3)], {}),
    "sin": (tt.sin, [SL(3, 4, lo=-3, hi=3)], {}),
    "cos": (tt.cos, [R(3, 4, lo=-3, hi=3)], {}),
    "tan": (tt.tan, [R(3, 4, lo=-1, hi=1)], {}),
    "asin": (tt.asin, [T(3, 4, lo=-0.8, hi=0.8)], {}),
    "acos": (tt.acos, [R(3, 4, lo=-0.8, hi=0.8)], {}),
    "atan": (tt.atan, [R(3, 4)], {}),
    "sinh": (tt.sinh, [R(3, 4)], {}),
    "cosh": (tt.cosh, [SL(3, 4)], {}),
    "tanh": (tt.tanh, [T(3, 4)], {}),
    "sigmoid": (tt.sigmoid, [R(3, 4, lo=-4, hi=4)], {}),
    "relu": (tt.relu, [T(3, 4)], {}),
    "gelu": (tt.nn.functional.gelu, [R(3, 4, lo=-3, hi=3)], {}),
    "gelu_tanh": (tt.nn.functional.gelu, [SL(3, 4, lo=-3, hi=3)], {"approximate": "tanh"}),
    "silu": (tt.nn.functional.silu, [T(3, 4, lo=-3, hi=3)], {}),
    "softplus": (tt.nn.functional.softplus, [R(3, 4, lo=-3, hi=3)], {}),
    "softplus_beta_threshold": (tt.nn.functional.softplus, [V([[-2.0, -0.3, 0.4, 1.2], [0.9, 1.6, 2.5, -1.0]])],
                                {"beta": 2.0, "threshold": 3.0}),
    "leaky_relu": (tt.nn.functional.leaky_relu, [R(3, 4)], {"negative_slope": 0.1}),
    "elu": (tt.nn.functional.elu, [SL(3, 4)], {"alpha": 0.7}),
    "mish": (tt.nn.functional.mish, [R(3, 4, lo=-3, hi=3)], {}),
    "hardswish": (tt.nn.functional.hardswish, [T(3, 4, lo=-4, hi=4)], {}),
    "erf": (tt.erf, [R(3, 4)], {}),
    "reciprocal": (tt.reciprocal, [R(3, 4, lo=0.4, hi=2)], {}),
    "square": (tt.square, [E(3, 4)], {}),
    "floor": (tt.floor, [R(3, 4, lo=-3, hi=3)], {}),
    "ceil": (tt.ceil, [R(3, 4, lo=-3, hi=3)], {}),
    "round": (tt.round, [R(3, 4, lo=-3, hi=3)], {}),
    "trunc": (tt.trunc, [R(3, 4, lo=-3, hi=3)], {}),
    "clamp_scalar": (tt.clamp, [T(3, 4)], {"min": -0.5, "max": 0.7}),
    "clamp_min": (tt.clamp, [R(3, 4)], {"min": 0.1}),
    "clamp_max": (tt.clamp, [SL(3, 4)], {"max": -0.2}),
    "clamp_tensor": (tt.clamp, [T(3, 4), R(4, lo=-1.5, hi=-0.2), R(3, 1, lo=0.2, hi=1.5)], {}),
    "clamp_tensor_min": (lambda x, lo: x.clamp(min=lo), [R(3, 4), R(3, 4)], {}),
    "pow_scalar_int": (lambda x: x ** 3, [SL(3, 4)], {}),
    "pow_scalar_frac": (lambda x: x ** 0.5, [R(3, 4, lo=0.3, hi=3)], {}),
    "pow_scalar_neg": (lambda x: x ** -1.5, [T(3, 4, lo=0.5, hi=3)], {}),
    "pow_scalar_zero": (lambda x: x ** 0, [R(3, 4)], {}),
    "pow_scalar_base": (lambda x: 2.5 ** x, [R(3, 4)], {}),
    "to_float64": (lambda x: x.double().sin(), [R(3, 4)], {}),
    # ---------------------------------------------------------------- binary, broadcasting
    "add": (tt.add, [T(3, 4), R(4)], {}),
    "add_alpha": (tt.add, [R(3, 4), R(3, 1)], {"alpha": -0.5}),
    "sub": (lambda a, b: a - b, [R(2, 3, 4), T(3, 4)], {}),
    "sub_alpha": (tt.sub, [R(1, 4), SL(3, 1)], {"alpha": 2.0}),
    "rsub_scalar": (lambda x: 1.5 - x, [R(3, 4)], {}),
    "mul": (tt.mul, [R(3, 1), R(1, 4)], {}),
    "mul_scalar": (lambda x: (x * 2 - 1) / 3 + 0.5, [E(3, 4)], {}),
    "div": (tt.div, [SL(3, 4), R(4, lo=0.5, hi=2)], {}),
    "rdiv_scalar": (lambda x: 2.0 / x, [R(3, 4, lo=0.5, hi=2)], {}),
    "pow_tensor": (tt.pow, [R(3, 4, lo=0.5, hi=2), T(3, 4, lo=-1.5, hi=1.5)], {}),
    "pow_tensor_broadcast": (tt.pow, [R(3, 1, lo=0.5, hi=2), R(4, lo=-1, hi=2)], {}),
    "maximum": (tt.maximum, [T(3, 4), R(4)], {}),
    "minimum": (tt.minimum, [R(3, 4), SL(3, 4)], {}),
    "remainder": (tt.remainder, [R(3, 4, lo=0.1, hi=3), R(4, lo=0.7, hi=1.3)], {}),
    "atan2": (tt.atan2, [T(3, 4), R(3, 4)], {}),
    "where": (lambda a, b: tt.where(MASK, a, b), [R(3, 4), R(4)], {}),
    "where_scalar": (lambda a: tt.where(MASK_ROW, a, 0.5), [T(3, 4)], {}),
    # ---------------------------------------------------------------- reductions
    "sum_all": (tt.sum, [T(3, 4)], {}),
    "sum_dim": (tt.sum, [R(2, 3, 4)], {"dim": 1}),
    "sum_dims_keepdim": (tt.sum, [SL(2, 3, 4)], {"dim": (0, -1), "keepdim": True}),
    "sum_neg_dim": (tt.sum, [T(3, 4)], {"dim": -1}),
    "mean_all": (tt.mean, [R(3, 4)], {}),
    "mean_dim_keepdim": (tt.mean, [T(3, 4)], {"dim": 0, "keepdim": True}),
    "mean_dims": (tt.mean, [R(2, 3, 4)], {"dim": (0, 2)}),
    "prod_all": (tt.prod, [R(2, 3, lo=0.5, hi=1.5)], {}),
    "prod_dim": (tt.prod, [T(3, 4)], {"dim": 1}),
    "prod_dim_keepdim": (tt.prod, [R(3, 4)], {"dim": 0, "keepdim": True}),
    "prod_one_zero": (tt.prod, [V([[1.5, 0.0, -2.0], [0.5, 1.2, 0.7]])], {"dim": 1}),
    "prod_two_zeros": (tt.prod, [V([[1.5, 0.0, 0.0], [0.0, 1.2, 0.7]])], {"dim": 1}),
    "prod_all_one_zero": (tt.prod, [V([[1.5, 0.0, -2.0], [0.5, 1.2, 0.7]])], {}),
    "prod_all_two_zeros": (tt.prod, [V([[1.5, 0.0, -2.0], [0.5, 0.0, 0.7]])], {}),
    "amax": (tt.amax, [T(3, 4)], {"dim": 1}),
    "amax_keepdim": (tt.amax, [R(2, 3, 4)], {"dim": (0, 2), "keepdim": True}),
    "amin": (tt.amin, [SL(3, 4)], {"dim": 0}),
    "amax_all": (tt.amax, [R(3, 4)], {}),
    "max_all": (tt.max, [T(3, 4)], {}),
    "min_all": (tt.min, [R(3, 4)], {}),
    "max_dim": (lambda x: tt.max(x, 1).values, [D(3, 4)], {}),
    "max_dim_keepdim": (lambda x: tt.max(x, 0, keepdim=True)[0], [D(3, 4)], {}),
    "min_dim": (lambda x: tt.min(x, -1).values, [D(3, 4)], {}),
    "var": (tt.var, [T(3, 4)], {"dim": 1}),
    "var_c0": (tt.var, [R(3, 4)], {"dim": 0, "correction": 0, "keepdim": True}),
    "var_all": (tt.var, [R(3, 4)], {}),
    "std": (tt.std, [SL(3, 4)], {"dim": 1, "correction": 1}),
    "std_c0": (tt.std, [R(3, 4)], {"dim": (0, 1), "correction": 0}),
    "logsumexp": (tt.logsumexp, [T(3, 4)], {"dim": 1}),
    "logsumexp_keepdim": (tt.logsumexp, [R(2, 3, 4)], {"dim": (0, 2), "keepdim": True}),
    "norm_1": (tt.norm, [R(3, 4)], {"p": 1, "dim": 1}),
    "norm_2": (tt.norm, [T(3, 4)], {"p": 2}),
    "norm_2_dim": (tt.norm, [R(3, 4)], {"p": 2, "dim": 0, "keepdim": True}),
    "norm_3": (tt.norm, [SL(3, 4)], {"p": 3, "dim": -1}),
    # distinct |x| (no ties: the inf-norm is not differentiable there)
    "norm_inf": (lambda x: (x + 5.0).norm(float("inf"), 1), [D(3, 4)], {}),
    "norm_inf_neg": (lambda x: tt.norm(x - 5.0, p=float("inf"), dim=0, keepdim=True), [D(3, 4)], {}),
    "cumsum": (tt.cumsum, [T(3, 4)], {"dim": 1}),
    "cumsum_dim0": (tt.cumsum, [R(3, 4)], {"dim": 0}),
    "cumprod": (tt.cumprod, [R(3, 4, lo=0.5, hi=1.5)], {"dim": 1}),
    "cumprod_neg": (tt.cumprod, [T(3, 4, lo=-1.5, hi=-0.5)], {"dim": 0}),
    # ---------------------------------------------------------------- views and shape ops
    "view": (lambda x: x.view(4, 3) * 1.0, [R(3, 4)], {}),
    "reshape_copy": (lambda x: x.reshape(2, 6), [T(3, 4)], {}),
    "transpose": (lambda x: x.transpose(0, 2), [R(2, 3, 4)], {}),
    "permute": (lambda x: x.permute(2, 0, 1), [R(2, 3, 4)], {}),
    "t": (lambda x: x.t(), [SL(3, 4)], {}),
    "expand": (lambda x: x.expand(2, 3, 4), [R(3, 1)], {}),
    "getitem_steps": (lambda x: x[1:, ::2], [R(3, 5)], {}),
    "getitem_neg_step_start": (lambda x: x[::2, 1:4:2], [T(5, 4)], {}),
    "getitem_int_none_ellipsis": (lambda x: x[1, None, ..., 1:], [R(3, 4, 2)], {}),
    "select": (lambda x: x.select(1, -1), [T(3, 4)], {}),
    "narrow": (lambda x: x.narrow(1, 1, 2), [R(3, 4)], {}),
    "squeeze": (lambda x: x.squeeze(1), [R(3, 1, 4)], {}),
    "squeeze_all": (lambda x: x.squeeze(), [R(1, 3, 1)], {}),
    "unsqueeze": (lambda x: x.unsqueeze(-1), [T(3, 4)], {}),
    "flatten": (lambda x: x.flatten(1), [R(2, 3, 2)], {}),
    "flatten_noncontig": (lambda x: x.flatten(), [T(3, 4)], {}),
    "unflatten": (lambda x: x.unflatten(1, (2, 2)), [R(3, 4)], {}),
    "unfold": (lambda x: x.unfold(1, 3, 1), [R(2, 5)], {}),
    "unfold_step": (lambda x: x.unfold(0, 2, 2), [T(5, 2)], {}),
    "diagonal": (lambda x: x.diagonal(), [R(3, 4)], {}),
    "diagonal_offset": (lambda x: x.diagonal(1, 1, 0), [T(3, 4)], {}),
    "as_strided": (lambda x: x.as_strided((3, 3), (2, 1), 1), [R(3, 4)], {}),
    "as_strided_non_contiguous": (lambda x: (x * 1).t().as_strided((2, 3), (1, 3), 1), [R(4, 3)], {}),
    "split": (lambda x: x.split(3, 1), [R(2, 7)], {}),
    "split_sections": (lambda x: x.split([1, 2], 0), [T(3, 4)], {}),
    "chunk": (lambda x: x.chunk(2, -1), [R(3, 5)], {}),
    "unbind": (lambda x: x.unbind(1), [SL(3, 3)], {}),
    # ---------------------------------------------------------------- indexing
    "index_select": (lambda x: x.index_select(1, IDX), [T(3, 4)], {}),
    "index_select_dim0": (lambda x: x.index_select(0, IDX[:3]), [R(3, 4)], {}),
    "gather": (lambda x: x.gather(1, GATHER_IDX[:, :3]), [R(3, 4)], {}),
    "gather_dim0": (lambda x: x.gather(0, GATHER_IDX), [SL(3, 4)], {}),
    "scatter_both": (lambda x, s: x.scatter(0, PERM_IDX, s), [R(3, 4), R(2, 4)], {}),
    "scatter_value": (lambda x: x.scatter(1, GATHER_IDX[:, :2], 0.5), [T(3, 4)], {}),
    "scatter_add_both": (lambda x, s: x.scatter_add(0, SCATTER_IDX, s), [R(3, 4), T(2, 4)], {}),
    "masked_fill": (lambda x: x.masked_fill(MASK, 0.25), [T(3, 4)], {}),
    "masked_fill_broadcast": (lambda x: x.masked_fill(MASK_ROW, -1.0), [R(3, 4)], {}),
    "masked_select": (lambda x: x.masked_select(MASK), [SL(3, 4)], {}),
    "masked_select_broadcast": (lambda x: x.masked_select(MASK), [R(1, 4)], {}),
    "getitem_int_tensor": (lambda x: x[IDX], [R(3, 4)], {}),
    "getitem_two_int_tensors": (lambda x: x[IDX[:3], tt.tensor([0, 3, 3])], [T(3, 4)], {}),
    "getitem_bool_tensor": (lambda x: x[MASK], [R(3, 4)], {}),
    "getitem_bool_dim1": (lambda x: x[:, MASK_ROW], [T(3, 4)], {}),
    "getitem_int_list": (lambda x: x[[0, 2, 0]], [R(3, 4)], {}),
    "getitem_tensor_slice_tensor": (lambda x: x[tt.tensor([1, 0]), :, tt.tensor([2, 2])], [R(2, 2, 3)], {}),
    "setitem_slice": (_setitem((slice(1, None), slice(None, None, 2))), [T(3, 4), R(2, 2)], {}),
    "setitem_broadcast": (_setitem((slice(None), 1)), [R(3, 4), R(1)], {}),
    "setitem_int_tensor": (_setitem(tt.tensor([2, 0])), [R(3, 4), R(4)], {}),
    "setitem_bool_mask": (_setitem(MASK), [SL(3, 4), R(6)], {}),
    "cat": (lambda a, b, c: tt.cat([a, b, c], 1), [R(3, 2), T(3, 4), R(3, 1)], {}),
    "cat_dim0": (lambda a, b: tt.cat((a, b)), [SL(2, 3), R(1, 3)], {}),
    "stack": (lambda a, b: tt.stack([a, b], 1), [R(3, 4), T(3, 4)], {}),
    "flip": (lambda x: x.flip([0, 1]), [T(3, 4)], {}),
    "roll": (lambda x: x.roll(1, 1), [R(3, 4)], {}),
    "roll_multi": (lambda x: x.roll((2, -1), (0, 1)), [SL(3, 4)], {}),
    "roll_flat": (lambda x: x.roll(5), [R(3, 4)], {}),
    "repeat": (lambda x: x.repeat(2, 1, 3), [R(2, 3)], {}),
    "tril": (lambda x: x.tril(), [T(4, 4)], {}),
    "triu_offset": (lambda x: x.triu(1), [R(3, 4)], {}),
    "tril_neg": (lambda x: x.tril(-1), [R(4, 3)], {}),
    "sort": (lambda x: x.sort(1)[0], [D(3, 4)], {}),
    "sort_desc_dim0": (lambda x: x.sort(0, descending=True).values, [D(3, 4)], {}),
    "topk": (lambda x: x.topk(2, 1).values, [D(3, 4)], {}),
    "topk_smallest": (lambda x: x.topk(2, 0, largest=False).values, [D(3, 4)], {}),
    # ---------------------------------------------------------------- softmax and normalization
    "softmax_last": (tt.softmax, [T(3, 4)], {"dim": -1}),
    "softmax_dim0": (tt.softmax, [R(3, 4)], {"dim": 0}),
    "softmax_3d_mid": (tt.softmax, [R(2, 3, 2)], {"dim": 1}),
    "log_softmax_last": (tt.log_softmax, [SL(3, 4)], {"dim": 1}),
    "log_softmax_dim0": (tt.log_softmax, [T(3, 4)], {"dim": 0}),
    "layer_norm": (lambda x: tt.layer_norm(x, (4,)), [R(3, 4)], {}),
    "layer_norm_affine": (lambda x, w, b: tt.layer_norm(x, (4,), w, b), [T(3, 4), R(4), R(4)], {}),
    "layer_norm_weight_only": (lambda x, w: tt.layer_norm(x, [2, 3], w), [R(2, 2, 3), R(2, 3)], {}),
    "rms_norm": (lambda x: tt.rms_norm(x, (4,)), [SL(3, 4)], {}),
    "rms_norm_weight": (lambda x, w: tt.rms_norm(x, 4, w), [R(3, 4), R(4)], {}),
    # ---------------------------------------------------------------- in place on non-leaves
    "add_": (_inplace("add_"), [R(3, 4), R(4)], {}),
    "add_alpha_": (_inplace("add_", alpha=0.5), [T(3, 4), R(3, 4)], {}),
    "sub_": (_inplace("sub_", 1.5), [R(3, 4)], {}),
    "mul_": (_inplace("mul_"), [R(3, 4), T(3, 4)], {}),
    "div_": (_inplace("div_"), [R(3, 4), R(3, 1, lo=0.5, hi=2)], {}),
    "pow_": (_inplace("pow_", 2), [SL(3, 4)], {}),
    "relu_": (_inplace("relu_"), [T(3, 4)], {}),
    "exp_": (_inplace("exp_"), [R(3, 4)], {}),
    "clamp_": (_inplace("clamp_", -0.5, 0.5), [R(3, 4)], {}),
    "clamp_tensor_": (_inplace("clamp_"), [R(3, 4), R(4, lo=-1, hi=0)], {}),
    "masked_fill_": (_masked_fill_, [T(3, 4)], {}),
    "copy_": (_copy_, [R(3, 4), R(4)], {}),
    "zero_": (_zero_, [SL(3, 4)], {}),
    "index_put_": (_index_put_((tt.tensor([0, 2]),)), [R(3, 4), R(2, 4)], {}),
    "index_put_accumulate": (_index_put_((tt.tensor([0, 2, 0]), tt.tensor([1, 1, 1])), True), [T(3, 4), R(3)], {}),
    "scatter_add_": (lambda x, s: (x * 1.0).scatter_add_(0, SCATTER_IDX, s), [R(3, 4), R(2, 4)], {}),
    "iadd_chain": (lambda x, y: _chain(x, y), [R(3, 4), R(3, 4)], {}),
}


def _chain(x, y):
    z = x * y
    z += x
    z *= 2.0
    z.sigmoid_()
    return z


# ------------------------------------------------------------------ harness

def _seed(name):
    return zlib.crc32(name.encode()) % 10_000


def _leaves(specs, dtype, seed):
    """(leaves, fn adapter) for an input list; 'expanded' inputs are size-1 leaves broadcast
    inside the call, so the graph sees a stride-0 input."""
    leaves, adapters = [], []
    for i, sp in enumerate(specs):
        s = seed + 17 * i
        if sp.values is not None:
            t = tt.tensor(sp.values, dtype=getattr(tt, dtype)).requires_grad_()
            adapters.append(None)
        elif sp.distinct:
            n = int(np.prod(sp.shape))
            vals = (np.random.default_rng(s).permutation(n) - n // 2) * 0.25
            t = tt.tensor(vals.reshape(sp.shape), dtype=getattr(tt, dtype)).requires_grad_()
            adapters.append(None)
        elif sp.layout == "expanded":
            t, _ = make((1,) + sp.shape[1:], dtype, "contiguous", sp.lo, sp.hi, s, requires_grad=True)
            adapters.append(sp.shape)
        else:
            t, _ = make(sp.shape, dtype, sp.layout, sp.lo, sp.hi, s, requires_grad=True)
            adapters.append(None)
        leaves.append(t)
    return leaves, adapters


def _call(fn, kw, adapters):
    def call(*xs):
        xs = [x if a is None else x.expand(*a) for x, a in zip(xs, adapters)]
        return fn(*xs, **kw)
    return call


def _outputs(out):
    outs = out if isinstance(out, tuple) else (out,)
    return [o for o in outs if isinstance(o, tt.Tensor) and o.requires_grad]


@pytest.mark.parametrize("name", sorted(OPS))
def test_gradcheck(name):
    fn, specs, kw = OPS[name]
    leaves, adapters = _leaves(specs, "float64", _seed(name))
    call = _call(fn, kw, adapters)
    assert _outputs(call(*leaves)), f"{name}: no output requires grad"
    assert gradcheck(call, tuple(leaves), eps=1e-6, atol=1e-6, rtol=1e-4)


def _grads(name, dtype, values=None):
    """Gradients of sum(out_i * w_i) w.r.t. every input, in ``dtype``; ``values`` overrides the
    inputs (numpy arrays, used to give float64 exactly the low-precision inputs)."""
    fn, specs, kw = OPS[name]
    leaves, adapters = _leaves(specs, dtype, _seed(name))
    if values is not None:
        leaves = [tt.tensor(v, dtype=getattr(tt, dtype)).requires_grad_() for v in values]
    outs = _outputs(_call(fn, kw, adapters)(*leaves))
    rng = np.random.default_rng(_seed(name) + 1)
    ws = [tt.tensor(rng.uniform(-1, 1, tuple(o.shape)), dtype=getattr(tt, "float64")) for o in outs]
    return leaves, outs, ws


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(OPS))
def test_low_precision_grad(name, dtype):
    leaves, outs, ws = _grads(name, dtype)
    # the upstream gradient, rounded to each output's dtype; float64 sees the same numbers
    gs = [w.to(o.dtype) for w, o in zip(ws, outs)]
    tt.autograd.backward(outs, gs)
    ref_leaves, ref_outs, _ = _grads(name, "float64", [to_numpy(x) for x in leaves])
    tt.autograd.backward(ref_outs, [g.double() for g in gs])
    rtol, atol = GRAD_TOL[dtype]
    for i, (x, r) in enumerate(zip(leaves, ref_leaves)):
        assert x.grad is not None and r.grad is not None, f"{name}: input {i} got no gradient"
        assert x.grad.dtype.name == dtype, f"{name}: gradient of input {i} is {x.grad.dtype}, not {dtype}"
        assert tuple(x.grad.shape) == tuple(x.shape)
        expected = to_numpy(r.grad)
        assert_close(x.grad, expected, dtype, tol=(rtol, atol * max(1.0, np.abs(expected).max())),
                     what=f"{name} input {i}")


# ------------------------------------------------------------------ double backward, every row


@pytest.mark.parametrize("name", sorted(OPS))
def test_double_backward(name):
    """Hessian-vector product of f = sum_i sum(w_i * out_i**2) by double backward (create_graph)
    vs central differences of the first gradient. The square makes even linear ops (views,
    indexing) have a non-zero second derivative, so a backward formula that drops the graph of
    its incoming gradient is caught."""
    fn, specs, kw = OPS[name]
    leaves, adapters = _leaves(specs, "float64", _seed(name))
    values = [to_numpy(x) for x in leaves]
    call = _call(fn, kw, adapters)
    rng = np.random.default_rng(_seed(name) + 2)
    ws = None

    def f(*xs):
        nonlocal ws
        outs = _outputs(call(*xs))
        if ws is None:
            ws = [tt.tensor(rng.uniform(0.5, 1.5, tuple(o.shape)), dtype=tt.float64) for o in outs]
        return sum(((o ** 2) * w).sum() for o, w in zip(outs, ws))

    def grads_at(vals, create_graph=False):
        xs = [tt.tensor(v, dtype=tt.float64).requires_grad_() for v in vals]
        return xs, tt.autograd.grad(f(*xs), xs, create_graph=create_graph, allow_unused=True)

    vs = [rng.uniform(-1, 1, v.shape) for v in values]
    xs, gs = grads_at(values, create_graph=True)
    dot = sum((g * tt.tensor(v, dtype=tt.float64)).sum() for g, v in zip(gs, vs) if g is not None)
    hv = tt.autograd.grad(dot, xs, allow_unused=True)
    eps = 1e-6
    _, gp = grads_at([v + eps * d for v, d in zip(values, vs)])
    _, gm = grads_at([v - eps * d for v, d in zip(values, vs)])
    for i, (h, p, m) in enumerate(zip(hv, gp, gm)):
        numeric = (to_numpy(p) - to_numpy(m)) / (2 * eps) if p is not None else np.zeros_like(values[i])
        analytic = to_numpy(h) if h is not None else np.zeros_like(values[i])
        np.testing.assert_allclose(analytic, numeric, rtol=1e-4, atol=1e-6, err_msg=f"{name}: input {i}")
