# cython: language_level=3
"""2-D pooling (max, average, adaptive average), with their derivatives: each backward kernel is
linear in the gradient and records its adjoint, so double backward works."""
from tinytorch import _C
from tinytorch._core.tensor_base cimport TensorBase as Tensor, wrap
from tinytorch._core.graph cimport Node
from tinytorch._ops._common cimport record as _record, adjoint_result, pair as _pair
from tinytorch._ops import shape as S
from tinytorch._ops.index import gather


def _max_pool_back(Node n, g):
    # linear in g: its adjoint picks gg at the argmax positions (a gather), so double backward works
    idx, = n.saved_tensors

    def adjoint(gg):
        lead = list(idx._impl.shape[:-2])
        picked = gather(S.reshape(gg, *(lead + [-1])), -1, S.reshape(idx, *(lead + [-1])))
        return (S.reshape(picked, *idx._impl.shape),)
    return (adjoint_result("MaxPool2DWithIndicesBackwardBackward",
                           _C.max_pool2d_backward(g._impl, idx._impl, list(n.in_shape)), (g,), adjoint),)


cdef tuple _stride(object stride):
    """None (the kernel size) or a checked pair: PyTorch rejects zero and negative strides."""
    if stride is None or stride == [] or stride == ():
        return None
    s = _pair(stride)
    if any(v == 0 for v in s):
        raise RuntimeError("stride should not be zero")
    if any(v < 0 for v in s):
        raise RuntimeError(f"stride should be greater than zero, but got dH: {s[0]} dW: {s[-1]}")
    return s


def max_pool2d(Tensor input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """Applies a 2D max pooling over an input signal composed of several input planes.

    Args:
        input (Tensor): the input tensor.
        kernel_size (int or tuple): the size of the window (or of the convolving kernel).
        stride (int or tuple, optional): the stride of the window (or of the convolution). Default:
            ``None``
        padding (int or tuple, optional): implicit padding added on the sides of the input. Default:
            ``0``
        dilation (int or tuple, optional): spacing between kernel elements. Default: ``1``
        ceil_mode (bool): when True, will use `ceil` instead of `floor` to compute the output shape.
            Default: ``False``
        return_indices (bool): if ``True``, will return the max indices along with the outputs. Default:
            ``False``"""
    k = _pair(kernel_size)
    s = _stride(stride)
    out, idx = _C.max_pool2d(input._impl, k, s, _pair(padding), _pair(dilation), ceil_mode)
    indices = wrap(idx)
    y = _record("MaxPool2DWithIndicesBackward0", _max_pool_back, (input,), out,
                {"in_shape": input._impl.shape}, (indices,))
    return (y, indices) if return_indices else y


def _avg_pool_back(Node n, g):
    # avg_pool2d is linear: the adjoint of its backward is avg_pool2d itself
    return (adjoint_result("AvgPool2DBackwardBackward", _C.avg_pool2d_backward(g._impl, list(n.in_shape), *n.args),
                           (g,), lambda gg: (avg_pool2d(gg, *n.args),)),)


def avg_pool2d(Tensor input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Applies a 2D average pooling over an input signal composed of several input planes.

    Args:
        input (Tensor): the input tensor.
        kernel_size (int or tuple): the size of the window (or of the convolving kernel).
        stride (int or tuple, optional): the stride of the window (or of the convolution). Default:
            ``None``
        padding (int or tuple, optional): implicit padding added on the sides of the input. Default:
            ``0``
        ceil_mode (bool): when True, will use `ceil` instead of `floor` to compute the output shape.
            Default: ``False``
        count_include_pad (bool): when True, will include the zero-padding in the averaging calculation.
            Default: ``True``
        divisor_override (int, optional): if specified, it will be used as divisor, otherwise size of
            the pooling region will be used. Default: ``None``"""
    k = _pair(kernel_size)
    s = _stride(stride)
    args = (k, s, _pair(padding), ceil_mode, count_include_pad, divisor_override)
    return _record("AvgPool2DBackward0", _avg_pool_back, (input,), _C.avg_pool2d(input._impl, *args),
                   {"in_shape": input._impl.shape, "args": args})


def _adaptive_avg_back(Node n, g):
    size = list(g._impl.shape[-2:])
    return (adjoint_result("AdaptiveAvgPool2DBackwardBackward",
                           _C.adaptive_avg_pool2d_backward(g._impl, list(n.in_shape)), (g,),
                           lambda gg: (adaptive_avg_pool2d(gg, size),)),)


def adaptive_avg_pool2d(Tensor input, output_size):
    """Applies a 2D adaptive average pooling over an input signal composed of several input planes.

    Args:
        input (Tensor): the input tensor.
        output_size (int or tuple): the target output size."""
    size = list(_pair(output_size))
    shape = input._impl.shape
    size = [shape[-2 + i] if v is None else v for i, v in enumerate(size)]
    return _record("AdaptiveAvgPool2DBackward0", _adaptive_avg_back, (input,),
                   _C.adaptive_avg_pool2d(input._impl, size), {"in_shape": shape})
