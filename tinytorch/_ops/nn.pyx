# cython: language_level=3
"""Matrix products and neural-network kernels (conv, pooling, embedding, losses, dropout),
with their derivatives. Composite formulas where double backward matters (matmul, linear);
fused backward kernels elsewhere."""
from tinytorch import _C
from tinytorch._tensor cimport TensorBase as Tensor, wrap, requires_grad
from tinytorch._autograd cimport Node, make_node, set_history, is_grad_enabled_c
from tinytorch._ops._common cimport record as _record, fused_result, adjoint_result
from tinytorch._ops import shape as S
from tinytorch._ops.elementwise import where
from tinytorch._ops.index import gather, index_put
from tinytorch._ops.reduce import log_softmax, softmax, sum as rsum

_REDUCTION = {"none": 0, "mean": 1, "sum": 2}


def _reduction_code(reduction):
    try:
        return _REDUCTION[reduction]
    except KeyError:
        raise ValueError(f"{reduction} is not a valid value for reduction") from None




cdef object _impl(object t):
    return None if t is None else (<Tensor>t)._impl


cdef object _wrap_opt(object impl):
    return None if impl is None else wrap(impl)


# ------------------------------------------------------------------ matmul / linear

def _matmul_back(Node n, g):
    a, b = n.saved_tensors
    a2 = S.unsqueeze(a, 0) if a.dim() == 1 else a
    b2 = S.unsqueeze(b, -1) if b.dim() == 1 else b
    g2 = g
    if a.dim() == 1:
        g2 = S.unsqueeze(g2, -2)
    if b.dim() == 1:
        g2 = S.unsqueeze(g2, -1)
    ga = gb = None
    if n.needs_input_grad[0]:
        ga = matmul(g2, S.transpose(b2, -1, -2))
        if a.dim() == 1:
            ga = S.squeeze(ga, -2)
    if n.needs_input_grad[1]:
        gb = matmul(S.transpose(a2, -1, -2), g2)
        if b.dim() == 1:
            gb = S.squeeze(gb, -1)
    return (ga, gb)


def matmul(Tensor a, Tensor b):
    """Matrix product with NumPy/PyTorch semantics (1-D, 2-D, batched with broadcasting)."""
    return _record("MmBackward0" if a._impl.ndim == 2 and b._impl.ndim == 2 else "MatmulBackward0", _matmul_back,
                   (a, b), _C.matmul(a._impl, b._impl), {}, (a, b))


def mm(Tensor a, Tensor b):
    if a._impl.ndim != 2 or b._impl.ndim != 2:
        raise RuntimeError(f"mm: expected 2-D tensors, got {a._impl.ndim}-D and {b._impl.ndim}-D")
    return matmul(a, b)


def bmm(Tensor a, Tensor b):
    if a._impl.ndim != 3 or b._impl.ndim != 3:
        raise RuntimeError(f"bmm: expected 3-D tensors, got {a._impl.ndim}-D and {b._impl.ndim}-D")
    return _record("BmmBackward0", _matmul_back, (a, b), _C.bmm(a._impl, b._impl), {}, (a, b))


def _linear_back(Node n, Tensor g):
    cdef Tensor x, w
    x, w = n.saved_tensors
    cdef tuple needs = n.needs_input_grad
    if not is_grad_enabled_c():
        # not recording (no create_graph): one fused call, no double backward needed
        gx, gw, gb = _C.linear_backward(g._impl, x._impl, w._impl, needs)
        return (_wrap_opt(gx), _wrap_opt(gw), _wrap_opt(gb))
    cdef int nd = g._impl.ndim
    gx = gw = gb = None
    if needs[0]:
        gx = matmul(g, w)
    if needs[1]:
        # batch dims flattened: (N, out)^T @ (N, in); a (batch, features) input already is
        g2 = g if nd == 2 else S.reshape(g, -1, g._impl.shape[-1] if nd else 1)
        x2 = x if x._impl.ndim == 2 else S.reshape(x, -1, x._impl.shape[-1])
        gw = matmul(S.t(g2), x2)
    if needs[2]:
        gb = g.sum(0) if nd == 2 else g.sum(list(range(nd - 1))) if nd > 1 else g
    return (gx, gw, gb)


def linear(Tensor x, Tensor weight, bias=None):
    """y = x @ weight.T + bias"""
    return _record("AddmmBackward0", _linear_back, (x, weight, bias), _C.linear(x._impl, weight._impl, _impl(bias)),
                   {}, (x, weight))


# ------------------------------------------------------------------ convolution and pooling

