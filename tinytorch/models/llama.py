"""``LlamaModel`` and ``LlamaForCausalLM`` (llama, mistral, qwen2, qwen3, gemma, gemma2) with Hugging Face
``transformers``' parameter names, so an HF checkpoint's state dict loads as it is."""
from __future__ import annotations

import functools
import os
from typing import Optional, Union

from tinytorch._tensor.creation import arange, ones, tensor
from tinytorch._core.dtype import bool_, float32, int64
from tinytorch.distributed.tensor.parallel.style import ColwiseParallel, ParallelStyle, RowwiseParallel
from tinytorch.distributed.tensor.placement_types import Replicate
from tinytorch.models.config import LlamaConfig
from tinytorch.models.fused_decode import decode_step
from tinytorch.models.generation import GenerationMixin, positions_from_mask
from tinytorch.models.graph_decode import DecodeGraphCache
from tinytorch.models.kv_cache import KVCache
from tinytorch.models.layers import LlamaAttention, LlamaDecoderLayer, LlamaMLP, make_norm
from tinytorch.models.rotary import RotaryEmbedding
from tinytorch.models.variant_blocks import sliding_window_mask, soft_cap
from tinytorch.nn.modules.container import ModuleList
from tinytorch.models.init_control import Linear
from tinytorch.models.init_control import Embedding
from tinytorch.nn.modules.module import Module
from tinytorch.nn.modules.quantized import QuantizedLinear
from tinytorch._tensor.tensor import Tensor


def _inside_another(t: Tensor, others) -> bool:
    """Whether t's bytes lie within a larger tensor's among others (a row view of a fused weight)."""
    lo, hi = t.data_ptr(), t.data_ptr() + t.numel() * t.element_size()
    return any(o is not t and o.numel() > t.numel() and o.device == t.device and o.data_ptr() <= lo
               and hi <= o.data_ptr() + o.numel() * o.element_size() for o in others)


def attention_keep_mask(attention_mask: Optional[Tensor], past: int, length: int, device) -> Tensor:
    """The bool (B or 1, 1, T, S) mask of which keys each of T new queries (after ``past`` cached
    positions, S = past + T) attends to: causal, minus padded keys. A query always sees itself, so a
    padded query's row is never empty (its output is unused, but must not be NaN)."""
    S = past + length
    grid = ones(length, S, dtype=bool_, device=device)
    causal = grid.tril(past)                                   # key j <= past + i
    keep = causal
    if attention_mask is not None:
        valid = attention_mask.to(dtype=bool_)[:, None, None, :]   # (B, 1, 1, S)
        itself = causal.logical_and(grid.tril(past - 1).logical_not())
        keep = causal.logical_and(valid).logical_or(itself)
    return keep if keep.dim() == 4 else keep[None, None]


@functools.lru_cache(maxsize=None)
def rounded_to(value: float, dtype) -> float:
    """value (a float32 number, as transformers' buffer) rounded to dtype, as a Python float."""
    return tensor(value, dtype=float32).to(dtype=dtype).item()


def layer_masks(windows, attention_mask: Optional[Tensor], past: int, length: int, device):
    """(mask, is_causal) for the layers attending to everything before them and, by window, for the
    sliding-window layers of ``windows`` (mistral, gemma2, qwen2/qwen3): masks as
    :func:`attention_keep_mask`, or None with ``is_causal`` (a prompt into an empty cache, no padding);
    a window's own mask only where some key falls out of it."""
    is_causal = attention_mask is None and past == 0 and length > 1
    mask = None
    if attention_mask is not None or (past > 0 and length > 1):
        mask = attention_keep_mask(attention_mask, past, length, device)
    full = (mask, is_causal)
    local = {}
    for w in windows:
        if past + length - 1 < w:                          # every key still in the window
            local[w] = full
        else:
            keep = mask if mask is not None else attention_keep_mask(None, past, length, device)
            local[w] = (sliding_window_mask(keep, past, w), False)
    return full, local


