"""BitNet b1.58 (Ma et al. 2024): ``BitLinear`` (ternary weights, int8 activations, trained with the
straight-through estimator) and ``PackedBitLinear``, its inference form with the ternary weights
packed at 2 bits per weight.

The quantizers, per the paper (eq. 1-3) and the authors' released training code:

* weights, per tensor (absmean): ``γ = mean|W|``, ``W̃ = RoundClip(W / (γ + ε), -1, 1)``, used as
  ``γ·W̃``;
* activations, per token (absmax): ``s = 127 / max(max|x|, ε)`` over the last dim,
  ``x̃ = Clip(round(x·s), -128, 127)``, used as ``x̃ / s``.

Straight-through estimator, two variants (``BitLinear(..., ste=)``):

* ``"quantized"`` (default): the authors' released code (Ma et al. 2024, "training tips, code and
  FAQ": ``x + (quant(x) - x).detach()`` on both operands). Each quantizer is the identity in
  backward, the product's own gradient uses the quantized operands: ``dW = gᵀ·x̃/s`` and
  ``dx = g·γW̃`` (then through the input norm).
* ``"latent"``: the backward of a plain ``nn.Linear`` on the full-precision latent weight and the
  unquantized input, ``dW = gᵀ·x`` and ``dx = g·W``: gradients computed with the full-precision
  weights, as the straight-through estimator is often described.

Both send the gradient to the latent full-precision weight; they differ in which operand values
the two products read. The default stays the authors' code because that is what the cited paper's
authors ran and what docs/training.md's BitLinear GPT numbers were measured with.
"""
from __future__ import annotations

import math

from tinytorch import _C
from tinytorch._tensor.creation import arange, tensor
from tinytorch._core.dtype import float32, uint8
from tinytorch.autograd.grad_mode import no_grad
from tinytorch.nn import functional as F
from tinytorch.nn.modules.linear import _reset_linear, _weight_and_bias
from tinytorch.nn.modules.module import Module
from tinytorch._core.tensor_base import _wrap
from tinytorch.autograd.function import Function
from tinytorch._tensor.tensor import Tensor
from tinytorch.nn.common_types import _device_t, _dtype_t

__all__ = ["BitLinear", "PackedBitLinear", "absmean_ternary", "absmax_int8", "pack_ternary", "unpack_ternary"]

_EPS = 1e-5
# Up to this many tokens per call the packed kernel runs (decode: memory bound, where 2-bit rows
# pay); above, unpacking once and a float GEMM is faster than the kernel's per-token integer dots.
# CPU: measured (docs/training.md); CUDA: the kernel reads each weight row once per 4 tokens, its
# crossover with cuBLAS is not measured yet (bench/bitlinear_bench.py --device cuda).
_KERNEL_MAX_TOKENS = {"cpu": 8, "cuda": 32}
_STE_MODES = ("quantized", "latent")


def absmean_ternary(weight: Tensor, eps: float = _EPS) -> tuple[Tensor, Tensor]:
    """``(W̃, γ)``: ``W̃ = RoundClip(W / (γ + eps), -1, 1)`` in {-1, 0, 1} (weight's dtype), ``γ = mean|W|``
    (a 0-dim tensor)."""
    gamma = weight.abs().mean()
    return (weight / (gamma + eps)).round().clamp(-1.0, 1.0), gamma


def absmax_int8(x: Tensor, eps: float = _EPS) -> tuple[Tensor, Tensor]:
    """``(x̃, s)`` per token (last dim): ``s = 127 / max(max|x|, eps)``, ``x̃ = Clip(round(x·s), -128, 127)``
    (integer values in x's dtype); ``x ≈ x̃ / s``."""
    scale = 127.0 / x.abs().amax(-1, keepdim=True).clamp(min=eps)
    return (x * scale).round().clamp(-128.0, 127.0), scale


def _check_input(name: str, x, in_features: int) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}: input must be a Tensor, got {type(x).__name__}")
    if not x.dtype.is_floating_point:
        raise TypeError(f"{name}: input must be a floating-point tensor, got {x.dtype}")
    if x.dim() == 0 or x.shape[-1] != in_features:
        raise ValueError(f"{name}: expected input with last dimension {in_features}, got input of shape "
                         f"{list(x.shape)}")


class _LatentSTELinear(Function):
    """``linear(h_q, w_q, bias)`` forward; backward of ``linear(h, weight, bias)`` (the latent STE)."""

    @staticmethod
    def forward(ctx, h, weight, bias, h_q, w_q):
        ctx.save_for_backward(h, weight)
        ctx.has_bias = bias is not None
        return F.linear(h_q, w_q, bias)

    @staticmethod
    def backward(ctx, grad):
        h, weight = ctx.saved_tensors
        g2 = grad.reshape(-1, grad.shape[-1])  # (tokens, out)
        grad_h = grad @ weight  # (*, in) = g·W
        grad_w = g2.transpose(0, 1) @ h.reshape(-1, h.shape[-1])  # (out, in) = gᵀ·h
        grad_b = g2.sum(0) if ctx.has_bias else None
        return grad_h, grad_w, grad_b, None, None


