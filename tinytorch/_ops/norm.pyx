# cython: language_level=3
"""Softmax, log_softmax and normalization (layer_norm, rms_norm), with their derivatives: fused
backward kernels, composite formulas under create_graph. Softmax records a reduction's node."""
from tinytorch import _C
from tinytorch._core.dtype import BFLOAT16, FLOAT16, FLOAT32, FLOAT64
from tinytorch._core.tensor_base cimport TensorBase as Tensor, wrap
from tinytorch._core.graph cimport Node, make_node, set_history, save_tensors, is_grad_enabled_c
from tinytorch._ops._common cimport fused_result
from tinytorch._ops.reduce cimport _record, _dims, _code
from tinytorch._ops.reduce import mean, sum

# rms_norm's default eps: the machine epsilon of the input's dtype (float32's for other dtypes)
_EPS = {FLOAT16: 9.765625e-04, BFLOAT16: 7.8125e-03, FLOAT32: 1.1920928955078125e-07, FLOAT64: 2.220446049250313e-16}


def _softmax_back(Node n, g):
    _, y = n.saved_tensors
    if is_grad_enabled_c():
        return (y * (g - sum(g * y, n.dim, keepdim=True)),)
    return (fused_result("softmax_backward", _C.softmax_backward(g._impl, y._impl, n.dim), (g, y)),)


def softmax(Tensor input, int dim, dtype=None):
    """Softmax along dim, computed in float32 for half types.

    Args:
        input (Tensor): the input tensor.
        dim (int): a dimension along which softmax will be computed.
        dtype (dtype, optional): the desired data type of returned tensor. If specified, the input
            tensor is casted to :attr:`dtype` before the operation is performed. This is useful for
            preventing data type overflows. Default: ``None``"""
    d = _dims(dim, input._impl.ndim)[0]
    return _record("SoftmaxBackward0", _softmax_back, input, _C.softmax(input._impl, dim, _code(dtype)), None, False,
                   {"dim": d})


def _log_softmax_back(Node n, g):
    _, y = n.saved_tensors
    if is_grad_enabled_c():
        return (g - y.exp() * sum(g, n.dim, keepdim=True),)
    return (fused_result("log_softmax_backward", _C.log_softmax_backward(g._impl, y._impl, n.dim), (g, y)),)


def log_softmax(Tensor input, int dim, dtype=None):
    """Applies a softmax followed by a logarithm.

    Args:
        input (Tensor): the input tensor.
        dim (int): a dimension along which softmax will be computed.
        dtype (dtype, optional): the desired data type of returned tensor. If specified, the input
            tensor is casted to :attr:`dtype` before the operation is performed. This is useful for
            preventing data type overflows. Default: ``None``"""
    d = _dims(dim, input._impl.ndim)[0]
    return _record("LogSoftmaxBackward0", _log_softmax_back, input, _C.log_softmax(input._impl, dim, _code(dtype)),
                   None, False, {"dim": d})


# ------------------------------------------------------------------ normalization

def _norm_grads_composite(g, Tensor x, w, int nd, double eps, bint center):
    """layer_norm's (center) or rms_norm's gradients for x and the weight from differentiable ops,
    for create_graph: xhat = (x - mean) * rstd, gy = g * w,
    gx = rstd * (gy - mean(gy) - xhat * mean(gy * xhat)) (no mean(gy) term for rms_norm)."""
    dims = list(range(x._impl.ndim - nd, x._impl.ndim))
    xc = x - mean(x, dims, keepdim=True) if center else x
    rstd = (mean(xc * xc, dims, keepdim=True) + eps).rsqrt()
    xhat = xc * rstd
    gy = g if w is None else g * w
    inner = gy - xhat * mean(gy * xhat, dims, keepdim=True)
    if center:
        inner = inner - mean(gy, dims, keepdim=True)
    lead = list(range(x._impl.ndim - nd))
    gw = None if w is None else (sum(g * xhat, lead) if lead else g * xhat)
    return rstd * inner, gw


def _layer_norm_back(Node n, g):
    x, y, w, mean_, rstd = n.saved_tensors
    if is_grad_enabled_c():
        gx, gw = _norm_grads_composite(g, x, w, n.nd, n.eps, True)
        lead = list(range(x._impl.ndim - n.nd))
        gb = None if not n.has_bias else (sum(g, lead) if lead else g)
        return gx, gw, gb
    gx, gw, gb = _C.layer_norm_backward(g._impl, x._impl, mean_._impl, rstd._impl,
                                        None if w is None else w._impl, n.has_bias)
    inputs = (g, x)
    return (fused_result("LayerNormBackwardBackward", gx, inputs),
            None if w is None else fused_result("LayerNormBackwardBackward", gw, inputs),
            None if not n.has_bias else fused_result("LayerNormBackwardBackward", gb, inputs))


