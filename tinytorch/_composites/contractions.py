"""Tensor contractions and matrix products composed from matmul, views and sums (every device and
dtype, autograd): einsum, tensordot, dot, vdot, inner, outer, kron, mv, addmm, baddbmm, addbmm,
addmv, addr, chain_matmul."""
from __future__ import annotations

import math
import string
from typing import Sequence, Union

from tinytorch._tensor.tensor import Tensor

Number = Union[int, float, bool]

__all__ = ["einsum", "tensordot", "dot", "vdot", "inner", "outer", "ger", "kron", "addmm", "baddbmm", "mv", "addmv", "addr", "addbmm", "chain_matmul"]


def _parse(equation: str, operands: Sequence[Tensor]) -> tuple[list[str], str]:
    """Subscripts per operand and for the output, with '...' expanded to fresh letters."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise ValueError(f"einsum(): {len(terms)} operand subscripts in {equation!r} but {len(operands)} operands")
    used = set(c for c in eq if c.isalpha())
    fresh = [c for c in string.ascii_letters if c not in used]
    n_ell = max((t.dim() - len(s.replace("...", "")) for s, t in zip(terms, operands) if "..." in s), default=0)
    ell = "".join(fresh[:n_ell])
    out_terms = []
    for s, t in zip(terms, operands):
        if "..." in s:
            k = t.dim() - len(s.replace("...", ""))
            s = s.replace("...", ell[n_ell - k:] if k else "")
        if not all(c.isalpha() for c in s):
            raise ValueError(f"einsum(): invalid subscript in {equation!r}: letters and '...' only")
        if len(s) != t.dim():
            raise ValueError(f"einsum(): the subscript {s!r} has {len(s)} letters for an operand of {t.dim()} dims "
                             f"{list(t.shape)}")
        out_terms.append(s)
    if arrow:
        out = rhs.replace("...", ell)
        for c in out:
            if not any(c in s for s in out_terms):
                raise ValueError(f"einsum(): output subscript {c!r} appears in no operand of {equation!r}")
    else:   # implicit output: the ellipsis dims, then letters seen exactly once, sorted
        counts = {}
        for s in out_terms:
            for c in s:
                counts[c] = counts.get(c, 0) + 1
        out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
    return out_terms, out


def _diagonal(t: Tensor, s: str, k: int = 0) -> tuple[Tensor, str]:
    """Repeated letters within one operand ('ii', operand k) take the diagonal; their sizes must match."""
    for c in set(s):
        sizes = [n for ch, n in zip(s, t.shape) if ch == c]
        for n in sizes[1:]:
            if n != sizes[0]:
                raise RuntimeError(f"einsum(): subscript {c} is repeated for operand {k} but the sizes don't match, "
                                   f"{n} != {sizes[0]}")
    while len(set(s)) != len(s):
        c = next(c for c in s if s.count(c) > 1)
        i = s.index(c)
        j = s.index(c, i + 1)
        t = t.diagonal(0, i, j)                  # the diagonal becomes the last dim
        s = s[:i] + s[i + 1:j] + s[j + 1:] + c
    return t, s


def _sum_out(t: Tensor, s: str, keep: str) -> tuple[Tensor, str]:
    """Sums the letters of s not in keep."""
    drop = [i for i, c in enumerate(s) if c not in keep]
    if drop:
        t = t.sum(drop)
        s = "".join(c for c in s if c in keep)
    return t, s


def _contract(a: Tensor, sa: str, b: Tensor, sb: str, keep: str) -> tuple[Tensor, str]:
    """a (sa) x b (sb) -> the letters in keep, by one batched matmul: batch letters (in both and
    kept), contracted (in both, not kept), left-only and right-only."""
    batch = [c for c in sa if c in sb and c in keep]
    contr = [c for c in sa if c in sb and c not in keep]
    left = [c for c in sa if c not in sb]
    right = [c for c in sb if c not in sa]
    size = {}
    for c, n in list(zip(sa, a.shape)) + list(zip(sb, b.shape)):
        if c in size and size[c] != n and size[c] != 1 and n != 1:
            raise RuntimeError(f"einsum(): subscript {c!r} has size {size[c]} in one operand and {n} in another")
        size[c] = max(size.get(c, 1), n)
    a = a.permute(*[sa.index(c) for c in batch + left + contr])
    b = b.permute(*[sb.index(c) for c in batch + contr + right])
    bs = [size[c] for c in batch]
    prod = lambda cs: math.prod(size[c] for c in cs)  # noqa: E731
    a = a.expand(*bs, *[size[c] for c in left + contr]).reshape(*bs, prod(left), prod(contr))
    b = b.expand(*bs, *[size[c] for c in contr + right]).reshape(*bs, prod(contr), prod(right))
    out = (a @ b).reshape(*bs, *[size[c] for c in left], *[size[c] for c in right])
    return out, "".join(batch + left + right)


def einsum(equation: str, *operands) -> Tensor:
    """Sums the product of the elements of the operands along dimensions specified using a notation
    based on the Einstein summation convention (``'...'`` for broadcast dims, implicit or explicit
    output). Operands are contracted left to right, each pair by one batched matmul.

    Args:
        equation (str): the subscripts for the Einstein summation.
        operands (Tensor...): the tensors to compute the Einstein summation of."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise ValueError("einsum(): must provide at least one operand")
    terms, out = _parse(equation, operands)
    pairs = [_diagonal(t, s, k) for k, (t, s) in enumerate(zip(operands, terms))]
    # letters still needed after operand k: the output's and those of later operands
    acc, sacc = pairs[0]
    for k in range(1, len(pairs)):
        later = out + "".join(s for _, s in pairs[k + 1:])
        b, sb = pairs[k]
        acc, sacc = _sum_out(acc, sacc, later + sb)
        b, sb = _sum_out(b, sb, later + sacc)
        acc, sacc = _contract(acc, sacc, b, sb, later)
    acc, sacc = _sum_out(acc, sacc, out)
    if sacc != out:
        acc = acc.permute(*[sacc.index(c) for c in out])
    return acc


