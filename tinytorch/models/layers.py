"""The blocks of a Llama-family decoder with Hugging Face ``transformers``' submodule names:
``LlamaMLP`` (SwiGLU, or gemma's GeGLU), ``LlamaAttention`` (grouped-query attention with rotary
embeddings and a KV cache; qwen3's q/k norms, gemma2's soft-capped scores, per-layer sliding windows) and
``LlamaDecoderLayer`` (pre-norm residual block; gemma2's extra norms around both sublayers)."""
from __future__ import annotations

from typing import Optional

from tinytorch._ops.shape import cat
from tinytorch.models.config import LlamaConfig
from tinytorch.models.kv_cache import KVCache
from tinytorch.models.rotary import apply_rotary_pos_emb
from tinytorch.models.variant_blocks import GemmaRMSNorm, softcapped_attention
from tinytorch.nn import functional as F
from tinytorch.models.init_control import Linear
from tinytorch.nn.modules.module import Module
from tinytorch.nn.modules.normalization import RMSNorm
from tinytorch.nn.modules.quantized import QuantizedLinear
from tinytorch._tensor.tensor import Tensor


def stack_rows(layers) -> Optional[QuantizedLinear]:
    """One :class:`QuantizedLinear` whose output is the concatenation of ``layers``' outputs
    (their packed rows stacked: the same values, one kernel call), or None when the layers aren't
    all packed in one qtype over one input size. The layers keep working: their weights (and
    biases) become row views of the stacked ones, so nothing is stored twice."""
    first = layers[0]
    if not all(isinstance(m, QuantizedLinear) and m.qtype == first.qtype and m.in_features == first.in_features
               and (m.bias is None) == (first.bias is None) for m in layers):
        return None
    data = _adjacent_rows([m.qweight for m in layers])
    if data is None:
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


def _adjacent_rows(parts) -> Optional[Tensor]:
    """The rows of ``parts`` (contiguous (rows_i, row_bytes) views) as one view, when they lie back to back
    in one storage (the GGUF loader packs q/k/v so); else None. One storage: the same base address."""
    first = parts[0]
    base = first.data_ptr() - first.storage_offset() * first.element_size()
    end = first.data_ptr()
    for p in parts:
        if (p.device != first.device or p.dtype != first.dtype or not p.is_contiguous() or p.dim() != 2
                or p.shape[1] != first.shape[1] or p.data_ptr() != end
                or p.data_ptr() - p.storage_offset() * p.element_size() != base):
            return None
        end += p.numel() * p.element_size()
    rows = sum(p.shape[0] for p in parts)
    return first.as_strided((rows, first.shape[1]), (first.shape[1], 1), first.storage_offset())


_ACTIVATIONS = ("silu", "gelu_tanh", "gelu")


def make_norm(config: LlamaConfig, size: int, device=None, dtype=None):
    """The RMSNorm of this architecture over ``size`` features: gemma's x * (1 + weight), else llama's."""
    cls = GemmaRMSNorm if config.gemma_norm else RMSNorm
    return cls(size, eps=config.rms_norm_eps, device=device, dtype=dtype)


def swiglu(x: Tensor, gate_weight: Tensor, up_weight: Tensor, down_weight: Tensor) -> Tensor:
    """down(silu(gate(x)) * up(x)): the SwiGLU feed-forward as a function of its weights."""
    return F.linear(F.silu(F.linear(x, gate_weight)) * F.linear(x, up_weight), down_weight)


class LlamaMLP(Module):
    """Gated feed-forward: down_proj(act(gate_proj(x)) * up_proj(x)); ``act`` "silu" (SwiGLU),
    "gelu_tanh" (gemma's GeGLU with the tanh-approximate GELU) or "gelu"."""

    def __init__(self, hidden_size: int, intermediate_size: int, bias: bool = False, device=None, dtype=None,
                 act: str = "silu") -> None:
        super().__init__()
        if act not in _ACTIVATIONS:
            raise ValueError(f"LlamaMLP: act must be one of {_ACTIVATIONS}, got {act!r}")
        self.act = act
        self.gate_proj = Linear(hidden_size, intermediate_size, bias=bias, device=device, dtype=dtype)
        self.up_proj = Linear(hidden_size, intermediate_size, bias=bias, device=device, dtype=dtype)
        self.down_proj = Linear(intermediate_size, hidden_size, bias=bias, device=device, dtype=dtype)

    def act_fn(self, x: Tensor) -> Tensor:
        if self.act == "silu":
            return F.silu(x)
        return F.gelu(x, approximate="tanh" if self.act == "gelu_tanh" else "none")

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
            return self.down_proj(self.act_fn(gate_up.narrow(-1, 0, inter)) * gate_up.narrow(-1, inter, inter))
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