class BitLinear(Module):
    r"""A linear layer trained as BitNet b1.58: ``y = (γW̃)(x̃/s)ᵀ + b`` (see the module docstring).

    Args:
        in_features: size of each input sample (as :class:`Linear`).
        out_features: size of each output sample.
        bias: if set to ``False``, the layer will not learn an additive bias.
        device: the device of the parameters.
        dtype: the dtype of the parameters.
        input_norm: normalize the input with a parameter-free RMSNorm before quantizing it, as the
            authors' BitLinear does (default: True); False quantizes the input as given.
        eps: the quantizers' ε.
        ste: the straight-through gradient: ``"quantized"`` (the authors' code: ``dx = g·γW̃``,
            ``dW = gᵀ·x̃/s``) or ``"latent"`` (``dx = g·W``, ``dW = gᵀ·x``, full-precision operands);
            see the module docstring.

    Shape:
        ``(*, in_features) -> (*, out_features)``.

    :meth:`pack` returns the inference module (:class:`PackedBitLinear`).
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device: _device_t = None,
                 dtype: _dtype_t = None, *, input_norm: bool = True, eps: float = _EPS, ste: str = "quantized") -> None:
        super().__init__()
        if ste not in _STE_MODES:
            raise ValueError(f"BitLinear: ste must be one of {_STE_MODES}, got {ste!r}")
        self.in_features, self.out_features = in_features, out_features
        self.input_norm, self.eps, self.ste = input_norm, eps, ste
        _weight_and_bias(self, (out_features, in_features), bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_linear(self)   # as nn.Linear

    def _normalized(self, x: Tensor) -> Tensor:
        return F.rms_norm(x, (self.in_features,), None, self.eps) if self.input_norm else x

    def quantized_weight(self) -> Tensor:
        """``γ·W̃``: the weight the forward uses (dequantized ternary)."""
        ternary, gamma = absmean_ternary(self.weight, self.eps)
        return ternary * gamma

    def forward(self, x: Tensor) -> Tensor:
        _check_input("BitLinear", x, self.in_features)
        h = self._normalized(x)
        q, scale = absmax_int8(h.detach(), self.eps)
        w = self.weight
        if self.ste == "latent":
            with no_grad():
                w_q = self.quantized_weight()
            h_q = q / scale
            if h.dtype != w.dtype:
                h, h_q = h.to(w.dtype), h_q.to(w.dtype)
            return _LatentSTELinear.apply(h, w, self.bias, h_q, w_q)
        h = h + (q / scale - h).detach()  # STE: identity in backward
        w = w + (self.quantized_weight().detach() - w).detach()
        return F.linear(h.to(w.dtype) if h.dtype != w.dtype else h, w, self.bias)

    @no_grad()
    def pack(self) -> "PackedBitLinear":
        """The inference module: ternary weights packed 4 per byte, plus γ (and the bias)."""
        ternary, gamma = absmean_ternary(self.weight.detach().float(), self.eps)
        return PackedBitLinear(pack_ternary(ternary), float(gamma.item()), self.in_features,
                               None if self.bias is None else self.bias.detach().clone(),
                               input_norm=self.input_norm, eps=self.eps)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}, "
                f"input_norm={self.input_norm}, ste={self.ste}")


# ---------------------------------------------------------------------------- 2-bit packing
# Layout: a row of K values is K4 = ceil(K / 4) bytes in four planes: byte j holds columns j, j + K4,
# j + 2·K4 and j + 3·K4 in bits 0-1, 2-3, 4-5 and 6-7, each as its code t + 1 in {0, 1, 2} (padding:
# code 1, value 0). Planes keep a kernel's activation reads contiguous (four streams of K4).
_POWERS = (1, 4, 16, 64)


def pack_ternary(ternary: Tensor) -> Tensor:
    """``(out, in)`` values in {-1, 0, 1} -> ``(out, ceil(in / 4))`` uint8, 2 bits per value (plane layout above)."""
    if ternary.dim() != 2:
        raise ValueError(f"pack_ternary: expected a 2-D weight, got shape {list(ternary.shape)}")
    out_f, in_f = ternary.shape
    k4 = -(-in_f // 4)
    codes = ternary.detach().float() + 1.0
    if 4 * k4 != in_f:
        codes = F.pad(codes, (0, 4 * k4 - in_f), value=1.0)
    planes = codes.reshape(out_f, 4, k4)  # planes[:, k, j] = column j + k·K4
    weights = tensor(_POWERS, dtype=float32, device=codes.device).reshape(1, 4, 1)
    return (planes * weights).sum(1).to(uint8)


def _unpack_table(device) -> Tensor:
    """(256, 4) float32: the four ternary values of each byte (the gather table of the unpack)."""
    b = arange(256, device=device).unsqueeze(1)
    return ((b // tensor(_POWERS, device=device)) % 4).float() - 1.0


def unpack_ternary(packed: Tensor, in_features: int, table: Tensor | None = None) -> Tensor:
    """``(out, ceil(in / 4))`` uint8 -> ``(out, in)`` float32 in {-1, 0, 1} (one gather from a 256-entry table)."""
    table = _unpack_table(packed.device) if table is None else table
    out_f = packed.shape[0]
    values = F.embedding(packed.long(), table)  # (out, K4, 4): values[:, j, k] = column j + k·K4
    return values.transpose(1, 2).reshape(out_f, -1)[:, :in_features]


class PackedBitLinear(Module):
    """Inference form of a :class:`BitLinear`: the ternary weight packed at 2 bits per weight.

    The forward quantizes the input to int8 per token as in training and computes
    ``y = (x̃ W̃ᵀ) · γ / s + b``. The module holds 1/16 of a float32 weight's bytes (plus γ and the
    bias). For up to 8 tokens per call on the CPU (decoding), 32 on CUDA, the product runs packed
    (``_C.bitnet_matmul``: each 2-bit row streamed once, int8 × ternary summed exactly in int32;
    ``cpp/src/cpu/bitnet.cpp``, ``cuda/src/bitnet.cu``); for more tokens, on other devices, or
    with ``use_kernel = False``, the weight is unpacked on the fly for the call (a table gather,
    then a float32 matmul of the integer-valued operands, also exact), so both paths give the
    same result.

    Built by :meth:`BitLinear.pack`; ``packed`` is a ``(out_features, ceil(in_features / 4))``
    uint8 buffer, ``weight_scale`` is γ.

    Args:
        packed (Tensor): the ternary weight packed at 2 bits per weight (uint8).
        weight_scale (float): the scale of the ternary weight.
        in_features (int): size of each input sample.
        bias (bool): if set to ``False``, the layer will not learn an additive bias. Default: ``None``
        input_norm (bool): normalize the input (RMS) before quantizing it, as BitNet b1.58. Default:
            ``True``
        eps (float): a value added for numerical stability. Default: ``1e-05``"""

    def __init__(self, packed: Tensor, weight_scale: float, in_features: int, bias: Tensor | None = None, *,
                 input_norm: bool = True, eps: float = _EPS) -> None:
        super().__init__()
        if packed.dtype != uint8 or packed.dim() != 2 or packed.shape[1] != -(-in_features // 4):
            raise ValueError(f"PackedBitLinear: packed must be uint8 of shape (out_features, ceil(in_features / 4)) "
                             f"= (*, {-(-in_features // 4)}), got {packed.dtype} {list(packed.shape)}")
        self.in_features, self.out_features = in_features, packed.shape[0]
        self.weight_scale, self.input_norm, self.eps = float(weight_scale), input_norm, eps
        self.register_buffer("packed", packed)
        self.register_buffer("bias", bias)
        self.register_buffer("_table", _unpack_table(packed.device), persistent=False)
        self.use_kernel = True

    def unpacked_weight(self) -> Tensor:
        """``γ·W̃`` as a float32 ``(out_features, in_features)`` tensor."""
        return unpack_ternary(self.packed, self.in_features, self._table) * self.weight_scale

    def forward(self, x: Tensor) -> Tensor:
        _check_input("PackedBitLinear", x, self.in_features)
        h = x.float()
        if self.input_norm:
            h = F.rms_norm(h, (self.in_features,), None, self.eps)
        q, scale = absmax_int8(h, self.eps)
        mult = self.weight_scale / scale  # (*, 1): γ / s per token
        lead = tuple(q.shape[:-1])
        tokens = math.prod(lead)
        if self.use_kernel and tokens <= _KERNEL_MAX_TOKENS.get(h.device.type, 0):
            y = _wrap(_C.bitnet_matmul(q.reshape(-1, self.in_features).contiguous()._impl, self.packed._impl,
                                       mult.reshape(-1).contiguous()._impl)).reshape(*lead, self.out_features)
        else:
            y = F.linear(q, unpack_ternary(self.packed, self.in_features, self._table)) * mult
        if self.bias is not None:
            y = y + self.bias.float()
        return y.to(x.dtype) if x.dtype != y.dtype else y

    def weight_nbytes(self) -> int:
        """Bytes held for the weight (packed codes + γ)."""
        return self.packed.numel() + 4

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}, "
                f"bits_per_weight=2")