class LlamaModel(Module):
    """Token embeddings, ``num_hidden_layers`` decoder layers and the final RMSNorm."""

    def __init__(self, config: LlamaConfig, device=None, dtype=None) -> None:
        super().__init__()
        self.config = config
        kw = dict(device=device, dtype=dtype)
        self.embed_tokens = Embedding(config.vocab_size, config.hidden_size, **kw)
        self.layers = ModuleList([LlamaDecoderLayer(config, i, **kw) for i in range(config.num_hidden_layers)])
        self.norm = make_norm(config, config.hidden_size, **kw)
        # the sliding windows of the layers that have one (mistral, gemma2, qwen2/qwen3's layer_types)
        self.windows = sorted({config.layer_window(i) for i in range(config.num_hidden_layers)} - {None})
        self.rotary_emb = RotaryEmbedding(config.head_dim, config.max_position_embeddings, config.rope_theta,
                                          config.rope_scaling, config.rotary_convention, device=device)

    def embed(self, input_ids: Tensor) -> Tensor:
        """The (B, T, hidden) embeddings of input_ids (B, T); gemma's scaled by sqrt(hidden) rounded to
        the model dtype (as transformers)."""
        x = self.embed_tokens(input_ids)
        scale = self.config.embed_scale
        if scale is not None:
            x = x * rounded_to(scale, x.dtype)
        return x

    def forward(self, input_ids: Tensor, attention_mask: Optional[Tensor] = None,
                position_ids: Optional[Tensor] = None, past_key_values: Optional[KVCache] = None) -> Tensor:
        """Hidden states (B, T, hidden) of input_ids (B, T); ``attention_mask`` (B, past + T) of 0/1
        marks padding (left padding), ``past_key_values`` a :class:`KVCache` to read and extend."""
        if input_ids.dim() != 2:
            raise ValueError(f"LlamaModel: input_ids must be (batch, length), got shape {list(input_ids.shape)}")
        B, T = input_ids.shape[0], input_ids.shape[1]
        cache = past_key_values
        past = cache.length if cache is not None else 0
        self.config.check_length(past + T, "LlamaModel.forward")
        dev = input_ids.device
        if attention_mask is not None and tuple(attention_mask.shape) != (B, past + T):
            raise ValueError(f"LlamaModel: attention_mask must be (batch, past + length) = {(B, past + T)}, "
                             f"got {list(attention_mask.shape)}")
        if T == 1 and cache is not None and attention_mask is None and position_ids is None:
            h = decode_step(self, input_ids, cache)          # the fused step, where it applies
            if h is not None:
                return h
        if position_ids is None:
            if attention_mask is not None:
                position_ids = positions_from_mask(attention_mask)[:, past:]
            else:
                position_ids = arange(past, past + T, dtype=int64, device=dev)[None]
        x = self.embed(input_ids)
        cos, sin = self.rotary_emb(position_ids, x.dtype, past + T)
        full, local = layer_masks(self.windows, attention_mask, past, T, dev)
        for layer in self.layers:
            window = layer.self_attn.sliding_window
            mask, is_causal = full if window is None else local[window]
            x = layer(x, cos, sin, mask, is_causal, cache)
        if cache is not None:
            cache.advance(T)
        return self.norm(x)


