"""More of ``nn.functional``, composed from existing ops (so every device and dtype, and autograd):
activations (selu, celu, softsign, tanhshrink, threshold, glu, prelu), pixel_shuffle and
pixel_unshuffle, channel dropout (dropout1d/2d), instance_norm, pairwise_distance,
adaptive_max_pool1d/2d."""
from __future__ import annotations

import tinytorch
from tinytorch.tensor import Tensor

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """scale * (max(0, x) + min(0, alpha * (exp(x) - 1))), with PyTorch's alpha and scale."""
    return tinytorch.nn.functional.elu(input, _SELU_ALPHA) * _SELU_SCALE


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    if alpha == 0:
        raise ValueError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return tinytorch.nn.functional.elu(input / alpha, 1.0) * alpha


def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|)."""
    return input / (input.abs() + 1.0)


def tanhshrink(input: Tensor) -> Tensor:
    """x - tanh(x)."""
    return input - input.tanh()


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """x where x > threshold, else value."""
    return tinytorch.where(input > threshold, input, value)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """a * sigmoid(b), with a and b the two halves of input along dim."""
    if input.shape[dim] % 2:
        raise RuntimeError(f"glu: Halving dimension must be even, but dimension {dim} is size {input.shape[dim]}")
    a, b = input.chunk(2, dim)
    return a * b.sigmoid()


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """max(0, x) + weight * min(0, x), weight per channel (dim 1; dim 0 for 1-D input) or shared."""
    if weight.numel() != 1:
        channels = input.shape[1] if input.dim() >= 2 else input.shape[0]
        if weight.numel() != channels:
            raise RuntimeError(f"prelu: mismatch in parameter count: weight has {weight.numel()} elements, input "
                               f"{list(input.shape)} has {channels} channels")
        shape = [1] * input.dim()
        shape[1 if input.dim() >= 2 else 0] = channels
        weight = weight.reshape(shape)
    return tinytorch.where(input > 0, input, input * weight)


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C * r^2, H, W) -> (*, C, H * r, W * r)."""
    r = upscale_factor
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    n = len(lead)
    x = x.permute(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H * r, W * r) -> (*, C * r^2, H, W)."""
    r = downscale_factor
    *lead, c, h, w = input.shape
    if h % r or w % r:
        raise RuntimeError(f"pixel_unshuffle expects height ({h}) and width ({w}) divisible by downscale_factor {r}")
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    n = len(lead)
    x = x.permute(*range(n), n, n + 2, n + 4, n + 1, n + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


def _channel_dropout(input: Tensor, p: float, training: bool, spatial: int, name: str) -> Tensor:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.dim() not in (spatial + 1, spatial + 2):
        raise RuntimeError(f"{name}: expected a {spatial + 1}-D or {spatial + 2}-D input, got {list(input.shape)}")
    if not training or p == 0.0:
        return input
    # one Bernoulli draw per channel, broadcast over the spatial dims
    keep_shape = list(input.shape[:-spatial]) + [1] * spatial
    keep = tinytorch.nn.functional.dropout(tinytorch.ones(keep_shape, dtype=input.dtype, device=input.device), p, True)
    return input * keep


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zeroes whole channels of (N, C, L) or (C, L) input with probability p, scaling the rest by 1/(1-p)."""
    return _channel_dropout(input, p, training, 1, "dropout1d")


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zeroes whole channels of (N, C, H, W) or (C, H, W) input with probability p, scaling the rest by 1/(1-p)."""
    return _channel_dropout(input, p, training, 2, "dropout2d")


def instance_norm(input: Tensor, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats: bool = True, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalizes each channel of each sample over its spatial dims: batch_norm on the
    (1, N * C, *) view with the per-channel tensors repeated N times, as PyTorch's; running
    stats, when given, are updated with the per-sample stats averaged over the batch."""
    if input.dim() < 3:
        raise ValueError(f"instance_norm: expected (N, C, *) input, got {list(input.shape)}")
    if not use_input_stats and (running_mean is None or running_var is None):
        raise ValueError("instance_norm: Expected running_mean and running_var to be defined when use_input_stats "
                         "is false")
    n, c = input.shape[0], input.shape[1]
    rep = lambda t: None if t is None else t.repeat(n)  # noqa: E731
    rm, rv = rep(running_mean), rep(running_var)
    out = tinytorch.nn.functional.batch_norm(input.reshape(1, n * c, *input.shape[2:]), rm, rv, rep(weight),
                                             rep(bias), use_input_stats, momentum, eps)
    if use_input_stats and running_mean is not None:
        with tinytorch.no_grad():
            running_mean.copy_(rm.view(n, c).mean(0))
            running_var.copy_(rv.view(n, c).mean(0))
    return out.reshape(input.shape)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> Tensor:
    """||x1 - x2 + eps||_p over the last dim."""
    return (x1 - x2 + eps).norm(p, -1, keepdim)


