"""Module-level functions (``tinytorch.exp(x)``, ``tinytorch.cat(...)``): every op family's
public functions, re-exported."""
from __future__ import annotations

from tinytorch._ops.elementwise import (  # noqa: F401
    abs, acos, add, asin, atan, atan2, bitwise_and, bitwise_or, bitwise_xor, ceil, clamp, cos, cosh, div, elu,
    eq, erf, exp, exp2, expm1, floor, floor_divide, ge, gelu, gt, hardswish, isfinite, isinf, isnan, le,
    leaky_relu, log, log1p, log2, log10, logical_and, logical_not, logical_or, logical_xor, lt, maximum,
    minimum, mish, mul, ne, neg, pow, reciprocal, relu, remainder, round, rsqrt, rsub, sigmoid, sign, silu,
    sin, sinh, softplus, sqrt, square, sub, tan, tanh, trunc, where,
)
from tinytorch._ops.shape import (  # noqa: F401
    as_strided, broadcast_to, chunk, diagonal, flatten, movedim, narrow, permute, reshape, select, split,
    squeeze, t, transpose, unbind, unflatten, unsqueeze,
)

clip = clamp
subtract = sub
multiply = mul
divide = div
true_divide = div
negative = neg
swapaxes = transpose
from tinytorch._ops.reduce import (  # noqa: F401
    all, amax, amin, any, argmax, argmin, cumprod, cumsum, layer_norm, log_softmax, logsumexp, max, mean, min,
    norm, prod, rms_norm, softmax, std, sum, var,
)
from tinytorch._ops.index import (  # noqa: F401
    argsort, cat, flip, gather, hstack, index_put, index_select, masked_fill, masked_select, nonzero, roll,
    scatter, scatter_add, sort, stack, topk, tril, triu, vstack,
)
from tinytorch._ops.elementwise import clamp as clip  # noqa: F401,E402

concat = cat
concatenate = cat
from tinytorch._ops.nn import bmm, conv1d, conv2d, dropout, embedding, matmul, mm  # noqa: F401,E402