class LlamaForCausalLM(Module, GenerationMixin):
    """A Llama-family causal language model: ``model`` (:class:`LlamaModel`) and ``lm_head``
    (tied to ``model.embed_tokens`` when ``config.tie_word_embeddings``); ``generate`` from
    :class:`~tinytorch.models.generation.GenerationMixin`. ``decode_graphs`` keeps the
    decode steps that ``generate(cuda_graph=True)`` captured, for later calls
    (:class:`~tinytorch.models.graph_decode.DecodeGraphCache`; ``decode_graphs.clear()`` frees them)."""

    def __init__(self, config: LlamaConfig, device=None, dtype=None) -> None:
        super().__init__()
        self.config = config
        self.model = LlamaModel(config, device=device, dtype=dtype)
        self.lm_head = Linear(config.hidden_size, config.vocab_size, bias=False, device=device, dtype=dtype)
        self.decode_graphs = DecodeGraphCache()
        self.tie_weights()

    def tie_weights(self) -> None:
        # a packed head (QuantizedLinear from a GGUF's embedding blocks) is already tied by content
        if self.config.tie_word_embeddings and isinstance(self.lm_head, Linear):
            self.lm_head.weight = self.model.embed_tokens.weight

    def num_parameters(self, only_trainable: bool = False, exclude_embeddings: bool = False) -> int:
        """The number of weights, as transformers' ``num_parameters``: each counted once, whatever
        its layer type (a tied head is the embedding; a packed :class:`~tinytorch.nn.QuantizedLinear`
        counts its in x out weights, and layers whose packed rows are views of a fused layer's, such
        as q/k/v beside ``qkv_proj``, count within it)."""
        skip = {id(m) for m in (self.model.embed_tokens, self.lm_head)} if exclude_embeddings else set()
        if self.config.tie_word_embeddings:
            skip.add(id(self.lm_head))
        packed, dense = [], {}
        for module in self.modules():
            if id(module) in skip:
                continue
            if isinstance(module, QuantizedLinear):
                if not only_trainable:
                    bias = module.bias.numel() if module.bias is not None else 0
                    packed.append((module.qweight, module.in_features * module.out_features + bias))
                continue
            for p in module.parameters(recurse=False):
                if p.requires_grad or not only_trainable:
                    dense[id(p)] = p
        return (sum(p.numel() for p in dense.values())
                + sum(n for t, n in packed if not _inside_another(t, [q for q, _ in packed])))

    def get_memory_footprint(self) -> int:
        """Bytes held by the parameters and buffers, each storage counted once (as transformers'
        ``get_memory_footprint``; packed weights count as stored)."""
        spans = sorted({(t.data_ptr(), t.data_ptr() + t.numel() * t.element_size())
                        for t in list(self.parameters()) + list(self.buffers()) if t.numel()})
        total, end = 0, 0
        for lo, hi in spans:   # union of the byte ranges: views of one storage count once
            total += max(0, hi - max(lo, end))
            end = max(end, hi)
        return total

    def forward(self, input_ids: Tensor, attention_mask: Optional[Tensor] = None,
                position_ids: Optional[Tensor] = None, past_key_values: Optional[KVCache] = None,
                logits_to_keep: int = 0) -> Tensor:
        """Logits (B, T, vocab) of input_ids (B, T); ``logits_to_keep=k`` computes them for the last k
        positions only (generation needs the last one). Arguments as :meth:`LlamaModel.forward`."""
        h = self.model(input_ids, attention_mask, position_ids, past_key_values)
        if logits_to_keep:
            h = h[:, -logits_to_keep:]
        return self.logits(h)

    def logits(self, h: Tensor) -> Tensor:
        """lm_head of the final hidden states, soft-capped where the config says (gemma2)."""
        out = self.lm_head(h)
        cap = self.config.final_logit_softcapping
        return soft_cap(out, cap) if cap is not None else out

    def make_cache(self, batch_size: int, max_length: int, dtype=None, device=None) -> KVCache:
        """A :class:`KVCache` for ``batch_size`` sequences of up to ``max_length`` positions, in the
        model's dtype and device unless given."""
        w = self.model.embed_tokens.weight
        c = self.config
        layers = self.model.layers
        # the attention's own KV heads: n_kv_heads / N under N-way tensor parallelism
        kv_heads = layers[0].self_attn.num_kv_heads if len(layers) else c.num_key_value_heads
        return KVCache(c.num_hidden_layers, batch_size, kv_heads, c.head_dim, max_length,
                       dtype=dtype or w.dtype, device=device or w.device)

    @classmethod
    def from_pretrained(cls, path: Union[str, os.PathLike], dtype=None, device=None) -> "LlamaForCausalLM":
        """Loads a Hugging Face checkpoint directory: ``config.json`` and ``model.safetensors`` (or
        shards listed in ``model.safetensors.index.json``). ``dtype`` casts the floating-point
        weights (default: keep the checkpoint's), ``device`` places them (default CPU)."""
        from tinytorch.models.safetensors_loader import load_pretrained
        return load_pretrained(cls, path, dtype=dtype, device=device)

    @classmethod
    def from_gguf(cls, path: Union[str, os.PathLike], dtype=None, device=None) -> "LlamaForCausalLM":
        """Loads a llama.cpp GGUF file (llama, mistral, qwen2, qwen3, gemma, gemma2): see
        :func:`tinytorch.models.gguf_loader.load_gguf`."""
        from tinytorch.models.gguf_loader import load_gguf
        return load_gguf(cls, path, dtype=dtype, device=device)