def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
    """Max over the adaptive windows [floor(i * H / Ho), ceil((i + 1) * H / Ho)) of (N, C, H, W) or
    (C, H, W) input; with return_indices, the flat H * W position of each maximum."""
    h, w = input.shape[-2:]
    size = [output_size] * 2 if isinstance(output_size, int) else list(output_size)
    ho, wo = (h if size[0] is None else size[0]), (w if size[1] is None else size[1])
    if h % ho == 0 and w % wo == 0:          # equal windows: one max_pool2d
        return tinytorch.nn.functional.max_pool2d(input, (h // ho, w // wo), return_indices=return_indices)
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
    out = tinytorch.stack(vals, -1).reshape(*lead, ho, wo)
    if return_indices:
        return out, tinytorch.stack(idxs, -1).reshape(*lead, ho, wo)
    return out


def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):
    """adaptive_max_pool2d over a height of 1, for (N, C, L) or (C, L) input."""
    one = output_size if isinstance(output_size, int) else output_size[0]
    r = adaptive_max_pool2d(input.unsqueeze(-2), (1, one), return_indices)
    return (r[0].squeeze(-2), r[1].squeeze(-2)) if return_indices else r.squeeze(-2)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x where |x| > lambd, else 0."""
    return input * (input.abs() > lambd)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x - lambd above lambd, x + lambd below -lambd, else 0."""
    return input - input.clamp(-lambd, lambd)


def softmin(input: Tensor, dim: int, dtype=None) -> Tensor:
    """softmax(-x) along dim."""
    return tinytorch.nn.functional.softmax(-input, dim, dtype=dtype)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """relu6(x + 3) / 6."""
    return (input + 3.0).clamp(0.0, 6.0) / 6.0


def _pair4(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def _patch_positions(h: int, w: int, kernel_size, dilation, padding, stride, device) -> Tensor:
    """(kh * kw, L) row-major positions in the padded (h + 2p, w + 2p) image of every patch element."""
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = (_pair4(v) for v in (kernel_size, dilation, padding, stride))
    hp, wp = h + 2 * ph, w + 2 * pw
    pos = tinytorch.arange(hp * wp, device=device).reshape(hp, wp)
    pos = pos.unfold(0, dh * (kh - 1) + 1, sh).unfold(1, dw * (kw - 1) + 1, sw)[:, :, ::dh, ::dw]  # (Ho, Wo, kh, kw)
    ho, wo = pos.shape[0], pos.shape[1]
    return pos.reshape(ho * wo, kh * kw).t().contiguous()


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Extracts sliding local blocks (im2col): (N, C, H, W) -> (N, C * kh * kw, L)."""
    batched = input.dim() == 4
    x = input if batched else input.unsqueeze(0)
    if x.dim() != 4:
        raise ValueError(f"unfold: expected a 3-D or 4-D input, got {list(input.shape)}")
    n, c, h, w = x.shape
    ph, pw = _pair4(padding)
    xp = tinytorch.nn.functional.pad(x, (pw, pw, ph, ph)).reshape(n, c, -1)
    pos = _patch_positions(h, w, kernel_size, dilation, padding, stride, x.device)     # (K, L)
    cols = xp.index_select(2, pos.reshape(-1)).reshape(n, c * pos.shape[0], pos.shape[1])
    return cols if batched else cols.squeeze(0)


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Combines sliding local blocks into a tensor, summing overlaps (col2im; unfold's adjoint):
    (N, C * kh * kw, L) -> (N, C, H, W)."""
    batched = input.dim() == 3
    x = input if batched else input.unsqueeze(0)
    h, w = _pair4(output_size)
    ph, pw = _pair4(padding)
    pos = _patch_positions(h, w, kernel_size, dilation, padding, stride, x.device)     # (K, L)
    k, length = pos.shape
    n = x.shape[0]
    if x.shape[1] % k or x.shape[2] != length:
        raise RuntimeError(f"fold: expected input of shape (N, C * {k}, {length}), got {list(input.shape)}")
    c = x.shape[1] // k
    out = tinytorch.zeros(n, c, (h + 2 * ph) * (w + 2 * pw), dtype=x.dtype, device=x.device)
    idx = pos.reshape(1, 1, -1).expand(n, c, k * length)
    out = out.scatter_add(2, idx, x.reshape(n, c, k * length))
    out = out.reshape(n, c, h + 2 * ph, w + 2 * pw)[:, :, ph:ph + h, pw:pw + w]
    return out if batched else out.squeeze(0)
