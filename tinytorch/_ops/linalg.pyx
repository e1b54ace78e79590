# cython: language_level=3
"""Matrix products (matmul, mm, bmm) and linear, with their derivatives: composite formulas, so
double backward works; linear's first backward is one fused kernel when not recording."""
from tinytorch import _C
from tinytorch._core.tensor_base cimport TensorBase as Tensor, wrap
from tinytorch._core.graph cimport Node, is_grad_enabled_c
from tinytorch._ops._common cimport record as _record, impl_or_none as _impl, is_complex_operand, complex_op
from tinytorch._ops import shape as S


cdef object _wrap_opt(object impl):
    return None if impl is None else wrap(impl)


def _matmul_back(Node n, g):
    a, b = n.saved_tensors
    a2 = S.unsqueeze(a, 0) if a.dim() == 1 else a
    b2 = S.unsqueeze(b, -1) if b.dim() == 1 else b
    g2 = g
    if a.dim() == 1 and b.dim() == 1:     # a dot product: g is 0-dim
        g2 = S.reshape(g2, 1, 1)
    elif a.dim() == 1:
        g2 = S.unsqueeze(g2, -2)
    elif b.dim() == 1:
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


def matmul(Tensor input, Tensor other):
    """Matrix product with NumPy/PyTorch semantics (1-D, 2-D, batched with broadcasting).

    Args:
        input (Tensor): the first tensor to be multiplied.
        other (Tensor): the second tensor to be multiplied."""
    try:
        impl = _C.matmul(input._impl, other._impl)
    except NotImplementedError:
        if is_complex_operand(input) or is_complex_operand(other):
            return complex_op("matmul", (input, other))
        raise
    return _record("MmBackward0" if input._impl.ndim == 2 and other._impl.ndim == 2 else "MatmulBackward0",
                   _matmul_back, (input, other), impl, {}, (input, other))


def mm(Tensor input, Tensor mat2):
    """Performs a matrix multiplication of the matrices :attr:`input` and :attr:`mat2`.

    Args:
        input (Tensor): the first tensor to be multiplied.
        mat2 (Tensor): the second matrix to be matrix multiplied."""
    if input._impl.ndim != 2 or mat2._impl.ndim != 2:
        raise RuntimeError(f"mm: expected 2-D tensors, got {input._impl.ndim}-D and {mat2._impl.ndim}-D")
    return matmul(input, mat2)


def bmm(Tensor input, Tensor mat2):
    """Performs a batch matrix-matrix product of matrices stored in :attr:`input` and :attr:`mat2`.

    Args:
        input (Tensor): the first tensor to be multiplied.
        mat2 (Tensor): the second batch of matrices to be multiplied."""
    if input._impl.ndim != 3 or mat2._impl.ndim != 3:
        raise RuntimeError(f"bmm: expected 3-D tensors, got {input._impl.ndim}-D and {mat2._impl.ndim}-D")
    return _record("BmmBackward0", _matmul_back, (input, mat2), _C.bmm(input._impl, mat2._impl), {}, (input, mat2))


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
        # batch dims flattened: (N, out)^T @ (N, in); a (batch, features) input already is. N is
        # spelled out, as -1 is ambiguous when out == 0
        rows = 1
        for size in g._impl.shape[:-1]:
            rows *= size
        g2 = g if nd == 2 else S.reshape(g, rows, g._impl.shape[-1] if nd else 1)
        x2 = x if x._impl.ndim == 2 else S.reshape(x, rows, x._impl.shape[-1])
        gw = matmul(S.t(g2), x2)
    if needs[2]:
        gb = g.sum(0) if nd == 2 else g.sum(list(range(nd - 1))) if nd > 1 else g
    return (gx, gw, gb)


def linear(Tensor input, Tensor weight, bias=None):
    r"""Applies a linear transformation to the incoming data: :math:`y = xA^T + b`.

    y = input @ weight.T + bias

    Args:
        input (Tensor): input of shape :math:`(*, \text{in\_features})`.
        weight (Tensor): weight of shape :math:`(\text{out\_features}, \text{in\_features})`.
        bias (Tensor, optional): optional bias of shape :math:`(\text{out\_features})`. Default:
            ``None``"""
    return _record("AddmmBackward0", _linear_back, (input, weight, bias),
                   _C.linear(input._impl, weight._impl, _impl(bias)), {}, (input, weight))