class LlamaAttention(Module):
    """Multi-head attention with ``num_key_value_heads`` shared key/value heads (GQA), rotary
    position embeddings and an optional preallocated :class:`KVCache`; qwen3's per-head RMSNorms of
    queries and keys (``q_norm``/``k_norm``, before the rotary), gemma2's score scale, soft-capping
    and the layer's sliding window (mistral, gemma2, qwen2/qwen3: :meth:`LlamaConfig.layer_window`)."""

    def __init__(self, config: LlamaConfig, layer_idx: int, device=None, dtype=None) -> None:
        super().__init__()
        self.layer_idx = layer_idx
        self.num_heads, self.num_kv_heads = config.num_attention_heads, config.num_key_value_heads
        self.head_dim = config.head_dim
        self.rotary_convention = config.rotary_convention
        self.scale = config.attention_scale                       # None: 1 / sqrt(head_dim)
        self.softcap = config.attn_logit_softcapping if config.model_type == "gemma2" else None
        self.sliding_window = config.layer_window(layer_idx)
        h, d = config.hidden_size, config.head_dim
        kw = dict(device=device, dtype=dtype)
        self.q_proj = Linear(h, self.num_heads * d, bias=config.qkv_bias, **kw)
        self.k_proj = Linear(h, self.num_kv_heads * d, bias=config.qkv_bias, **kw)
        self.v_proj = Linear(h, self.num_kv_heads * d, bias=config.qkv_bias, **kw)
        self.o_proj = Linear(self.num_heads * d, h, bias=config.o_bias, **kw)
        if config.qk_norm:
            self.q_norm = RMSNorm(d, eps=config.rms_norm_eps, **kw)
            self.k_norm = RMSNorm(d, eps=config.rms_norm_eps, **kw)

    def fuse_projections(self) -> bool:
        """Adds ``qkv_proj``, packed q_proj/k_proj/v_proj stacked (one call per step instead of three,
        and the rotary of q and k in one pass; the three stay as views of it); returns whether it did."""
        fused = stack_rows([self.q_proj, self.k_proj, self.v_proj])
        if fused is not None:
            self.qkv_proj = fused
        return fused is not None

    def project(self, x: Tensor, cos: Tensor, sin: Tensor):
        """Queries (B, H, T, D) and keys (B, Hkv, T, D), normed (qwen3) and rotated, and values
        (B, Hkv, T, D) of x (B, T, hidden)."""
        B, T, H, Hkv, D = x.shape[0], x.shape[1], self.num_heads, self.num_kv_heads, self.head_dim
        conv = self.rotary_convention
        normed = "q_norm" in self._modules
        if "qkv_proj" in self._modules:
            qkv = self.qkv_proj(x)                                                         # (B, T, (H + 2 Hkv) D)
            v = qkv.narrow(-1, (H + Hkv) * D, Hkv * D).view(B, T, Hkv, D).transpose(1, 2)
            if not normed:
                qk = qkv.narrow(-1, 0, (H + Hkv) * D).view(B, T, H + Hkv, D).transpose(1, 2)   # (B, H + Hkv, T, D)
                qk = apply_rotary_pos_emb(qk, cos, sin, conv)
                return qk.narrow(1, 0, H), qk.narrow(1, H, Hkv), v
            q, k = qkv.narrow(-1, 0, H * D), qkv.narrow(-1, H * D, Hkv * D)
        else:
            q, k = self.q_proj(x), self.k_proj(x)
            v = self.v_proj(x).view(B, T, Hkv, D).transpose(1, 2)                          # (B, Hkv, T, D)
        q, k = q.reshape(B, T, H, D), k.reshape(B, T, Hkv, D)
        if normed:                                                                         # over each head's D
            q, k = self.q_norm(q), self.k_norm(k)
        return (apply_rotary_pos_emb(q.transpose(1, 2), cos, sin, conv),                   # (B, H, T, D)
                apply_rotary_pos_emb(k.transpose(1, 2), cos, sin, conv), v)

    def attend(self, q: Tensor, k: Tensor, v: Tensor, attn_mask: Optional[Tensor] = None,
               is_causal: bool = False) -> Tensor:
        """Attention of q (B, H, T, D) over k, v (B, Hkv, S, D) under a bool attn_mask (B or 1, 1, T, S)
        (True = attend) or ``is_causal``; (B, H, T, D)."""
        B, T = q.shape[0], q.shape[2]
        group = self.num_heads // self.num_kv_heads
        if self.softcap is not None:
            scale = self.scale if self.scale is not None else self.head_dim ** -0.5
            return softcapped_attention(q, k, v, attn_mask, is_causal, scale, self.softcap)
        if T == 1 and group > 1 and not is_causal:
            # one query per head: the group's G queries of a KV head become G rows against it,
            # so the cached keys/values are read in place instead of repeated G times
            return F.scaled_dot_product_attention(q.reshape(B, self.num_kv_heads, group, self.head_dim), k, v,
                                                  attn_mask=attn_mask, scale=self.scale
                                                  ).reshape(B, self.num_heads, 1, self.head_dim)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, is_causal=is_causal, scale=self.scale,
                                              enable_gqa=group > 1)

    def forward(self, x: Tensor, cos: Tensor, sin: Tensor, attn_mask: Optional[Tensor] = None,
                is_causal: bool = False, cache: Optional[KVCache] = None) -> Tensor:
        # x: (B, T, hidden); cos/sin: (B or 1, 1, T, D); attn_mask: (B or 1, 1, T, S) bool (True = attend)
        B, T = x.shape[0], x.shape[1]
        q, k, v = self.project(x, cos, sin)
        if cache is not None:
            k, v = cache.update(self.layer_idx, k, v)                                     # (B, Hkv, S, D)
        out = self.attend(q, k, v, attn_mask, is_causal)
        return self.o_proj(out.transpose(1, 2).reshape(B, T, self.num_heads * self.head_dim))


