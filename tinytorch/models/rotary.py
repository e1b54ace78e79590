"""Rotary position embeddings (RoPE): the inverse frequencies (``rope_theta`` and the scalings of
Hugging Face's ``rope_scaling``: default, linear, llama3), a cos/sin table, and the rotation in
both conventions:

* ``"half"`` (GPT-NeoX / Hugging Face): dim i is paired with dim i + D/2;
* ``"interleaved"`` (GPT-J / llama.cpp's permuted q/k weights): dim 2i is paired with 2i + 1.
"""
from __future__ import annotations

import math
from typing import Optional

import numpy as np

from tinytorch._tensor.creation import from_numpy
from tinytorch._core.dtype import float32, float64
from tinytorch._ops.index import stack
from tinytorch._ops.shape import cat
from tinytorch.nn import functional as F
from tinytorch.nn.modules.module import Module
from tinytorch._tensor.tensor import Tensor

CONVENTIONS = ("half", "interleaved")


def rope_inv_freq(head_dim: int, rope_theta: float = 10000.0, rope_scaling: Optional[dict] = None,
                  partial_rotary_factor: float = 1.0, precision=np.float32) -> np.ndarray:
    """The (rot_dim // 2,) inverse frequencies theta**(-2i/rot_dim), scaled as Hugging Face's
    ``rope_scaling`` says (``rope_type`` or ``type``: "default", "linear", "llama3", and
    "freq_factors": llama.cpp's per-frequency divisors). float32 as transformers computes them
    (so angles round the same way), or float64 for a float64 model."""
    dim = int(head_dim * partial_rotary_factor)
    if dim % 2:
        raise ValueError(f"rotary: the rotated dimension must be even, got {dim} (head_dim={head_dim})")
    f = np.dtype(precision).type
    inv_freq = (1.0 / (f(rope_theta) ** (np.arange(0, dim, 2, dtype=np.int64).astype(f) / dim))).astype(f)
    if not rope_scaling:
        return inv_freq
    kind = rope_scaling.get("rope_type", rope_scaling.get("type", "default"))
    if kind == "default":
        return inv_freq
    if kind == "linear":
        return (inv_freq / f(rope_scaling["factor"])).astype(f)
    if kind == "llama3":
        factor = rope_scaling["factor"]
        low, high = rope_scaling["low_freq_factor"], rope_scaling["high_freq_factor"]
        old_len = rope_scaling["original_max_position_embeddings"]
        low_wavelen, high_wavelen = old_len / low, old_len / high
        wavelen = 2 * math.pi / inv_freq
        scaled = np.where(wavelen > low_wavelen, inv_freq / factor, inv_freq)
        smooth = (old_len / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = (wavelen >= high_wavelen) & (wavelen <= low_wavelen)
        return np.where(medium, smoothed, scaled).astype(f)
    if kind == "freq_factors":  # llama.cpp's rope_freqs tensor: one divisor per frequency
        factors = np.asarray(rope_scaling["factors"], dtype=f)
        if factors.shape != inv_freq.shape:
            raise ValueError(f"rotary: {factors.size} frequency factors for {inv_freq.size} frequencies")
        return (inv_freq / factors).astype(f)
    raise NotImplementedError(f"rotary: rope_scaling type {kind!r} is not supported "
                              "(supported: 'default', 'linear', 'llama3', 'freq_factors')")


def rotate_half(x: Tensor) -> Tensor:
    """(x1, x2) -> (-x2, x1) over the two halves of the last dim (the "half" convention's partner)."""
    half = x.shape[-1] // 2
    return cat([-x[..., half:], x[..., :half]], -1)


def rotate_pairs(x: Tensor) -> Tensor:
    """(x0, x1) -> (-x1, x0) within each pair (2i, 2i + 1) of the last dim (the "interleaved" partner)."""
    pairs = x.unflatten(-1, (x.shape[-1] // 2, 2))
    return stack([-pairs[..., 1], pairs[..., 0]], -1).flatten(-2)


_HALF_SIGNS: dict = {}  # (D, dtype, device str) -> (-1,) * D/2 + (1,) * D/2


def _half_signs(d: int, like: Tensor) -> Tensor:
    key = (d, like.dtype, str(like.device))
    signs = _HALF_SIGNS.get(key)
    if signs is None:
        signs = _HALF_SIGNS[key] = from_numpy(np.repeat(np.array([-1.0, 1.0]), d // 2)).to(
            device=like.device, dtype=like.dtype)
    return signs


def apply_rotary_pos_emb(x: Tensor, cos: Tensor, sin: Tensor, convention: str = "half") -> Tensor:
    """x * cos + partner(x) * sin: rotates x (B, H, T, D) by angles whose cos/sin are (B, 1, T, D)
    (broadcastable), laid out for the convention (:func:`rotary_angles`): ``"half"`` pairs dim i with
    i + D/2 (angles repeated in two halves), ``"interleaved"`` pairs 2i with 2i + 1 (each angle twice)."""
    if convention == "half":
        # rotate_half(x) * sin as roll(x, D/2) * (sin with its first half negated): the same
        # products, 2 small ops instead of 2 slices, a negation and a cat (decode is op-bound)
        d = x.shape[-1]
        return x * cos + x.roll(d // 2, -1) * (sin * _half_signs(d, sin))
    if convention == "interleaved":
        return x * cos + rotate_pairs(x) * sin
    raise ValueError(f"apply_rotary_pos_emb: convention must be one of {CONVENTIONS}, got {convention!r}")


def rotary_angles(positions: np.ndarray, inv_freq: np.ndarray, convention: str = "half") -> np.ndarray:
    """The (..., D) angles position * inv_freq (in inv_freq's precision) laid out for the convention."""
    ang = positions.astype(inv_freq.dtype)[..., None] * inv_freq
    if convention == "half":
        return np.concatenate([ang, ang], -1)
    if convention == "interleaved":
        return np.repeat(ang, 2, -1)
    raise ValueError(f"rotary_angles: convention must be one of {CONVENTIONS}, got {convention!r}")


class RotaryEmbedding(Module):
    """cos/sin of position * inv_freq for given position ids, from a table built once per device.

    forward(position_ids: (B, T) int64, dtype, max_position) -> (cos, sin), each (B, 1, T, head_dim);
    ``max_position`` (an upper bound of the ids, exclusive) spares reading the ids back to the host."""

    def __init__(self, head_dim: int, max_position_embeddings: int = 2048, rope_theta: float = 10000.0,
                 rope_scaling: Optional[dict] = None, convention: str = "half", device=None) -> None:
        super().__init__()
        if convention not in CONVENTIONS:
            raise ValueError(f"RotaryEmbedding: convention must be one of {CONVENTIONS}, got {convention!r}")
        self.head_dim, self.convention = head_dim, convention
        self.max_position_embeddings = max_position_embeddings
        self.rope_args = (head_dim, rope_theta, rope_scaling)
        self.inv_freq_np = rope_inv_freq(head_dim, rope_theta, rope_scaling)
        self.register_buffer("inv_freq", from_numpy(self.inv_freq_np.copy()).to(device=device), persistent=False)
        self._tables: dict = {}  # (device str, dtype, length) -> (cos, sin) tables

    def _table(self, length: int, dtype, device):
        key = (str(device), dtype)
        have = self._tables.get(key)
        if have is None or have[0].shape[0] < length:
            n = max(length, min(self.max_position_embeddings, 4096))
            inv_freq = self.inv_freq_np if dtype != float64 else rope_inv_freq(*self.rope_args, precision=np.float64)
            ang = rotary_angles(np.arange(n), inv_freq, self.convention)  # (n, D)
            cos = from_numpy(np.cos(ang)).to(device=device, dtype=dtype)
            sin = from_numpy(np.sin(ang)).to(device=device, dtype=dtype)
            have = self._tables[key] = (cos, sin)
        return have

    def forward(self, position_ids: Tensor, dtype=float32, max_position: Optional[int] = None):
        if max_position is None:
            max_position = int(position_ids.max().item()) + 1 if position_ids.numel() else 1
        cos, sin = self._table(max_position, dtype, position_ids.device)
        return F.embedding(position_ids, cos).unsqueeze(1), F.embedding(position_ids, sin).unsqueeze(1)

    def angles_at(self, position: int, dtype=float32, device=None):
        """cos and sin (head_dim,) at one position (a decode step's)."""
        cos, sin = self._table(position + 1, dtype, device if device is not None else self.inv_freq.device)
        return cos.select(0, position), sin.select(0, position)

    def extra_repr(self) -> str:
        return f"head_dim={self.head_dim}, convention={self.convention!r}"
