"""A preallocated key/value cache: per layer, static (B, Hkv, max_length, D) tensors written in
place, so decoding allocates nothing per step and never concatenates."""
from __future__ import annotations

from typing import List, Tuple

from tinytorch._tensor.creation import zeros
from tinytorch._tensor.tensor import Tensor


class KVCache:
    """Keys and values of every layer for up to ``max_length`` positions of ``batch_size`` sequences.

    All sequences share one length (prompts are left-padded). A forward pass writes its new
    positions with :meth:`update` in each layer, then calls :meth:`advance` once."""

    def __init__(self, num_layers: int, batch_size: int, num_kv_heads: int, head_dim: int, max_length: int,
                 dtype=None, device=None) -> None:
        if max_length <= 0:
            raise ValueError(f"KVCache: max_length must be positive, got {max_length}")
        self.max_length, self.batch_size = max_length, batch_size
        self.length = 0  # positions filled so far, equal for every layer
        self.fused_step = None  # (model, its decode stack bound to this cache): models/fused_decode.py
        # (B, Hkv, max_length, D) per layer
        self.keys: List[Tensor] = [zeros(batch_size, num_kv_heads, max_length, head_dim, dtype=dtype, device=device)
                                   for _ in range(num_layers)]
        self.values: List[Tensor] = [zeros(batch_size, num_kv_heads, max_length, head_dim, dtype=dtype,
                                           device=device) for _ in range(num_layers)]

    def update(self, layer: int, key: Tensor, value: Tensor) -> Tuple[Tensor, Tensor]:
        """Writes key/value (B, Hkv, T, D) at positions [length, length + T) of ``layer``; returns the
        layer's keys and values for positions [0, length + T)."""
        start, end = self.length, self.length + key.shape[-2]
        if end > self.max_length:
            raise ValueError(f"KVCache: writing {key.shape[-2]} positions after {start} exceeds the cache's "
                             f"max_length={self.max_length}")
        k, v = self.keys[layer], self.values[layer]
        if key.shape[0] != k.shape[0] or key.shape[1] != k.shape[1] or key.shape[3] != k.shape[3]:
            raise ValueError(f"KVCache: key of shape {list(key.shape)} does not fit the cache "
                             f"(batch {k.shape[0]}, {k.shape[1]} heads, head_dim {k.shape[3]})")
        # narrow + copy_: the same in-place write as slice assignment, with less Python per call
        k.narrow(2, start, end - start).copy_(key)
        v.narrow(2, start, end - start).copy_(value)
        return k.narrow(2, 0, end), v.narrow(2, 0, end)

    def advance(self, n: int) -> None:
        """Marks n more positions as filled (after every layer wrote them)."""
        self.length += n

    def reset(self) -> None:
        self.length = 0

    def __repr__(self) -> str:
        k = self.keys[0]
        return (f"KVCache(layers={len(self.keys)}, batch={k.shape[0]}, kv_heads={k.shape[1]}, "
                f"head_dim={k.shape[3]}, length={self.length}/{self.max_length}, dtype={k.dtype})")
