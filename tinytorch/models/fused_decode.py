"""The decode step in one call: every decoder layer of one new token per sequence run by
``_C.DecodeStack`` (cpp/src/ops/decode.cpp) instead of ~25 Python-dispatched ops per layer. On the
CPU it runs the eager layers' own ops in their order (RMSNorm, the packed or dense projections,
SiLU, the residual adds), so it computes what they compute; the attention (rotary, cache write,
softmax over the cache) is one kernel whose sums run in another order (within float32 rounding of
the eager one). On CUDA each layer is five kernels (cuda/src/decode.cu: RMSNorm + q/k/v, attention,
o_proj + residual, RMSNorm + gate/up + SwiGLU, down_proj + residual; sums in their own order) for
up to 8 sequences, the composed ops for more.

:meth:`LlamaModel.forward` takes it for a step of one token into a :class:`KVCache` on the CPU or a
GPU, in float32, without autograd recording, without ``attention_mask`` or ``position_ids`` (no
padding), when every layer is a plain Llama block: RMSNorm, no q/k norms, no soft-capping, no
post-norms, SwiGLU, projections that are ``QuantizedLinear`` or the models' ``Linear``, no forward
hooks or replaced forwards (tensor parallelism has both), head_dim <= 256 on CUDA. Any other step
runs the eager layers. ``generate(cuda_graph=True)`` captures :func:`static_step` (the position read
on the device). ``tinytorch.backends.cpu.fused_decode = False`` (``backends.cuda`` for GPUs) turns it off.

The stack is built on the first fused step of a cache and kept on it (``cache.fused_step``): it
holds the layers' weight tensors (in-place changes to them are seen; weights replaced by new
tensors are seen by the next cache, i.e. the next ``generate``)."""
from __future__ import annotations

from typing import List, Optional

from tinytorch import _C
from tinytorch._core.dtype import float32
from tinytorch._core.graph import is_grad_enabled
from tinytorch._core.tensor_base import TensorBase as Tensor, _wrap
from tinytorch.backends import cpu as _cpu_backend, cuda as _cuda_backend
from tinytorch.models.init_control import Linear
from tinytorch.models.kv_cache import KVCache
from tinytorch.nn.modules.normalization import RMSNorm
from tinytorch.nn.modules.quantized import QuantizedLinear


def decode_step(model, input_ids: Tensor, cache: KVCache) -> Optional[Tensor]:
    """The final-normed hidden states (B, 1, hidden) of ``model`` (a LlamaModel) for input_ids (B, 1) at
    the cache's next position, advancing the cache; None (nothing done) where the step must run eagerly."""
    if not _enabled(input_ids.device) or cache.length >= cache.max_length:   # (the eager step says why)
        return None
    stack = _stack(model, cache)
    if stack is None:
        return None
    pos = cache.length
    x = model.embed(input_ids)                                           # (B, 1, hidden)
    B, hidden = x.shape[0], x.shape[2]
    cos, sin = model.rotary_emb.angles_at(pos, float32, x.device)        # (D,), (D,)
    h = _wrap(stack.step(x.reshape(B, hidden)._impl, pos, cos._impl, sin._impl))
    cache.advance(1)
    return model.norm(h.view(B, 1, hidden))


def static_step(model, token: Tensor, position: Tensor, cache: KVCache) -> Optional[Tensor]:
    """The final-normed hidden states (B, 1, hidden) of ``model`` (a LlamaModel) for token (B, 1) at
    the position ``position`` (a (1,) int64 device tensor) holds, read on the device: what a CUDA
    graph captures (models/graph_decode.py). Writes every layer's keys/values there and leaves
    ``cache.length`` alone; None where the step must run eagerly."""
    if not _enabled(token.device):
        return None
    stack = _stack(model, cache)
    if stack is None:
        return None
    x = model.embed(token)                                               # (B, 1, hidden)
    B, hidden = x.shape[0], x.shape[2]
    cos, sin = model.rotary_emb(position.view(1, 1), float32, cache.max_length)   # (1, 1, 1, D)
    h = _wrap(stack.step_at(x.reshape(B, hidden)._impl, position._impl, cos._impl, sin._impl))
    return model.norm(h.view(B, 1, hidden))


def _enabled(device) -> bool:
    backend = {"cpu": _cpu_backend, "cuda": _cuda_backend}.get(device.type)
    return backend is not None and backend.fused_decode and not is_grad_enabled()


def _stack(model, cache: KVCache):
    """The cache's DecodeStack for model (built on first use), or None when model's layers don't fit it."""
    kept = cache.fused_step
    if kept is None or kept[0] is not model:
        kept = cache.fused_step = (model, _build(model, cache))
    return kept[1]


def _build(model, cache: KVCache):
    config = model.config
    device = cache.keys[0].device.type
    if (cache.keys[0].dtype != float32 or device not in ("cpu", "cuda")
            or device == "cuda" and model.layers[0].self_attn.head_dim > 256):
        return None
    eps = config.rms_norm_eps
    layers = []
    for i, layer in enumerate(model.layers):
        attn, mlp = layer.self_attn, layer.mlp
        norms = (layer.input_layernorm, layer.post_attention_layernorm)
        if (layer.post_norms or "q_norm" in attn._modules or attn.softcap is not None or mlp.act != "silu"
                or any(m._forward_hooks or m._forward_pre_hooks or "forward" in m.__dict__   # (tensor parallel)
                       for m in layer.modules())
                or not all(type(n) is RMSNorm and n.weight is not None and n.weight.dtype == float32
                           and n.eps == eps for n in norms)):
            return None
        parts = [_parts(attn, "qkv_proj", ("q_proj", "k_proj", "v_proj")), _parts(attn, "o_proj"),
                 _parts(mlp, "gate_up_proj", ("gate_proj", "up_proj")), _parts(mlp, "down_proj")]
        if None in parts:
            return None
        layers.append(_C.DecodeLayer(norms[0].weight._impl, norms[1].weight._impl, *parts, cache.keys[i]._impl,
                                     cache.values[i]._impl, attn.sliding_window or 0))
    first = model.layers[0].self_attn
    scale = first.scale if first.scale is not None else first.head_dim ** -0.5
    return _C.DecodeStack(layers, first.num_heads, first.num_kv_heads, first.head_dim, scale,
                          first.rotary_convention == "interleaved", eps)


def _parts(module, fused: str, separate=None) -> Optional[List]:
    """The DecodeLinears of a projection: its fused form where the module has one, else its parts."""
    names = (fused,) if fused in module._modules or separate is None else separate
    out = [_linear(module._modules[n]) for n in names]
    return None if None in out else out


def _linear(m):
    bias = m.bias
    if bias is not None and bias.dtype != float32:
        return None
    b = None if bias is None else bias._impl
    if type(m).forward is QuantizedLinear.forward:
        return _C.DecodeLinear(m.qweight._impl, m.qtype, m.out_features, m.in_features, b)
    if type(m).forward is Linear.forward and m.weight.dtype == float32:
        return _C.DecodeLinear(m.weight._impl, -1, m.out_features, m.in_features, b)
    return None
