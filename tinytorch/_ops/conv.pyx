# cython: language_level=3
"""Convolutions (conv1d/conv2d and their transposes), with their derivatives: conv2d's backward is
its two kernels, each recording its adjoint, so double backward works."""
from tinytorch import _C
from tinytorch._core.tensor_base cimport TensorBase as Tensor
from tinytorch._core.graph cimport Node
from tinytorch._ops._common cimport record as _record, fused_result, adjoint_result, impl_or_none as _impl, \
    pair as _pair
from tinytorch._ops import shape as S


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


def conv2d(Tensor input, Tensor weight, bias=None, stride=1, padding=0, dilation=1, int groups=1):
    r"""Applies a 2D convolution over an input image composed of several input planes.

    2-D convolution over an input of shape (N, C, H, W) or (C, H, W).

    Args:
        input (Tensor): input tensor of shape :math:`(\text{minibatch} , \text{in\_channels} , iH ,
            iW)`.
        weight (Tensor): filters of shape :math:`(\text{out\_channels} ,
            \frac{\text{in\_channels}}{\text{groups}} , kH , kW)`.
        bias (Tensor, optional): optional bias of shape :math:`(\text{out\_channels})`. Default:
            ``None``
        stride (int or tuple, optional): the stride of the window (or of the convolution). Default:
            ``1``
        padding (int or tuple, optional): implicit padding added on the sides of the input. Default:
            ``0``
        dilation (int or tuple, optional): spacing between kernel elements. Default: ``1``
        groups (int, optional): number of blocked connections from input channels to output channels.
            Default: ``1``"""
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
    out = _record("ConvolutionBackward0", _conv2d_back, (input, weight, bias),
                  _C.conv2d(input._impl, weight._impl, _impl(bias), stride, padding, dilation, groups),
                  {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}, (input, weight))
    for dim, c in ((-2, crop[0]), (-1, crop[1])):
        if c:
            out = S.narrow(out, dim, 1, out._impl.shape[dim] - 1)
    return out


def conv1d(Tensor input, Tensor weight, bias=None, stride=1, padding=0, dilation=1, int groups=1):
    r"""Applies a 1D convolution over an input signal composed of several input planes.

    1-D convolution, as a 2-D convolution over a height of 1.

    Args:
        input (Tensor): input tensor of shape :math:`(\text{minibatch} , \text{in\_channels} , iW)`.
        weight (Tensor): filters of shape :math:`(\text{out\_channels} ,
            \frac{\text{in\_channels}}{\text{groups}} , kW)`.
        bias (Tensor, optional): optional bias of shape :math:`(\text{out\_channels})`. Default:
            ``None``
        stride (int or tuple, optional): the stride of the window (or of the convolution). Default:
            ``1``
        padding (int or tuple, optional): implicit padding added on the sides of the input. Default:
            ``0``
        dilation (int or tuple, optional): spacing between kernel elements. Default: ``1``
        groups (int, optional): number of blocked connections from input channels to output channels.
            Default: ``1``"""
    s = stride if isinstance(stride, int) else stride[0]
    p = padding if isinstance(padding, (int, str)) else padding[0]
    d = dilation if isinstance(dilation, int) else dilation[0]
    batched = input._impl.ndim == 3
    x4 = S.unsqueeze(input, -2)
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


