"""The pieces by which qwen3 and gemma/gemma2 differ from llama, with Hugging Face ``transformers``'
semantics: ``GemmaRMSNorm`` (x * (1 + weight), computed in float32), ``soft_cap`` (gemma2's
cap * tanh(x / cap) of attention scores and logits), ``softcapped_attention`` (attention whose scores
are soft-capped, which a fused kernel cannot do) and ``sliding_window_mask`` (gemma2's local layers)."""
from __future__ import annotations

from typing import Optional

from tinytorch._tensor.creation import ones, zeros
from tinytorch._core.dtype import bfloat16, bool_, float16
from tinytorch.nn import functional as F
from tinytorch.nn.modules.module import Module
from tinytorch.nn.parameter import Parameter
from tinytorch._tensor.tensor import Tensor


class GemmaRMSNorm(Module):
    """RMSNorm whose scale is ``1 + weight`` (gemma's; ``weight`` starts at 0): the normalization and
    the product run in float32 and the result is cast back to the input's dtype, as transformers'
    ``GemmaRMSNorm`` (llama's norm casts before the product)."""

    def __init__(self, hidden_size: int, eps: float = 1e-6, device=None, dtype=None) -> None:
        super().__init__()
        self.normalized_shape, self.eps = (hidden_size,), eps
        self.weight = Parameter(zeros(hidden_size, device=device, dtype=dtype))

    def forward(self, x: Tensor) -> Tensor:
        if x.shape[-1] != self.normalized_shape[0]:
            raise ValueError(f"GemmaRMSNorm: expected input with last dimension {self.normalized_shape[0]}, got "
                             f"shape {list(x.shape)}")
        xf = x.float() if x.dtype in (float16, bfloat16) else x
        out = F.rms_norm(xf, self.normalized_shape, None, self.eps) * (self.weight.to(dtype=xf.dtype) + 1.0)
        return out if out.dtype == x.dtype else out.to(dtype=x.dtype)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}"


def soft_cap(x: Tensor, cap: float) -> Tensor:
    """cap * tanh(x / cap): squashes x smoothly into (-cap, cap) (gemma2's logit soft-capping)."""
    if not cap > 0:
        raise ValueError(f"soft_cap: cap must be positive, got {cap!r}")
    return (x / cap).tanh() * cap


def sliding_window_mask(keep: Tensor, past: int, window: int) -> Tensor:
    """``keep`` (..., T, S) bool (query i is at cache index past + i, key j at index j) minus the keys
    at least ``window`` indices before the query: a query at index q sees keys q - window < j <= q, as
    transformers' sliding-window mask (indices in the cache, so left padding counts)."""
    T, S = keep.shape[-2], keep.shape[-1]
    near = ones(T, S, dtype=bool_, device=keep.device).triu(past - window + 1)   # j - i > past - window
    return keep.logical_and(near)


def softcapped_attention(q: Tensor, k: Tensor, v: Tensor, attn_mask: Optional[Tensor], is_causal: bool,
                         scale: float, softcap: Optional[float]) -> Tensor:
    """softmax(cap * tanh(q k^T * scale / cap) masked) v with grouped keys/values, as transformers'
    eager attention (scores in the input dtype, the softmax of half-precision scores in float32).

    q: (B, H, T, D); k, v: (B, Hkv, S, D) with H a multiple of Hkv; attn_mask: bool (B or 1, 1, T, S)
    (True = attend) or None; is_causal: a bottom-right aligned causal mask (query i sees keys
    j <= S - T + i) when attn_mask is None. Returns (B, H, T, D)."""
    B, H, T, D = q.shape
    Hkv, S = k.shape[1], k.shape[2]
    G = H // Hkv
    # the G queries of a KV head against it, keys/values read in place: (B, Hkv, G, T, D)
    qg = q.reshape(B, Hkv, G, T, D)
    scores = (qg @ k.unsqueeze(2).transpose(-1, -2)) * scale                     # (B, Hkv, G, T, S)
    if softcap is not None:
        scores = soft_cap(scores, softcap)
    if attn_mask is None and is_causal:
        attn_mask = ones(T, S, dtype=bool_, device=q.device).tril(S - T)[None, None]
    if attn_mask is not None:
        scores = scores.masked_fill(attn_mask.logical_not().unsqueeze(2), float("-inf"))
    low = scores.dtype in (float16, bfloat16)   # half scores: the softmax in float32 (float64 stays)
    probs = F.softmax(scores.float() if low else scores, -1).to(dtype=q.dtype)
    return (probs @ v.unsqueeze(2)).reshape(B, H, T, D)