def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def _conv2d_back(Node n, g):
    # gx is bilinear in (g, w), gw in (x, g) and gb linear in g, so each one's own backward is made
    # of the same two kernels (PyTorch's ConvolutionBackwardBackward): double backward works; a
    # third derivative raises.
    x, w = n.saved_tensors
    args = (n.stride, n.padding, n.dilation, n.groups)
    needs = (bool(n.needs_input_grad[0]), bool(n.needs_input_grad[1]), bool(n.needs_input_grad[2]))
    gx, gw, gb = _C.conv2d_backward(g._impl, x._impl, w._impl, *args, needs)

    def conv(a, b):
        return fused_result("ConvolutionBackwardBackward", _C.conv2d(a._impl, b._impl, None, *args), (a, b))

    def input_grad(go, weight):
        r = _C.conv2d_backward(go._impl, x._impl, weight._impl, *args, (True, False, False))[0]
        return fused_result("ConvolutionBackwardBackward", r, (go, weight))

    def weight_grad(go, inp):
        r = _C.conv2d_backward(go._impl, inp._impl, w._impl, *args, (False, True, False))[1]
        return fused_result("ConvolutionBackwardBackward", r, (go, inp))

    bias_shape = [1] * g.dim()
    bias_shape[-3] = -1
    return (
        None if gx is None else adjoint_result("ConvolutionBackwardBackward", gx, (g, w),
                                               lambda ggx: (conv(ggx, w), weight_grad(g, ggx))),
        None if gw is None else adjoint_result("ConvolutionBackwardBackward", gw, (x, g),
                                               lambda ggw: (input_grad(g, ggw), conv(x, ggw))),
        None if gb is None else adjoint_result("ConvolutionBackwardBackward", gb, (g,),
                                               lambda ggb: (ggb.reshape(bias_shape).expand(*g.shape),)),
    )