def layer_norm(Tensor input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Layer normalization over the last len(normalized_shape) dims.

    Args:
        input (Tensor): the input tensor.
        normalized_shape (int or list or Size): the shape of the trailing dimensions normalized over.
        weight (Tensor, optional): the elementwise affine weight, of shape :attr:`normalized_shape`.
            Default: ``None``
        bias (Tensor, optional): the optional bias tensor. Default: ``None``
        eps (float): a value added to the denominator for numerical stability. Default: ``1e-05``"""
    shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    y, mean_, rstd = _C.layer_norm(input._impl, shape, None if weight is None else (<Tensor>weight)._impl,
                                   None if bias is None else (<Tensor>bias)._impl, eps)
    cdef Tensor out = wrap(y)
    cdef Node n = make_node("NativeLayerNormBackward0", _layer_norm_back, (input, weight, bias))
    if n is not None:
        n.has_bias = bias is not None
        n.nd, n.eps = len(shape), eps
        save_tensors(n, (input, None, weight, wrap(mean_), wrap(rstd)))
        set_history(out, n, 0)
    return out


def _rms_norm_back(Node n, g):
    x, w, rstd = n.saved_tensors
    if is_grad_enabled_c():
        return _norm_grads_composite(g, x, w, n.nd, n.eps, False)
    gx, gw = _C.rms_norm_backward(g._impl, x._impl, rstd._impl, None if w is None else w._impl)
    return (fused_result("RmsNormBackwardBackward", gx, (g, x)),
            None if w is None else fused_result("RmsNormBackwardBackward", gw, (g, x)))


def rms_norm(Tensor input, normalized_shape, weight=None, eps=None):
    """Apply Root Mean Square Layer Normalization.

    Args:
        input (Tensor): the input tensor.
        normalized_shape (int or list or Size): the shape of the trailing dimensions normalized over.
        weight (Tensor, optional): the elementwise affine weight, of shape :attr:`normalized_shape`.
            Default: ``None``
        eps (float, optional): a value added to the denominator for numerical stability (default: the
            dtype's machine epsilon). Default: ``None``"""
    shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
    if eps is None:
        eps = _EPS.get(input._impl.dtype_code, _EPS[FLOAT32])
    y, rstd = _C.rms_norm(input._impl, shape, None if weight is None else (<Tensor>weight)._impl, eps)
    cdef Tensor out = wrap(y)
    cdef Node n = make_node("RmsNormBackward0", _rms_norm_back, (input, weight))
    if n is not None:
        n.nd, n.eps = len(shape), eps
        save_tensors(n, (input, weight, wrap(rstd)))
        set_history(out, n, 0)
    return out


def _batch_norm_grads_composite(g, Tensor x, w, Tensor mean_, Tensor invstd, Node n):
    """batch_norm's gradients from differentiable ops, for create_graph: xhat = (x - mean) * rstd,
    gy = g * w, gx = rstd * (gy - mean(gy) - xhat * mean(gy * xhat)) in training (the batch
    statistics depend on x), rstd * gy in evaluation."""
    cdef int nd = x._impl.ndim
    dims = [0] + list(range(2, nd))
    shape = [1, x._impl.shape[1]] + [1] * (nd - 2)
    if n.training:
        xc = x - mean(x, dims, keepdim=True)
        rstd = (mean(xc * xc, dims, keepdim=True) + n.eps).rsqrt()
    else:
        xc = x - mean_.reshape(shape).to(x.dtype)
        rstd = invstd.reshape(shape).to(x.dtype)
    xhat = xc * rstd
    gy = g if w is None else g * w.reshape(shape)
    gx = rstd * (gy - mean(gy, dims, keepdim=True) - xhat * mean(gy * xhat, dims, keepdim=True)) if n.training \
        else rstd * gy
    gw = None if w is None else sum(g * xhat, dims).reshape(w.shape)
    gb = sum(g, dims) if n.has_bias else None
    return gx, gw, gb


def _batch_norm_back(Node n, g):
    x, w, mean_, invstd = n.saved_tensors
    if is_grad_enabled_c():
        return _batch_norm_grads_composite(g, x, w, mean_, invstd, n)
    needs = (bool(n.needs_input_grad[0]), w is not None and bool(n.needs_input_grad[1]),
             n.has_bias and bool(n.needs_input_grad[2]))
    grads = _C.batch_norm_backward(g._impl, x._impl, mean_._impl, invstd._impl, None if w is None else w._impl,
                                   n.training, needs)
    return tuple(None if t is None else fused_result("BatchNormBackwardBackward", t, (g, x)) for t in grads)


def batch_norm_fused(Tensor input, weight, bias, running_mean, running_var, bint training, double eps):
    """batch_norm over dim 1 of (N, C, *) input with the fused kernels (the running statistics
    are read in evaluation, not updated). Returns (out, mean, var): the batch's mean and biased
    variance in training, the running ones in evaluation, in float32 for 16-bit input."""
    y, mean_, var, invstd = _C.batch_norm(
        input._impl, None if weight is None else (<Tensor>weight)._impl,
        None if bias is None else (<Tensor>bias)._impl,
        None if running_mean is None else (<Tensor>running_mean)._impl,
        None if running_var is None else (<Tensor>running_var)._impl, training, eps)
    cdef Tensor out = wrap(y)
    cdef Node n = make_node("NativeBatchNormBackward0", _batch_norm_back, (input, weight, bias))
    if n is not None:
        n.has_bias = bias is not None
        n.training, n.eps = training, eps
        save_tensors(n, (input, weight, wrap(mean_), wrap(invstd)))
        set_history(out, n, 0)
    return out, wrap(mean_), wrap(var)
