"""``F.pad``: constant, reflect, replicate and circular padding (negative pads crop), composed
from narrow, index_select and a filled tensor, so every mode differentiates on every device."""
from __future__ import annotations

from typing import Optional

from tinytorch._tensor.creation import full, tensor
from tinytorch._core.dtype import int64
from tinytorch._tensor.tensor import Tensor

# reflect/replicate/circular pad the last k dims of a (k+1)-D (unbatched) or (k+2)-D input.
_PAD_INPUT_DIMS = {1: (2, 3), 2: (3, 4), 3: (4, 5)}


def _pad_index(n: int, lo: int, hi: int, mode: str) -> list[int]:
    """Source positions of padded positions -lo .. n+hi-1 of a dim of size n (negative pads crop)."""
    if mode == "reflect":
        return [-j if j < 0 else 2 * (n - 1) - j if j >= n else j for j in range(-lo, n + hi)]
    if mode == "replicate":
        return [min(max(j, 0), n - 1) for j in range(-lo, n + hi)]
    # circular wraps within what the negative pads leave, as PyTorch's
    c_lo, c_hi = max(-lo, 0), max(-hi, 0)
    m = n - c_lo - c_hi
    return [c_lo + t % m for t in range(-max(lo, 0), m + max(hi, 0))]


def _pad_constant(x: Tensor, pairs, value: float) -> Tensor:
    for d, lo, hi in pairs:  # negative pads crop first
        if lo < 0 or hi < 0:
            start, stop = max(-lo, 0), x.shape[d] - max(-hi, 0)
            if stop < start:
                raise ValueError(f"pad: cropping ({max(-lo, 0)}, {max(-hi, 0)}) from dimension {d} of input "
                                 f"{list(x.shape)} leaves less than nothing")
            x = x.narrow(d, start, stop - start)
    shape, sl = list(x.shape), [slice(None)] * x.dim()
    for d, lo, hi in pairs:
        shape[d] += max(lo, 0) + max(hi, 0)
        sl[d] = slice(max(lo, 0), max(lo, 0) + x.shape[d])
    out = full(shape, value, dtype=x.dtype, device=x.device)
    out[tuple(sl)] = x
    return out


def pad(input: Tensor, pad, mode: str = "constant", value: Optional[float] = None) -> Tensor:
    r"""Pads tensor.

    Args:
        input (Tensor): the input tensor.
        pad (tuple): m-elements tuple, where :math:`\frac{m}{2} \leq` input dimensions and :math:`m` is
            even: the padding sizes, starting from the last dimension.
        mode (str): ``'constant'``, ``'reflect'``, ``'replicate'`` or ``'circular'``. Default:
            ``'constant'``
        value (float): fill value for ``'constant'`` padding. Default: ``None``"""
    pad = [int(v) for v in pad]
    k = len(pad) // 2
    if len(pad) % 2:
        raise ValueError("Padding length must be divisible by 2")
    if k > input.dim():
        raise ValueError(f"Padding length should be less than or equal to two times the input dimension but got "
                         f"padding length {len(pad)} and input of dimension {input.dim()}")
    pairs = [(input.dim() - 1 - i, pad[2 * i], pad[2 * i + 1]) for i in range(k)]  # (dim, before, after)
    if mode == "constant":
        return _pad_constant(input, pairs, 0.0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"pad: mode {mode!r} is not implemented (constant, reflect, replicate, circular)")
    if value is not None and value != 0:
        raise ValueError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if k not in _PAD_INPUT_DIMS:
        raise NotImplementedError(f"pad: {mode} padding pads the last 1, 2 or 3 dimensions, got {k}")
    if input.dim() not in _PAD_INPUT_DIMS[k]:
        a, b = _PAD_INPUT_DIMS[k]
        raise NotImplementedError(f"pad: {mode} padding of the last {k} dimension(s) needs a {a}-D or {b}-D input, "
                                  f"got {list(input.shape)}")
    for d, lo, hi in pairs:
        n = input.shape[d]
        too_big = (lo >= n or hi >= n) if mode == "reflect" else (lo > n or hi > n) if mode == "circular" else n == 0
        if too_big or n - max(-lo, 0) - max(-hi, 0) <= 0:
            limit = {"reflect": "be less than", "circular": "be at most"}.get(mode, "need a non-empty")
            raise ValueError(f"pad: {mode} padding ({lo}, {hi}) at dimension {d} of input {list(input.shape)}: pads "
                             f"must {limit} the corresponding input dimension")
        idx = tensor(_pad_index(n, lo, hi, mode), dtype=int64, device=input.device)
        input = input.index_select(d, idx)
    return input
