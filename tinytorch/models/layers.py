"""The blocks of a Llama-family decoder with Hugging Face ``transformers``' submodule names:
``LlamaMLP`` (SwiGLU), ``LlamaAttention`` (grouped-query attention with rotary embeddings and a KV
cache) and ``LlamaDecoderLayer`` (pre-norm residual block)."""
from __future__ import annotations

from typing import Optional

from tinytorch._functional import cat
from tinytorch.models.config import LlamaConfig
from tinytorch.models.kv_cache import KVCache
from tinytorch.models.rotary import apply_rotary_pos_emb
from tinytorch.nn import functional as F
from tinytorch.models.init_control import Linear
from tinytorch.nn.modules.module import Module
from tinytorch.nn.modules.normalization import RMSNorm
from tinytorch.nn.modules.quantized import QuantizedLinear
from tinytorch.tensor import Tensor


def stack_rows(layers) -> Optional[QuantizedLinear]:
    """One :class:`QuantizedLinear` whose output is the concatenation of ``layers``' outputs
    (their packed rows stacked: the same values, one kernel call), or None when the layers aren't
    all packed in one qtype over one input size. The layers keep working: their weights (and
    biases) become row views of the stacked ones, so nothing is stored twice."""
    first = layers[0]
    if not all(isinstance(m, QuantizedLinear) and m.qtype == first.qtype and m.in_features == first.in_features
               and (m.bias is None) == (first.bias is None) for m in layers):
        return None
    data = cat([m.qweight for m in layers], 0)
    bias = cat([m.bias for m in layers], 0) if first.bias is not None else None
    fused = QuantizedLinear(first.in_features, sum(m.out_features for m in layers), first.qtype, data, bias)
    start = 0
    for m in layers:
        m.qweight = fused.qweight.narrow(0, start, m.out_features)
        if bias is not None:
            m.bias = fused.bias.narrow(0, start, m.out_features)
        start += m.out_features
    return fused


def swiglu(x: Tensor, gate_weight: Tensor, up_weight: Tensor, down_weight: Tensor) -> Tensor:
    """down(silu(gate(x)) * up(x)): the SwiGLU feed-forward as a function of its weights."""
    return F.linear(F.silu(F.linear(x, gate_weight)) * F.linear(x, up_weight), down_weight)


