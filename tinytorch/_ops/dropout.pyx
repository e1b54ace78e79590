# cython: language_level=3
"""Dropout, with its derivative (linear in the gradient: its adjoint is itself)."""
from tinytorch import _C
from tinytorch._core.tensor_base cimport TensorBase as Tensor, wrap
from tinytorch._core.graph cimport Node
from tinytorch._ops._common cimport record as _record, adjoint_result


def _dropout_grad(Tensor g, Tensor mask, double p):
    return adjoint_result("NativeDropoutBackwardBackward", _C.dropout_backward(g._impl, mask._impl, p), (g,),
                          lambda gg: (_dropout_grad(gg, mask, p),))


def _dropout_back(Node n, g):
    mask, = n.saved_tensors
    return (_dropout_grad(g, mask, n.p),)


def dropout(Tensor input, double p=0.5, bint training=True, bint inplace=False, generator=None):
    r"""During training, randomly zeroes some elements of the input tensor with probability :attr:`p`,
    scaling the others by :math:`\frac{1}{1-p}`.

    Zeroes elements with probability p and scales the rest by 1/(1-p) during training.

    Args:
        input (Tensor): the input tensor.
        p (float): probability of an element to be zeroed. Default: ``0.5``
        training (bool): apply dropout if is ``True``. Default: ``True``
        inplace (bool): if set to ``True``, will do this operation in-place. Default: ``False``
        generator (Generator, optional): a pseudorandom number generator for sampling. Default: ``None``"""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    y, mask = _C.dropout(input._impl, p, True, None if generator is None else generator._impl)
    out = _record("NativeDropoutBackward0", _dropout_back, (input,), y, {"p": p}, (wrap(mask),))
    if inplace:
        input._impl.copy_(out._impl)
        return input
    return out
