"""``F.grouped_mm``: the grouped matrix multiply of Mixture-of-Experts layers, composed from one
matmul per group (every device and float dtype; autograd records the parts). ``offs`` (int32,
increasing; ``offs[i]`` ends group i) cuts the jagged dimension of a 2-D operand:

* 2-D ``mat_a`` (M, K) x 3-D ``mat_b`` (G, K, N): rows of ``mat_a`` by group -> (M, N)
* 3-D ``mat_a`` (G, M, K) x 2-D ``mat_b`` (K, N): columns of ``mat_b`` by group -> (M, N)
* 2-D ``mat_a`` (M, K) x 2-D ``mat_b`` (K, N): the shared K by group -> (G, M, N)
* 3-D x 3-D: a batched matmul, without ``offs``

Rows/columns past ``offs[-1]`` give zeros (their K part is left out), as PyTorch's."""
from __future__ import annotations

from typing import Any, Optional

from tinytorch._core.dtype import int32
from tinytorch._ops.index import stack
from tinytorch._ops.shape import cat
from tinytorch._tensor.tensor import Tensor

__all__ = ["grouped_mm"]

_FLOATS = ("float32", "bfloat16", "float16", "float64")


def grouped_mm(mat_a: Tensor, mat_b: Tensor, *, offs: Optional[Tensor] = None, bias: Optional[Tensor] = None,
               out_dtype: Any = None) -> Tensor:
    """Computes a grouped matrix multiply that shares weight shapes across experts but allows jagged token
    counts per expert, which is common in Mixture-of-Experts (MoE) layers.

    Computes a grouped matrix multiply that shares weight shapes across experts but allows
    jagged token counts per expert.

    Args:
        mat_a (Tensor): Left operand. When 2D, its leading dimension is sliced into groups according to
            ``offs``. When 3D, its first dimension enumerates the groups directly.
        mat_b (Tensor): Right operand: 3D ``(num_groups, K, N)``, or 2D with its jagged dimension sliced
            by ``offs``.
        offs (Tensor, optional): 1D tensor of monotonically increasing ``int32`` offsets that delimit
            the jagged dimension of any 2D operand; ``offs[i]`` marks the end of group ``i``. Default:
            ``None``
        bias (Tensor, optional): not supported yet (as PyTorch's): raises NotImplementedError. Default:
            ``None``
        out_dtype (dtype, optional): the output dtype (must be ``mat_a``'s). Default: ``None``"""
    for name, m in (("mat_a", mat_a), ("mat_b", mat_b)):
        if m.dim() not in (2, 3):
            raise RuntimeError(f"{name} has to be 2 or 3d")
        if m.dtype.name not in _FLOATS:
            raise RuntimeError(f"Expected {name} to be Float32, BFloat16, Float16 or Float64 matrix, got {m.dtype}")
    if mat_a.dtype != mat_b.dtype:
        raise RuntimeError(f"grouped_mm: mat_a ({mat_a.dtype}) and mat_b ({mat_b.dtype}) must have the same dtype")
    if bias is not None:
        raise NotImplementedError("grouped_mm: bias is not supported yet (as PyTorch's); add it to the result")
    if out_dtype is not None and out_dtype != mat_a.dtype:
        raise RuntimeError("Grouped gemm output dtype must match `mat_a` dtype")
    a3, b3 = mat_a.dim() == 3, mat_b.dim() == 3
    if (offs is None) != (a3 and b3):
        raise RuntimeError("Have to provide offsets if there is a 2d matrix, or no offset if both matrices are 3d")
    if mat_a.shape[-1] != mat_b.shape[-2]:
        raise RuntimeError(f"contraction dimension of mat_a and mat_b must match, got mat_a {list(mat_a.shape)} "
                           f"and mat_b {list(mat_b.shape)}")
    if a3 and b3:
        if mat_a.shape[0] != mat_b.shape[0]:
            raise RuntimeError(f"grouped_mm: mat_a and mat_b must have the same number of groups, got "
                               f"{mat_a.shape[0]} and {mat_b.shape[0]}")
        return mat_a @ mat_b
    if offs.dtype != int32:
        raise RuntimeError("Offsets have to be int32")
    if offs.dim() != 1:
        raise RuntimeError(f"grouped_mm: offs must be 1-D, got {list(offs.shape)}")
    ends = [int(e) for e in offs.tolist()]
    groups = len(ends)
    if (a3 and mat_a.shape[0] != groups) or (b3 and mat_b.shape[0] != groups):
        raise RuntimeError(f"grouped_mm: offs has {groups} groups but the 3-D operand has "
                           f"{(mat_a if a3 else mat_b).shape[0]}")
    jagged = mat_b.shape[-1] if a3 else mat_a.shape[0] if b3 else mat_a.shape[1]
    starts = [0] + ends[:-1]
    if any(e < s for s, e in zip(starts, ends)) or (ends and ends[-1] > jagged):
        raise RuntimeError(f"grouped_mm: offs {ends} must be non-decreasing and at most {jagged}")
    tail = jagged - (ends[-1] if ends else 0)
    if b3:                                   # (M, K) x (G, K, N): row blocks
        parts = [mat_a[s:e] @ mat_b[g] for g, (s, e) in enumerate(zip(starts, ends))]
        if tail:
            parts.append(mat_a.new_zeros((tail, mat_b.shape[-1])))
        return cat(parts, 0)
    if a3:                                   # (G, M, K) x (K, N): column blocks
        parts = [mat_a[g] @ mat_b[:, s:e] for g, (s, e) in enumerate(zip(starts, ends))]
        if tail:
            parts.append(mat_a.new_zeros((mat_a.shape[1], tail)))
        return cat(parts, 1)
    # (M, K) x (K, N): the contraction split into groups
    return stack([mat_a[:, s:e] @ mat_b[s:e] for s, e in zip(starts, ends)], 0)