def tensordot(a: Tensor, b: Tensor, dims: Union[int, Sequence] = 2) -> Tensor:
    """Contracts the last ``dims`` dims of a with the first of b, or the given lists of dims.

    Args:
        a (Tensor): left tensor to contract.
        b (Tensor): right tensor to contract.
        dims (int or tuple of two lists of ints): number of dimensions to contract or explicit lists of
            dimensions for :attr:`a` and :attr:`b` respectively. Default: ``2``"""
    if isinstance(dims, int):
        da, db = list(range(a.dim() - dims, a.dim())), list(range(dims))
    else:
        da, db = ([dims[0]] if isinstance(dims[0], int) else list(dims[0])), \
            ([dims[1]] if isinstance(dims[1], int) else list(dims[1]))
    if len(da) != len(db):
        raise RuntimeError(f"tensordot: both dims lists should have the same length, got {da} and {db}")
    letters = iter(string.ascii_letters)
    sa = [next(letters) for _ in range(a.dim())]
    sb = [next(letters) for _ in range(b.dim())]
    for i, j in zip(da, db):
        sb[j % b.dim()] = sa[i % a.dim()]
    contracted = {sa[i % a.dim()] for i in da}
    out = "".join(c for c in sa if c not in contracted) + "".join(c for c in sb if c not in contracted)
    return einsum(f"{''.join(sa)},{''.join(sb)}->{out}", a, b)


def _check_1d(name: str, a: Tensor, b: Tensor) -> None:
    if a.dim() != 1 or b.dim() != 1 or a.shape[0] != b.shape[0]:
        raise RuntimeError(f"{name}: expected 1-D tensors of the same size, got {list(a.shape)} and {list(b.shape)}")


def dot(input: Tensor, other: Tensor) -> Tensor:
    """The dot product of two 1-D tensors.

    Args:
        input (Tensor): the first tensor to be multiplied.
        other (Tensor): the second tensor to be multiplied."""
    _check_1d("dot", input, other)
    return (input * other).sum()


vdot = dot   # (no complex dtypes: vdot is dot)


def inner(input: Tensor, other: Tensor) -> Tensor:
    """Sums the products over the last dims of both (a scalar operand multiplies).

    Args:
        input (Tensor): the first tensor to be multiplied.
        other (Tensor): the second tensor to be multiplied."""
    if input.dim() == 0 or other.dim() == 0:
        return input * other
    return tensordot(input, other, ([-1], [-1]))


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """The outer product of two 1-D tensors.

    Args:
        input (Tensor): the input tensor.
        vec2 (Tensor): 1-D input vector."""
    return input.reshape(-1, 1) * vec2.reshape(1, -1)


ger = outer


