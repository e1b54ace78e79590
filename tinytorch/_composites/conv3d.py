"""3-D convolutions composed from the 2-D kernels (every device; autograd records the parts).

conv3d gathers the kD depth slices each output plane reads into the channel dimension (a
depth-only im2col: (N, C, D, H, W) -> (N * D_out, G * kD * C/G, H, W)) and runs one conv2d with
the weight's depth folded into its input channels. conv_transpose3d runs one conv_transpose2d
per input plane with the weight's depth folded into its output channels, then adds each
(input plane, kernel depth) result into output plane ``d * stride + k * dilation``. Both
backward passes are those of the 2-D kernels and of the reshapes around them."""
from __future__ import annotations

from typing import Optional, Sequence, Union

from tinytorch._tensor.creation import arange, zeros
from tinytorch._tensor.doc_notes import fill_doc
from tinytorch._composites.indexing import index_add
from tinytorch._ops.conv import conv2d, conv_transpose2d
from tinytorch._ops.index import stack
from tinytorch._ops.shape import cat
from tinytorch._ops.shape import slice as _slice
from tinytorch._tensor.tensor import Tensor

__all__ = ["conv3d", "conv_transpose3d"]

_Triple = Union[int, Sequence[int]]

# the Args entries conv3d and conv_transpose3d share, in PyTorch's words
_CONV3D_NOTES = {
    "input": r"""input (Tensor): input tensor of shape :math:`(\text{minibatch} , \text{in\_channels} , iT , iH ,
    iW)`.""",
    "bias": r"""bias (Tensor, optional): optional bias of shape :math:`(\text{out\_channels})`. Default:
    ``None``""",
    "stride": """stride (int or tuple, optional): the stride of the window (or of the convolution). Default:
    ``1``""",
    "padding": """padding (int or tuple, optional): implicit padding added on the sides of the input. Default:
    ``0``""",
    "dilation": "dilation (int or tuple, optional): spacing between kernel elements. Default: ``1``",
    "groups": """groups (int, optional): number of blocked connections from input channels to output channels.
    Default: ``1``""",
}


def _triple(v: _Triple, name: str, op: str) -> tuple:
    t = (int(v),) * 3 if isinstance(v, int) else tuple(int(a) for a in v)
    if len(t) == 1:
        t = t * 3
    if len(t) != 3:
        raise RuntimeError(f"{op}: expected {name} to be a single integer value or a list of 3 values to match "
                           f"the convolution dimensions, but got {name}={list(t)}")
    return t


def _check(input: Tensor, weight: Tensor, groups: int, op: str, transposed: bool) -> None:
    if input.dim() not in (4, 5):
        raise RuntimeError(f"Expected 4D (unbatched) or 5D (batched) input to {op}, but got input of size: "
                           f"{list(input.shape)}")
    if weight.dim() != 5:
        raise RuntimeError(f"{op}: expected a 5-D weight, but got weight of size {list(weight.shape)}")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if input.dtype != weight.dtype:
        raise RuntimeError(f"{op}: input type ({input.dtype}) and weight type ({weight.dtype}) should be the same")
    if input.device != weight.device:
        raise RuntimeError(f"{op}: input ({input.device}) and weight ({weight.device}) must be on the same device")
    if input.numel() == 0 and (input.dim() == 4 or input.shape[0]) and input.shape[-4]:
        # PyTorch runs empty batches and empty channel sets, not empty volumes
        raise RuntimeError(f"{op}: Only zero batch or zero channel inputs are supported, but got input shape: "
                           f"{list(input.shape)}")
    channels = weight.shape[0] if transposed else weight.shape[1] * groups
    if input.shape[-4] != channels or (not transposed and weight.shape[0] % groups) or weight.shape[0] % groups:
        raise RuntimeError(f"Given {'transposed=1' if transposed else f'groups={groups}'}, weight of size "
                           f"{list(weight.shape)}, expected input{list(input.shape)} to have {channels} channels, "
                           f"but got {input.shape[-4]} channels instead")