class LlamaMLP(Module):
    """SwiGLU feed-forward: down_proj(silu(gate_proj(x)) * up_proj(x))."""

    def __init__(self, hidden_size: int, intermediate_size: int, bias: bool = False, device=None, dtype=None) -> None:
        super().__init__()
        self.gate_proj = Linear(hidden_size, intermediate_size, bias=bias, device=device, dtype=dtype)
        self.up_proj = Linear(hidden_size, intermediate_size, bias=bias, device=device, dtype=dtype)
        self.down_proj = Linear(intermediate_size, hidden_size, bias=bias, device=device, dtype=dtype)

    def fuse_projections(self) -> bool:
        """Adds ``gate_up_proj``, packed gate_proj and up_proj stacked (a step makes one call instead of
        two; the two stay as views of it); returns whether it did."""
        fused = stack_rows([self.gate_proj, self.up_proj])
        if fused is not None:
            self.gate_up_proj = fused
        return fused is not None

    def forward(self, x: Tensor) -> Tensor:
        if "gate_up_proj" in self._modules:
            gate_up = self.gate_up_proj(x)                                   # (..., 2 * intermediate)
            inter = gate_up.shape[-1] // 2
            return self.down_proj(F.silu(gate_up.narrow(-1, 0, inter)) * gate_up.narrow(-1, inter, inter))
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class LlamaAttention(Module):
    """Multi-head attention with ``num_key_value_heads`` shared key/value heads (GQA), rotary
    position embeddings and an optional preallocated :class:`KVCache`."""

    def __init__(self, config: LlamaConfig, layer_idx: int, device=None, dtype=None) -> None:
        super().__init__()
        self.layer_idx = layer_idx
        self.num_heads, self.num_kv_heads = config.num_attention_heads, config.num_key_value_heads
        self.head_dim = config.head_dim
        self.rotary_convention = config.rotary_convention
        h, d = config.hidden_size, config.head_dim
        kw = dict(device=device, dtype=dtype)
        self.q_proj = Linear(h, self.num_heads * d, bias=config.qkv_bias, **kw)
        self.k_proj = Linear(h, self.num_kv_heads * d, bias=config.qkv_bias, **kw)
        self.v_proj = Linear(h, self.num_kv_heads * d, bias=config.qkv_bias, **kw)
        self.o_proj = Linear(self.num_heads * d, h, bias=config.o_bias, **kw)

    def fuse_projections(self) -> bool:
        """Adds ``qkv_proj``, packed q_proj/k_proj/v_proj stacked (one call per step instead of three,
        and the rotary of q and k in one pass; the three stay as views of it); returns whether it did."""
        fused = stack_rows([self.q_proj, self.k_proj, self.v_proj])
        if fused is not None:
            self.qkv_proj = fused
        return fused is not None

    def _qkv(self, x: Tensor, cos: Tensor, sin: Tensor):
        B, T, H, Hkv, D = x.shape[0], x.shape[1], self.num_heads, self.num_kv_heads, self.head_dim
        if "qkv_proj" in self._modules:
            qkv = self.qkv_proj(x)                                                         # (B, T, (H + 2 Hkv) D)
            qk = qkv.narrow(-1, 0, (H + Hkv) * D).view(B, T, H + Hkv, D).transpose(1, 2)   # (B, H + Hkv, T, D)
            qk = apply_rotary_pos_emb(qk, cos, sin, self.rotary_convention)
            v = qkv.narrow(-1, (H + Hkv) * D, Hkv * D).view(B, T, Hkv, D).transpose(1, 2)
            return qk.narrow(1, 0, H), qk.narrow(1, H, Hkv), v
        q = self.q_proj(x).view(B, T, H, D).transpose(1, 2)                                # (B, H, T, D)
        k = self.k_proj(x).view(B, T, Hkv, D).transpose(1, 2)                              # (B, Hkv, T, D)
        v = self.v_proj(x).view(B, T, Hkv, D).transpose(1, 2)
        return (apply_rotary_pos_emb(q, cos, sin, self.rotary_convention),
                apply_rotary_pos_emb(k, cos, sin, self.rotary_convention), v)

    def forward(self, x: Tensor, cos: Tensor, sin: Tensor, attn_mask: Optional[Tensor] = None,
                is_causal: bool = False, cache: Optional[KVCache] = None) -> Tensor:
        # x: (B, T, hidden); cos/sin: (B or 1, 1, T, D); attn_mask: (B or 1, 1, T, S) bool (True = attend)
        B, T = x.shape[0], x.shape[1]
        q, k, v = self._qkv(x, cos, sin)
        if cache is not None:
            k, v = cache.update(self.layer_idx, k, v)                                     # (B, Hkv, S, D)
        group = self.num_heads // self.num_kv_heads
        if T == 1 and group > 1 and not is_causal:
            # one query per head: the group's G queries of a KV head become G rows against it,
            # so the cached keys/values are read in place instead of repeated G times
            out = F.scaled_dot_product_attention(q.reshape(B, self.num_kv_heads, group, self.head_dim), k, v,
                                                 attn_mask=attn_mask).reshape(B, self.num_heads, 1, self.head_dim)
        else:
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, is_causal=is_causal,
                                                 enable_gqa=group > 1)
        return self.o_proj(out.transpose(1, 2).reshape(B, T, self.num_heads * self.head_dim))


class LlamaDecoderLayer(Module):
    """x + attn(norm(x)), then + mlp(norm(.)), with RMSNorm before each."""

    def __init__(self, config: LlamaConfig, layer_idx: int, device=None, dtype=None) -> None:
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        self.self_attn = LlamaAttention(config, layer_idx, **kw)
        self.mlp = LlamaMLP(config.hidden_size, config.intermediate_size, config.mlp_bias, **kw)
        self.input_layernorm = RMSNorm(config.hidden_size, eps=config.rms_norm_eps, **kw)
        self.post_attention_layernorm = RMSNorm(config.hidden_size, eps=config.rms_norm_eps, **kw)

    def forward(self, x: Tensor, cos: Tensor, sin: Tensor, attn_mask: Optional[Tensor] = None,
                is_causal: bool = False, cache: Optional[KVCache] = None) -> Tensor:
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, attn_mask, is_causal, cache)
        return x + self.mlp(self.post_attention_layernorm(x))