class LlamaDecoderLayer(Module):
    """x + attn(norm(x)), then + mlp(norm(.)), with RMSNorm before each; gemma2 (``post_norms``) also
    norms each sublayer's output (``post_attention_layernorm``, ``post_feedforward_layernorm``), its
    feed-forward input through ``pre_feedforward_layernorm``."""

    def __init__(self, config: LlamaConfig, layer_idx: int, device=None, dtype=None) -> None:
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        self.post_norms = config.post_norms
        self.self_attn = LlamaAttention(config, layer_idx, **kw)
        self.mlp = LlamaMLP(config.hidden_size, config.intermediate_size, config.mlp_bias, act=config.activation,
                            **kw)
        self.input_layernorm = make_norm(config, config.hidden_size, **kw)
        self.post_attention_layernorm = make_norm(config, config.hidden_size, **kw)
        if self.post_norms:
            self.pre_feedforward_layernorm = make_norm(config, config.hidden_size, **kw)
            self.post_feedforward_layernorm = make_norm(config, config.hidden_size, **kw)

    def residual_block(self, x: Tensor, attention) -> Tensor:
        """The layer around ``attention`` (a function of the normed x (B, T, hidden) to its output)."""
        if not self.post_norms:
            x = x + attention(self.input_layernorm(x))
            return x + self.mlp(self.post_attention_layernorm(x))
        x = x + self.post_attention_layernorm(attention(self.input_layernorm(x)))
        return x + self.post_feedforward_layernorm(self.mlp(self.pre_feedforward_layernorm(x)))

    def forward(self, x: Tensor, cos: Tensor, sin: Tensor, attn_mask: Optional[Tensor] = None,
                is_causal: bool = False, cache: Optional[KVCache] = None) -> Tensor:
        return self.residual_block(x, lambda h: self.self_attn(h, cos, sin, attn_mask, is_causal, cache))
