"""Pooling of ``nn.functional``: the 2-D kernels of ``tinytorch._ops.pool`` (max_pool2d,
avg_pool2d, adaptive_avg_pool2d), their 1-D forms over a height of 1, and adaptive max pooling."""
from __future__ import annotations

from tinytorch._functional import stack
from tinytorch._ops.pool import adaptive_avg_pool2d, avg_pool2d, max_pool2d  # noqa: F401
from tinytorch.tensor import Tensor


def _one(v) -> int:
    return v if isinstance(v, int) else v[0]


def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """1-D max pooling over (N, C, L) or (C, L), as a 2-D pooling over a height of 1."""
    s = None if stride is None else (1, _one(stride))
    r = max_pool2d(input.unsqueeze(-2), (1, _one(kernel_size)), s, (0, _one(padding)), (1, _one(dilation)),
                   ceil_mode, return_indices)
    if return_indices:
        return r[0].squeeze(-2), r[1].squeeze(-2)
    return r.squeeze(-2)


def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    s = None if stride is None else (1, _one(stride))
    return avg_pool2d(input.unsqueeze(-2), (1, _one(kernel_size)), s, (0, _one(padding)), ceil_mode,
                      count_include_pad).squeeze(-2)


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    return adaptive_avg_pool2d(input.unsqueeze(-2), (1, _one(output_size))).squeeze(-2)


def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
    """Max over the adaptive windows [floor(i * H / Ho), ceil((i + 1) * H / Ho)) of (N, C, H, W) or
    (C, H, W) input; with return_indices, the flat H * W position of each maximum."""
    h, w = input.shape[-2:]
    size = [output_size] * 2 if isinstance(output_size, int) else list(output_size)
    ho, wo = (h if size[0] is None else size[0]), (w if size[1] is None else size[1])
    if h % ho == 0 and w % wo == 0:          # equal windows: one max_pool2d
        return max_pool2d(input, (h // ho, w // wo), return_indices=return_indices)
    lead = list(input.shape[:-2])
    vals, idxs = [], []
    for i in range(ho):
        h0, h1 = (i * h) // ho, -((-(i + 1) * h) // ho)
        for j in range(wo):
            w0, w1 = (j * w) // wo, -((-(j + 1) * w) // wo)
            best = input[..., h0:h1, w0:w1].reshape(*lead, -1).max(-1)
            vals.append(best.values)
            k = best.indices
            idxs.append((k // (w1 - w0) + h0) * w + k % (w1 - w0) + w0)
    out = stack(vals, -1).reshape(*lead, ho, wo)
    if return_indices:
        return out, stack(idxs, -1).reshape(*lead, ho, wo)
    return out


def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):
    """adaptive_max_pool2d over a height of 1, for (N, C, L) or (C, L) input."""
    r = adaptive_max_pool2d(input.unsqueeze(-2), (1, _one(output_size)), return_indices)
    return (r[0].squeeze(-2), r[1].squeeze(-2)) if return_indices else r.squeeze(-2)