def conv_transpose2d(Tensor input, Tensor weight, bias=None, stride=1, padding=0, output_padding=0, int groups=1,
                     dilation=1):
    r"""Applies a 2D transposed convolution operator over an input image composed of several input planes,
    sometimes also called "deconvolution".

    2-D transposed convolution ("deconvolution") over (N, C_in, H, W) or (C_in, H, W): the
    gradient of conv2d with respect to its input. weight: (C_in, C_out / groups, kH, kW).

    Args:
        input (Tensor): input tensor of shape :math:`(\text{minibatch} , \text{in\_channels} , iH ,
            iW)`.
        weight (Tensor): filters of shape :math:`(\text{in\_channels} ,
            \frac{\text{out\_channels}}{\text{groups}} , *kernel)`.
        bias (Tensor, optional): optional bias of shape :math:`(\text{out\_channels})`. Default:
            ``None``
        stride (int or tuple, optional): the stride of the window (or of the convolution). Default:
            ``1``
        padding (int or tuple, optional): implicit padding added on the sides of the input. Default:
            ``0``
        output_padding (int or tuple, optional): additional size added to one side of each dimension in
            the output shape. Default: ``0``
        groups (int, optional): number of blocked connections from input channels to output channels.
            Default: ``1``
        dilation (int or tuple, optional): spacing between kernel elements. Default: ``1``"""
    stride, padding, output_padding, dilation = _pair(stride), _pair(padding), _pair(output_padding), _pair(dilation)
    cdef int nd = input._impl.ndim
    if nd not in (3, 4) or weight._impl.ndim != 4:
        raise RuntimeError(f"conv_transpose2d: expected a 3-D or 4-D input and a 4-D weight, got input "
                           f"{list(input._impl.shape)} and weight {list(weight._impl.shape)}")
    cin, cout_g, kh, kw = weight._impl.shape
    if input._impl.shape[-3] != cin or cin % groups:
        raise RuntimeError(f"conv_transpose2d: input {list(input._impl.shape)} has {input._impl.shape[-3]} channels; "
                           f"weight {list(weight._impl.shape)} expects {cin}, divisible by groups={groups}")
    if input._impl.numel == 0 and (nd == 3 or input._impl.shape[0]) and cin:   # as conv2d's check
        raise RuntimeError(f"conv_transpose2d: Only zero batch or zero channel inputs are supported, but got input "
                           f"shape: {list(input._impl.shape)}")
    for i in range(2):
        if not output_padding[i] < max(stride[i], dilation[i]):
            raise ValueError(f"conv_transpose2d: output padding {output_padding} must be smaller than either stride "
                             f"{stride} or dilation {dilation}")
    size = [(input._impl.shape[-2 + i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * ((kh, kw)[i] - 1)
            + output_padding[i] + 1 for i in range(2)]
    if size[0] <= 0 or size[1] <= 0:
        raise RuntimeError(f"conv_transpose2d: the output size {size} is not positive for input "
                           f"{list(input._impl.shape)} and weight {list(weight._impl.shape)}")
    shape = ([input._impl.shape[0]] if nd == 4 else []) + [cout_g * groups] + size
    like = _C.empty(shape, input._impl.dtype_code, input._impl.device)   # only its shape is read
    y = _C.conv2d_backward(input._impl, like, weight._impl, stride, padding, dilation, groups, (True, False, False))[0]
    out = _record("ConvolutionBackward0", _conv_transpose2d_back, (input, weight), y,
                  {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups,
                   "output_padding": output_padding}, (input, weight))
    if bias is not None:
        out = out + S.reshape(bias, -1, 1, 1)
    return out


def conv_transpose1d(Tensor input, Tensor weight, bias=None, stride=1, padding=0, output_padding=0, int groups=1,
                     dilation=1):
    r"""Applies a 1D transposed convolution operator over an input signal composed of several input planes,
    sometimes also called "deconvolution".

    1-D transposed convolution, as a 2-D one over a height of 1.

    Args:
        input (Tensor): input tensor of shape :math:`(\text{minibatch} , \text{in\_channels} , iW)`.
        weight (Tensor): filters of shape :math:`(\text{in\_channels} ,
            \frac{\text{out\_channels}}{\text{groups}} , *kernel)`.
        bias (Tensor, optional): optional bias of shape :math:`(\text{out\_channels})`. Default:
            ``None``
        stride (int or tuple, optional): the stride of the window (or of the convolution). Default:
            ``1``
        padding (int or tuple, optional): implicit padding added on the sides of the input. Default:
            ``0``
        output_padding (int or tuple, optional): additional size added to one side of each dimension in
            the output shape. Default: ``0``
        groups (int, optional): number of blocked connections from input channels to output channels.
            Default: ``1``
        dilation (int or tuple, optional): spacing between kernel elements. Default: ``1``"""
    one = lambda v: (1, v if isinstance(v, int) else v[0])  # noqa: E731
    out = conv_transpose2d(S.unsqueeze(input, -2), S.unsqueeze(weight, -2), bias, one(stride),
                           (0, padding if isinstance(padding, int) else padding[0]),
                           (0, output_padding if isinstance(output_padding, int) else output_padding[0]), groups,
                           one(dilation))
    return S.squeeze(out, -2)