def conv2d(Tensor x, Tensor weight, bias=None, stride=1, padding=0, dilation=1, int groups=1):
    """2-D convolution over an input of shape (N, C, H, W) or (C, H, W)."""
    stride, dilation = _pair(stride), _pair(dilation)
    crop = (0, 0)
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0, 0)
        elif padding == "same":
            if stride != (1, 1):
                raise ValueError("padding='same' is not supported for strided convolutions")
            kh, kw = weight._impl.shape[-2], weight._impl.shape[-1]
            total = (dilation[0] * (kh - 1), dilation[1] * (kw - 1))
            # An odd total pads one more on the right (as PyTorch): pad that much on both sides and
            # drop the extra first output row/column.
            padding = ((total[0] + 1) // 2, (total[1] + 1) // 2)
            crop = (total[0] % 2, total[1] % 2)
        else:
            raise ValueError(f"Invalid padding string '{padding}', should be one of ['valid', 'same']")
    padding = _pair(padding)
    out = _record("ConvolutionBackward0", _conv2d_back, (x, weight, bias),
                  _C.conv2d(x._impl, weight._impl, _impl(bias), stride, padding, dilation, groups),
                  {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}, (x, weight))
    for dim, c in ((-2, crop[0]), (-1, crop[1])):
        if c:
            out = S.narrow(out, dim, 1, out._impl.shape[dim] - 1)
    return out


def conv1d(Tensor x, Tensor weight, bias=None, stride=1, padding=0, dilation=1, int groups=1):
    """1-D convolution, as a 2-D convolution over a height of 1."""
    s = stride if isinstance(stride, int) else stride[0]
    p = padding if isinstance(padding, (int, str)) else padding[0]
    d = dilation if isinstance(dilation, int) else dilation[0]
    batched = x._impl.ndim == 3
    x4 = S.unsqueeze(x, -2)
    w4 = S.unsqueeze(weight, -2)
    out = conv2d(x4, w4, bias, (1, s), p if isinstance(p, str) else (0, p), (1, d), groups)
    return S.squeeze(out, -2)


def _conv_transpose2d_back(Node n, g):
    # y = conv2d's input gradient taken at x (bilinear in x and w): dx = conv2d(g, w), dw = the
    # weight gradient of a convolution of g that output x; each records its adjoint in turn.
    x, w = n.saved_tensors
    args = (n.stride, n.padding, n.dilation, n.groups)
    gx = gw = None
    if n.needs_input_grad[0]:
        gx = conv2d(g, w, None, n.stride, n.padding, n.dilation, n.groups)
    if n.needs_input_grad[1]:
        def weight_grad(go, inp):
            return _C.conv2d_backward(go._impl, inp._impl, w._impl, *args, (False, True, False))[1]

        def adjoint(ggw):       # gw is bilinear in (x as the output gradient, g as the input)
            return (conv2d(g, ggw, None, n.stride, n.padding, n.dilation, n.groups),
                    conv_transpose2d(x, ggw, None, n.stride, n.padding, n.output_padding, n.groups, n.dilation))
        gw = adjoint_result("ConvolutionBackwardBackward", weight_grad(x, g), (x, g), adjoint)
    return gx, gw


def conv_transpose2d(Tensor x, Tensor weight, bias=None, stride=1, padding=0, output_padding=0, int groups=1,
                     dilation=1):
    """2-D transposed convolution ("deconvolution") over (N, C_in, H, W) or (C_in, H, W): the
    gradient of conv2d with respect to its input. weight: (C_in, C_out / groups, kH, kW)."""
    stride, padding, output_padding, dilation = _pair(stride), _pair(padding), _pair(output_padding), _pair(dilation)
    cdef int nd = x._impl.ndim
    if nd not in (3, 4) or weight._impl.ndim != 4:
        raise RuntimeError(f"conv_transpose2d: expected a 3-D or 4-D input and a 4-D weight, got input "
                           f"{list(x._impl.shape)} and weight {list(weight._impl.shape)}")
    cin, cout_g, kh, kw = weight._impl.shape
    if x._impl.shape[-3] != cin or cin % groups:
        raise RuntimeError(f"conv_transpose2d: input {list(x._impl.shape)} has {x._impl.shape[-3]} channels; weight "
                           f"{list(weight._impl.shape)} expects {cin}, divisible by groups={groups}")
    for i in range(2):
        if not output_padding[i] < max(stride[i], dilation[i]):
            raise ValueError(f"conv_transpose2d: output padding {output_padding} must be smaller than either stride "
                             f"{stride} or dilation {dilation}")
    size = [(x._impl.shape[-2 + i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * ((kh, kw)[i] - 1)
            + output_padding[i] + 1 for i in range(2)]
    if size[0] <= 0 or size[1] <= 0:
        raise RuntimeError(f"conv_transpose2d: the output size {size} is not positive for input "
                           f"{list(x._impl.shape)} and weight {list(weight._impl.shape)}")
    shape = ([x._impl.shape[0]] if nd == 4 else []) + [cout_g * groups] + size
    like = _C.empty(shape, x._impl.dtype_code, x._impl.device)   # only its shape is read
    y = _C.conv2d_backward(x._impl, like, weight._impl, stride, padding, dilation, groups, (True, False, False))[0]
    out = _record("ConvolutionBackward0", _conv_transpose2d_back, (x, weight), y,
                  {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups,
                   "output_padding": output_padding}, (x, weight))
    if bias is not None:
        out = out + S.reshape(bias, -1, 1, 1)
    return out


def conv_transpose1d(Tensor x, Tensor weight, bias=None, stride=1, padding=0, output_padding=0, int groups=1,
                     dilation=1):
    """1-D transposed convolution, as a 2-D one over a height of 1."""
    one = lambda v: (1, v if isinstance(v, int) else v[0])  # noqa: E731
    out = conv_transpose2d(S.unsqueeze(x, -2), S.unsqueeze(weight, -2), bias, one(stride),
                           (0, padding if isinstance(padding, int) else padding[0]),
                           (0, output_padding if isinstance(output_padding, int) else output_padding[0]), groups,
                           one(dilation))
    return S.squeeze(out, -2)


def _max_pool_back(Node n, g):
    # linear in g: its adjoint picks gg at the argmax positions (a gather), so double backward works
    idx, = n.saved_tensors

    def adjoint(gg):
        lead = list(idx._impl.shape[:-2])
        picked = gather(S.reshape(gg, *(lead + [-1])), -1, S.reshape(idx, *(lead + [-1])))
        return (S.reshape(picked, *idx._impl.shape),)
    return (adjoint_result("MaxPool2DWithIndicesBackwardBackward",
                           _C.max_pool2d_backward(g._impl, idx._impl, list(n.in_shape)), (g,), adjoint),)


def max_pool2d(Tensor x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    k = _pair(kernel_size)
    s = None if stride is None or stride == [] else _pair(stride)
    out, idx = _C.max_pool2d(x._impl, k, s, _pair(padding), _pair(dilation), ceil_mode)
    indices = wrap(idx)
    y = _record("MaxPool2DWithIndicesBackward0", _max_pool_back, (x,), out, {"in_shape": x._impl.shape}, (indices,))
    return (y, indices) if return_indices else y


def _avg_pool_back(Node n, g):
    # avg_pool2d is linear: the adjoint of its backward is avg_pool2d itself
    return (adjoint_result("AvgPool2DBackwardBackward", _C.avg_pool2d_backward(g._impl, list(n.in_shape), *n.args),
                           (g,), lambda gg: (avg_pool2d(gg, *n.args),)),)


def avg_pool2d(Tensor x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    k = _pair(kernel_size)
    s = None if stride is None or stride == [] else _pair(stride)
    args = (k, s, _pair(padding), ceil_mode, count_include_pad, divisor_override)
    return _record("AvgPool2DBackward0", _avg_pool_back, (x,), _C.avg_pool2d(x._impl, *args),
                   {"in_shape": x._impl.shape, "args": args})


def _adaptive_avg_back(Node n, g):
    size = list(g._impl.shape[-2:])
    return (adjoint_result("AdaptiveAvgPool2DBackwardBackward",
                           _C.adaptive_avg_pool2d_backward(g._impl, list(n.in_shape)), (g,),
                           lambda gg: (adaptive_avg_pool2d(gg, size),)),)


def adaptive_avg_pool2d(Tensor x, output_size):
    size = list(_pair(output_size))
    shape = x._impl.shape
    size = [shape[-2 + i] if v is None else v for i, v in enumerate(size)]
    return _record("AdaptiveAvgPool2DBackward0", _adaptive_avg_back, (x,), _C.adaptive_avg_pool2d(x._impl, size),
                   {"in_shape": shape})


# ------------------------------------------------------------------ embedding, dropout

def _embedding_back(Node n, g):
    idx, = n.saved_tensors
    pad = n.padding_idx
    if n.scale_grad_by_freq:         # each row's gradient divided by how often the batch uses it
        flat = S.reshape(idx, -1)
        counts = wrap(_C.full([n.num_weights], 0.0, g._impl.dtype_code, g._impl.device))
        counts = index_put(counts, [flat], wrap(_C.full([flat._impl.shape[0]], 1.0, g._impl.dtype_code,
                                                        g._impl.device)), accumulate=True)
        g = g / S.unsqueeze(S.reshape(counts.index_select(0, flat), *idx._impl.shape), -1)

    def adjoint(gg):                 # rows of gg at the indices; the padding row got no gradient
        rows = embedding(idx, gg)
        return rows if pad is None else rows * S.unsqueeze(idx != pad, -1)
    return (adjoint_result("EmbeddingBackwardBackward", _C.embedding_backward(g._impl, idx._impl, n.num_weights, pad),
                           (g,), lambda gg: (adjoint(gg),)), None)


def embedding(Tensor input, Tensor weight, padding_idx=None, bint scale_grad_by_freq=False):
    """Looks up rows of ``weight`` (V, D) at ``input`` indices -> (*input.shape, D)."""
    return _record("EmbeddingBackward0", _embedding_back, (weight, None), _C.embedding(weight._impl, input._impl),
                   {"num_weights": weight._impl.shape[0], "padding_idx": padding_idx,
                    "scale_grad_by_freq": scale_grad_by_freq}, (input,))


def _dropout_grad(Tensor g, Tensor mask, double p):
    return adjoint_result("NativeDropoutBackwardBackward", _C.dropout_backward(g._impl, mask._impl, p), (g,),
                          lambda gg: (_dropout_grad(gg, mask, p),))


def _dropout_back(Node n, g):
    mask, = n.saved_tensors
    return (_dropout_grad(g, mask, n.p),)


def dropout(Tensor x, double p=0.5, bint training=True, bint inplace=False, generator=None):
    """Zeroes elements with probability p and scales the rest by 1/(1-p) during training."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return x
    y, mask = _C.dropout(x._impl, p, True, None if generator is None else generator._impl)
    out = _record("NativeDropoutBackward0", _dropout_back, (x,), y, {"p": p}, (wrap(mask),))
    if inplace:
        x._impl.copy_(out._impl)
        return x
    return out


# ------------------------------------------------------------------ losses with fused kernels

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
        return (_ce_grad_composite(g, x, t, w, n.ignore_index, n.reduction, n.smoothing), None)
    gx = _C.cross_entropy_backward(g._impl, x._impl, t._impl, _impl(w), n.reduction, n.ignore_index, n.smoothing)
    return (fused_result("CrossEntropyBackwardBackward", gx, (g,)), None)


def cross_entropy(Tensor input, Tensor target, weight=None, ignore_index=-100, reduction="mean",
                  label_smoothing=0.0):
    """Cross entropy between logits ``input`` and class indices or class probabilities ``target``."""
    r = _reduction_code(reduction)
    if target.dtype.is_floating_point:
        return _cross_entropy_probs(input, target, weight, reduction, label_smoothing)
    return _record("CrossEntropyLossBackward0", _ce_back, (input, None),
                   _C.cross_entropy(input._impl, target._impl, _impl(weight), r, ignore_index, label_smoothing),
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
    return loss.sum() / (loss.numel() if loss.numel() else 1)