@fill_doc(_CONV3D_NOTES)
def conv3d(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None, stride: _Triple = 1,
           padding: Union[str, _Triple] = 0, dilation: _Triple = 1, groups: int = 1) -> Tensor:
    r"""Applies a 3D convolution over an input image composed of several input planes.

    3-D convolution over (N, C_in, D, H, W) or (C_in, D, H, W); weight (C_out, C_in / groups, kD, kH, kW).

    Args:
        {input}
        weight (Tensor): filters of shape :math:`(\text{out\_channels} ,
            \frac{\text{in\_channels}}{\text{groups}} , kT , kH , kW)`.
        {bias}
        {stride}
        {padding}
        {dilation}
        {groups}"""
    _check(input, weight, groups, "conv3d", False)
    stride, dilation = _triple(stride, "stride", "conv3d"), _triple(dilation, "dilation", "conv3d")
    kernel = tuple(weight.shape[2:])
    if isinstance(padding, str):
        if padding == "valid":
            pads = [(0, 0)] * 3
        elif padding == "same":
            if stride != (1, 1, 1):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            # an odd total pads one more on the right, as PyTorch
            totals = [d * (k - 1) for d, k in zip(dilation, kernel)]
            pads = [(t // 2, t - t // 2) for t in totals]
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        pads = [(p, p) for p in _triple(padding, "padding", "conv3d")]
    if any(p < 0 for pair in pads for p in pair):
        raise RuntimeError("negative padding is not supported")
    unbatched = input.dim() == 4
    x = input.unsqueeze(0) if unbatched else input                    # (N, C, D, H, W)
    n, c, d, h, w = x.shape
    padded = [size + lo + hi for size, (lo, hi) in zip((d, h, w), pads)]
    if any(size < dil * (k - 1) + 1 for size, dil, k in zip(padded, dilation, kernel)):
        raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
                           f"size: ({' x '.join(map(str, kernel))}). Kernel size can't be greater than actual "
                           f"input size")
    lo, hi = pads[0]
    if lo or hi:                                                      # zero-pad the depth
        x = cat([x.new_zeros((n, c, lo, h, w)), x, x.new_zeros((n, c, hi, h, w))], 2)
    kd, sd, dd = kernel[0], stride[0], dilation[0]
    d_out = (padded[0] - dd * (kd - 1) - 1) // sd + 1
    cout, cg = weight.shape[0], weight.shape[1]
    # cols[n * D_out + o, (g, k, c)] = x[n, g * cg + c, o * sd + k * dd]: the planes output o reads
    planes = [_slice(x, 2, k * dd, k * dd + (d_out - 1) * sd + 1, sd) for k in range(kd)]   # kD x (N, C, D_out, H, W)
    cols = stack(planes, 2).reshape(n, groups, cg, kd, d_out, h, w)     # (N, G, cg, kD, D_out, H, W)
    cols = cols.permute(0, 4, 1, 3, 2, 5, 6).reshape(n * d_out, groups * kd * cg, h, w)
    w2 = weight.permute(0, 2, 1, 3, 4).reshape(cout, kd * cg, kernel[1], kernel[2])   # (C_out, (kD, cg), kH, kW)
    # conv2d splits an odd 'same' total as PyTorch does (one more on the right)
    hw_pad = "same" if padding == "same" else (pads[1][0], pads[2][0])
    y = conv2d(cols, w2, bias, stride[1:], hw_pad, dilation[1:], groups)      # (N * D_out, C_out, Ho, Wo)
    y = y.reshape(n, d_out, cout, y.shape[-2], y.shape[-1]).permute(0, 2, 1, 3, 4).contiguous()
    return y.squeeze(0) if unbatched else y


@fill_doc(_CONV3D_NOTES)
def conv_transpose3d(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None, stride: _Triple = 1,
                     padding: _Triple = 0, output_padding: _Triple = 0, groups: int = 1,
                     dilation: _Triple = 1) -> Tensor:
    r"""Applies a 3D transposed convolution operator over an input image composed of several input planes,
    sometimes also called "deconvolution".

    3-D transposed convolution over (N, C_in, D, H, W) or (C_in, D, H, W); weight (C_in, C_out / groups, kD, kH, kW).

    Args:
        {input}
        weight (Tensor): filters of shape :math:`(\text{in\_channels} ,
            \frac{\text{out\_channels}}{\text{groups}} , kT , kH , kW)`.
        {bias}
        {stride}
        {padding}
        output_padding (int or tuple, optional): additional size added to one side of each dimension in
            the output shape. Default: ``0``
        {groups}
        {dilation}"""
    op = "conv_transpose3d"
    _check(input, weight, groups, op, True)
    stride, padding = _triple(stride, "stride", op), _triple(padding, "padding", op)
    output_padding, dilation = _triple(output_padding, "output_padding", op), _triple(dilation, "dilation", op)
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(op_ >= max(s, d) for op_, s, d in zip(output_padding, stride, dilation)):
        names = ("depth", "height", "width")
        raise RuntimeError("output padding must be smaller than either stride or dilation, but got " + " ".join(
            f"{what}_{nm}: {v}" for what, vals in (("output_padding", output_padding), ("stride", stride),
                                                   ("dilation", dilation)) for nm, v in zip(names, vals)))
    unbatched = input.dim() == 4
    x = input.unsqueeze(0) if unbatched else input                    # (N, C_in, D, H, W)
    n, cin, d, h, w = x.shape
    cog, kd = weight.shape[1], weight.shape[2]
    cout = cog * groups
    sd, pd, opd, dd = stride[0], padding[0], output_padding[0], dilation[0]
    full = (d - 1) * sd + dd * (kd - 1) + 1                          # output depth before cropping
    d_out = full - 2 * pd + opd
    if d_out <= 0:
        raise RuntimeError(f"{op}: the output depth {d_out} is not positive for input {list(input.shape)} and "
                           f"weight {list(weight.shape)}")
    # every input plane through the 2-D transpose at once, the kernel depth as extra output channels
    xs = x.permute(0, 2, 1, 3, 4).reshape(n * d, cin, h, w)
    w2 = weight.reshape(cin, cog * kd, weight.shape[3], weight.shape[4])            # (C_in, (cog, kD), kH, kW)
    y = conv_transpose2d(xs, w2, None, stride[1:], padding[1:], output_padding[1:], groups, dilation[1:])
    ho, wo = y.shape[-2], y.shape[-1]
    # y[n * D + i, (g, o, k)] lands in output plane i * sd + k * dd (before cropping pd)
    src = y.reshape(n, d, cout, kd, ho, wo).permute(0, 2, 1, 3, 4, 5).reshape(n, cout, d * kd, ho, wo)
    where = (arange(d, device=x.device) * sd).reshape(d, 1) + (arange(kd, device=x.device) * dd).reshape(1, kd)
    out = index_add(zeros((n, cout, full + max(opd - pd, 0), ho, wo), dtype=y.dtype, device=y.device), 2,
                    where.reshape(-1), src)
    out = out.narrow(2, pd, d_out)
    if bias is not None:
        out = out + bias.reshape(-1, 1, 1, 1)
    return out.squeeze(0) if unbatched else out