def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product: a block tensor of input[i] * other.

    Args:
        input (Tensor): the first tensor to be multiplied.
        other (Tensor): the second tensor to be multiplied."""
    n = max(input.dim(), other.dim())
    a = input.reshape(*([1] * (n - input.dim())), *input.shape)
    b = other.reshape(*([1] * (n - other.dim())), *other.shape)
    inter = []
    for k in range(n):
        inter += [a.shape[k], 1]
    prod = a.reshape(*inter) * b.reshape(*[v for k in range(n) for v in (1, b.shape[k])])
    return prod.reshape(*[a.shape[k] * b.shape[k] for k in range(n)])


def _scaled(t: Tensor, s) -> Tensor:
    return t if s == 1 else t * s


def _beta_input_plus_alpha(input: Tensor, prod: Tensor, beta, alpha) -> Tensor:
    """``beta * input + alpha * prod``, the add<product> ops' result: with beta = 0 input is ignored
    (NaN included), as PyTorch."""
    prod = _scaled(prod, alpha)
    return prod if beta == 0 else _scaled(input, beta) + prod


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    r"""``beta * input + alpha * (mat1 @ mat2)``; with beta = 0 input is ignored (NaN included).

    Args:
        input (Tensor): matrix to be added.
        mat1 (Tensor): the first matrix to be matrix multiplied.
        mat2 (Tensor): the second matrix to be matrix multiplied.

    Keyword args:
        beta (Number, optional): multiplier for :attr:`input` (:math:`\beta`). Default: ``1``
        alpha (Number, optional): multiplier for :math:`mat1 @ mat2` (:math:`\alpha`). Default: ``1``"""
    if mat1.dim() != 2 or mat2.dim() != 2:
        raise RuntimeError(f"addmm: mat1 and mat2 must be matrices, got {mat1.dim()}-D and {mat2.dim()}-D")
    return _beta_input_plus_alpha(input, mat1.mm(mat2), beta, alpha)


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    r"""``beta * input + alpha * (batch1 @ batch2)`` for batches of matrices.

    Args:
        input (Tensor): the tensor to be added.
        batch1 (Tensor): the first batch of matrices to be multiplied.
        batch2 (Tensor): the second batch of matrices to be multiplied.

    Keyword args:
        beta (Number, optional): multiplier for :attr:`input` (:math:`\beta`). Default: ``1``
        alpha (Number, optional): multiplier for :math:`\text{batch1} \mathbin{@} \text{batch2}`
            (:math:`\alpha`). Default: ``1``"""
    if batch1.dim() != 3 or batch2.dim() != 3:
        raise RuntimeError(f"baddbmm: batch1 must be a 3D tensor, got {batch1.dim()}-D and {batch2.dim()}-D")
    return _beta_input_plus_alpha(input, batch1.bmm(batch2), beta, alpha)


def mv(input: Tensor, vec: Tensor) -> Tensor:
    """Matrix-vector product.

    Args:
        input (Tensor): the first tensor to be multiplied.
        vec (Tensor): vector to be multiplied."""
    if input.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.dim()}, {vec.dim()}")
    return input.matmul(vec)


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta=1, alpha=1) -> Tensor:
    r"""``beta * input + alpha * (mat @ vec)``.

    Args:
        input (Tensor): vector to be added.
        mat (Tensor): matrix to be matrix multiplied.
        vec (Tensor): vector to be matrix multiplied.

    Keyword args:
        beta (Number, optional): multiplier for :attr:`input` (:math:`\beta`). Default: ``1``
        alpha (Number, optional): multiplier for :math:`mat @ vec` (:math:`\alpha`). Default: ``1``"""
    return _beta_input_plus_alpha(input, mv(mat, vec), beta, alpha)


def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta=1, alpha=1) -> Tensor:
    r"""``beta * input + alpha * outer(vec1, vec2)``.

    Args:
        input (Tensor): matrix to be added.
        vec1 (Tensor): the first vector of the outer product.
        vec2 (Tensor): the second vector of the outer product.

    Keyword args:
        beta (Number, optional): multiplier for :attr:`input` (:math:`\beta`). Default: ``1``
        alpha (Number, optional): multiplier for :math:`\text{vec1} \otimes \text{vec2}`
            (:math:`\alpha`). Default: ``1``"""
    if vec1.dim() != 1 or vec2.dim() != 1:
        raise RuntimeError(f"addr: Expected 1-D arguments for vec1 and vec2, got {vec1.dim()}-D and {vec2.dim()}-D")
    return _beta_input_plus_alpha(input, vec1.unsqueeze(1) * vec2.unsqueeze(0), beta, alpha)


def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Number = 1, alpha: Number = 1) -> Tensor:
    """Performs a batch matrix-matrix product of ``batch1`` and ``batch2``, reduced over the batch, and
    adds ``input``: ``beta * input + alpha * sum_i(batch1[i] @ batch2[i])``.

    Args:
        input (Tensor): matrix to be added.
        batch1 (Tensor): the first batch of matrices to be multiplied.
        batch2 (Tensor): the second batch of matrices to be multiplied.
        beta (Number, optional): multiplier for ``input``.
        alpha (Number, optional): multiplier for ``batch1 @ batch2``."""
    if batch1.dim() != 3 or batch2.dim() != 3:
        raise RuntimeError(f"addbmm: batch1 and batch2 must be 3D tensors, got {batch1.dim()}D and {batch2.dim()}D")
    return _beta_input_plus_alpha(input, (batch1 @ batch2).sum(0), beta, alpha)


def chain_matmul(*matrices: Tensor) -> Tensor:
    """Returns the matrix product of the N 2-D tensors (deprecated in PyTorch for
    :func:`tinytorch.linalg.multi_dot`).

    Args:
        matrices (Tensors...): a sequence of 2 or more 2-D tensors whose product is to be determined."""
    if len(matrices) == 0:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for i, m in enumerate(matrices):
        if m.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {m.dim()}, expected 2 instead (chain_matmul, argument {i}).")
    if len(matrices) == 1:
        return matrices[0].clone()
    from tinytorch import linalg
    return linalg.multi_dot(list(matrices))
