# cython: language_level=3
"""Losses with fused kernels (nll_loss, cross_entropy), with their derivatives; cross_entropy's
switches to a composite formula under create_graph, and class-probability targets are composed
from ops."""
from tinytorch import _C
from tinytorch._core.dtype import to_dtype
from tinytorch._core.tensor_base cimport TensorBase as Tensor
from tinytorch._core.graph cimport Node, is_grad_enabled_c
from tinytorch._ops._common cimport record as _record, fused_result, adjoint_result, impl_or_none as _impl
from tinytorch._ops import shape as S
from tinytorch._ops.elementwise import where
from tinytorch._ops.norm import log_softmax, softmax
from tinytorch._ops.reduce import sum as rsum

_REDUCTION = {"none": 0, "mean": 1, "sum": 2}


def _reduction_code(reduction):
    try:
        return _REDUCTION[reduction]
    except KeyError:
        raise ValueError(f"{reduction} is not a valid value for reduction") from None


def _nll_input_grad(Tensor g, Tensor x, Tensor t, w, ignore_index, int r):
    gx = _C.nll_loss_backward(g._impl, x._impl, t._impl, _impl(w), r, ignore_index)
    # nll_loss is linear in its input, so its backward's adjoint is nll_loss itself
    return adjoint_result("NllLossBackwardBackward", gx, (g,), lambda gg: (_nll(gg, t, w, ignore_index, r),))


def _nll_back(Node n, g):
    x, t, w = n.saved_tensors
    return (_nll_input_grad(g, x, t, w, n.ignore_index, n.reduction), None)


def _nll(Tensor input, Tensor target, weight, ignore_index, int r):
    return _record("NllLossBackward0", _nll_back, (input, None),
                   _C.nll_loss(input._impl, target._impl, _impl(weight), r, ignore_index),
                   {"reduction": r, "ignore_index": ignore_index}, (input, target, weight))


def nll_loss(Tensor input, Tensor target, weight=None, ignore_index=-100, reduction="mean"):
    """The negative log likelihood loss over log-probabilities ``input``."""
    return _nll(input, target, weight, ignore_index, _reduction_code(reduction))


def _ce_grad_composite(Tensor g, Tensor x, Tensor t, w, ignore_index, int r, double ls):
    """cross_entropy's input gradient from differentiable ops, for create_graph: the gradient at
    log_softmax(x) is (1 - ls) * nll_loss's plus the smoothing term's (-ls/C * w_c per valid
    sample, scaled as the reduction), then back through log_softmax: d - softmax(x) * sum_c d."""
    cdim = 1 if x._impl.ndim > 1 else 0
    c = x._impl.shape[cdim]
    d = _nll_input_grad(g, x, t, w, ignore_index, r) * (1.0 - ls)
    if ls > 0:
        valid = t != ignore_index
        per_class = 1.0
        if w is not None:
            wshape = [1] * x._impl.ndim
            wshape[cdim] = c
            per_class = S.reshape(w, *wshape)
        if r == 0:
            scale = S.unsqueeze(g, cdim)
        elif r == 2:
            scale = g
        else:                        # mean: over the weights of the valid samples' targets
            picked = valid if w is None else \
                S.reshape(w.index_select(0, S.reshape(where(valid, t, 0), -1)), *t._impl.shape) * valid
            scale = g / rsum(picked)
        # (valid in x's dtype: a bool tensor times a Python float would be float32)
        d = d - per_class * S.unsqueeze(valid, cdim).to(x.dtype) * scale * (ls / c)
    return d - softmax(x, cdim) * rsum(d, cdim, keepdim=True)


def _ce_back(Node n, g):
    x, t, w = n.saved_tensors
    if is_grad_enabled_c():
        if x.dtype != g.dtype:   # a loss wider than its logits: differentiate as through logits.to(g.dtype)
            return (_ce_grad_composite(g, x.to(g.dtype), t, w, n.ignore_index, n.reduction, n.smoothing).to(x.dtype),
                    None)
        return (_ce_grad_composite(g, x, t, w, n.ignore_index, n.reduction, n.smoothing), None)
    gx = _C.cross_entropy_backward(g._impl, x._impl, t._impl, _impl(w), n.reduction, n.ignore_index, n.smoothing)
    return (fused_result("CrossEntropyBackwardBackward", gx, (g,)), None)


def cross_entropy(Tensor input, Tensor target, weight=None, ignore_index=-100, reduction="mean",
                  label_smoothing=0.0, dtype=None):
    """Cross entropy between logits ``input`` and class indices or class probabilities ``target``.
    ``dtype``: the loss's (default the input's). float32 from float16/bfloat16 logits is
    ``input.float()``'s loss without that copy: the fused kernel reads the logits in float32, and
    the gradient comes back in the logits' dtype, as through the cast."""
    r = _reduction_code(reduction)
    code = None
    if dtype is not None:
        dtype = to_dtype(dtype)
        if target.dtype.is_floating_point or (weight is not None and weight.dtype != input.dtype):
            input = input.to(dtype)       # the composite and the weighted kernel take one dtype
        elif dtype != input.dtype:
            code = dtype.code
    if target.dtype.is_floating_point:
        return _cross_entropy_probs(input, target, weight, reduction, label_smoothing)
    return _record("CrossEntropyLossBackward0", _ce_back, (input, None),
                   _C.cross_entropy(input._impl, target._impl, _impl(weight), r, ignore_index, label_smoothing,
                                    code),
                   {"reduction": r, "ignore_index": ignore_index, "smoothing": label_smoothing},
                   (input, target, weight))


def _cross_entropy_probs(Tensor input, Tensor target, weight, reduction, double label_smoothing):
    """Class-probability targets: -sum_c w_c * t_c * log_softmax(x)_c, composed from ops."""
    if tuple(target._impl.shape) != tuple(input._impl.shape):
        raise ValueError(f"cross_entropy: probability target shape {list(target._impl.shape)} must match input "
                         f"shape {list(input._impl.shape)}")
    cdim = 1 if input._impl.ndim > 1 else 0
    c = input._impl.shape[cdim]
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / c
    logp = log_softmax(input, cdim)
    if weight is not None:
        wshape = [1] * input._impl.ndim
        wshape[cdim] = c
        logp = logp * S.reshape(weight, wshape)
    loss = -(logp * target).sum(cdim)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / float(loss.numel())     # an empty batch's mean is 0 / 0 = NaN, as PyTorch's