# ---------------------------------------------------------------------------------------------------
# Tensor parallelism (tinytorch.distributed.tensor.parallel)
# ---------------------------------------------------------------------------------------------------
class ShardedBlock(ParallelStyle):
    """The attention or feed-forward block of a tensor-parallel plan (:func:`tensor_parallel_plan`),
    listed after its projections. Before anything is sharded it checks that an attention's heads
    and key/value heads split evenly over the mesh; once its projections are sharded, the attention
    runs with its local heads (n_heads / N, n_kv_heads / N: its KV cache holds only those), and
    packed projections stacked by ``fuse_projections`` (``qkv_proj``, ``gate_up_proj``) are stacked
    again from the shards."""

    def _check(self, fqn: str, module: Module, device_mesh) -> None:
        n = device_mesh.size()
        if isinstance(module, LlamaAttention):
            if module.num_heads % n or module.num_kv_heads % n:
                raise ValueError(f"tensor parallel: {fqn or 'the attention'} has {module.num_heads} attention heads "
                                 f"and {module.num_kv_heads} key/value heads; both must be divisible by the mesh "
                                 f"size {n}")
        elif not isinstance(module, LlamaMLP):
            raise NotImplementedError(f"ShardedBlock: {fqn or 'the module'} is a {type(module).__name__}, not a "
                                      "LlamaAttention or LlamaMLP")

    def _apply(self, module: Module, device_mesh) -> Module:
        n = device_mesh.size()
        if isinstance(module, LlamaAttention):
            d = module.head_dim
            heads, kv_heads = module.num_heads // n, module.num_kv_heads // n
            sizes = (module.q_proj.out_features, module.k_proj.out_features, module.v_proj.out_features,
                     module.o_proj.in_features)
            if sizes != (heads * d, kv_heads * d, kv_heads * d, heads * d):
                raise ValueError(f"ShardedBlock: the attention's projections hold (q, k, v, o) = {sizes} features, "
                                 f"not those of {heads} local heads and {kv_heads} KV heads of {d}: the plan must "
                                 "shard q/k/v_proj (ColwiseParallel) and o_proj (RowwiseParallel) before the block")
            module.num_heads, module.num_kv_heads = heads, kv_heads
            if "qkv_proj" in module._modules:
                del module.qkv_proj
                module.fuse_projections()
        elif "gate_up_proj" in module._modules:
            del module.gate_up_proj
            module.fuse_projections()
        return module


def tensor_parallel_plan(model: Union[LlamaForCausalLM, LlamaModel]) -> dict:
    """The tensor-parallel plan of a Llama-family model for
    :func:`tinytorch.distributed.tensor.parallel.parallelize_module` (Megatron-LM's layout):
    the embedding vocabulary-parallel (``RowwiseParallel``, each rank a range of token rows), in
    every layer q/k/v_proj and gate/up_proj ``ColwiseParallel`` and o_proj and down_proj
    ``RowwiseParallel`` (one all-reduce after the attention and one after the MLP), the attention
    with its local heads (:class:`ShardedBlock`), and the LM head ``ColwiseParallel`` with its logits
    gathered (every rank gets the whole vocabulary's). Packed GGUF projections shard too.

    Example::

        >>> mesh = init_device_mesh("cpu", (dist.get_world_size(),))
        >>> parallelize_module(model, mesh, tensor_parallel_plan(model))
        >>> model.generate(ids, max_new_tokens=20)      # the same tokens on every rank
    """
    if isinstance(model, LlamaForCausalLM):
        prefix = "model."
    elif isinstance(model, LlamaModel):
        prefix = ""
    else:
        raise TypeError(f"tensor_parallel_plan: expected a LlamaForCausalLM or LlamaModel, got {type(model).__name__}")
    layer = f"{prefix}layers.*"
    plan = {f"{prefix}embed_tokens": RowwiseParallel(input_layouts=Replicate())}
    for name in ("q_proj", "k_proj", "v_proj"):
        plan[f"{layer}.self_attn.{name}"] = ColwiseParallel()
    plan[f"{layer}.self_attn.o_proj"] = RowwiseParallel()
    plan[f"{layer}.self_attn"] = ShardedBlock()
    for name in ("gate_proj", "up_proj"):
        plan[f"{layer}.mlp.{name}"] = ColwiseParallel()
    plan[f"{layer}.mlp.down_proj"] = RowwiseParallel()
    plan[f"{layer}.mlp"] = ShardedBlock()
    if prefix:
        plan["lm_head"] = ColwiseParallel(output_layouts=Replicate())
    return plan
