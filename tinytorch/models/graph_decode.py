"""Greedy decoding with the per-token step replayed from a CUDA graph (``generate(...,
cuda_graph=True)``).

A captured step must have the same shapes and addresses every time, so the step is written over
the whole preallocated KV cache: the token and its position are device tensors, the new key and
value go to the cache with ``scatter_`` at that position, and attention reads all
``max_length`` cached positions with a mask of those up to the position. The step also writes
its token into the output ids and advances the position, so decoding n tokens is n replays and
no host work per token (one host read per token only where ``eos_token_id`` is given).

The captured step is kept on the model (:class:`DecodeGraphCache`, ``model.decode_graphs``) with
its cache, ids buffer and rotary tables, keyed by what it was captured for (batch, cache length
rounded up to :data:`LENGTH_BUCKET` positions, dtype, device, number of eos ids), so later
``generate`` calls replay it without capturing again. Captures are dropped when any parameter or
buffer of the model moved (replaced, cast, moved to another device): a graph reads its weights by
address."""
from __future__ import annotations

from typing import Dict, Optional, Sequence, Tuple

from tinytorch._tensor.creation import arange, as_tensor, full, zeros
from tinytorch._core.dtype import int64
from tinytorch._ops.elementwise import where
from tinytorch.models.fused_decode import static_step
from tinytorch.models.kv_cache import KVCache
from tinytorch._tensor.tensor import Tensor

LENGTH_BUCKET = 64   # cache lengths are rounded up to a multiple of this: nearby lengths share a graph


def static_decode_logits(model, token: Tensor, pos: Tensor, cache: KVCache) -> Tensor:
    """Logits (B, vocab) of ``token`` (B, 1) at position ``pos`` (a (1,) int64 device tensor) after
    the cache's positions [0, pos): writes the token's keys/values at ``pos`` in every layer and
    attends over all ``cache.max_length`` positions, masked to those <= pos (and inside a sliding
    layer's window). The fused decode stack runs it where it applies (models/fused_decode.py:
    attention over the positions up to pos only); otherwise the layers' own norms, projections and
    attention (:meth:`LlamaDecoderLayer.residual_block`), so every architecture's step is the eager one."""
    m = model.model
    h = static_step(m, token, pos, cache)
    if h is not None:
        return model.logits(h)[:, -1]                                       # (B, V)
    S = cache.max_length
    x = m.embed(token)                                                      # (B, 1, hidden)
    cos, sin = m.rotary_emb(pos.view(1, 1), x.dtype, S)                     # (1, 1, 1, D)
    index = arange(S, dtype=int64, device=pos.device)
    keep = (index <= pos).view(1, 1, 1, S)
    masks = {None: keep}
    for layer in m.layers:
        a = layer.self_attn
        w = a.sliding_window
        if w not in masks:                                                  # keys pos - w < j <= pos
            masks[w] = keep.logical_and((index > pos - w).view(1, 1, 1, S))
        x = layer.residual_block(x, lambda h: _static_attention(a, h, cos, sin, pos, cache, masks[w]))
    return model.logits(m.norm(x))[:, -1]                                   # (B, V)


def _static_attention(a, h: Tensor, cos: Tensor, sin: Tensor, pos: Tensor, cache: KVCache, mask: Tensor) -> Tensor:
    """``a`` (a LlamaAttention) on h (B, 1, hidden) with its keys/values scattered into the cache at pos."""
    B = h.shape[0]
    q, k, v = a.project(h, cos, sin)                                         # (B, H, 1, D), (B, Hkv, 1, D)
    keys, values = cache.keys[a.layer_idx], cache.values[a.layer_idx]       # (B, Hkv, S, D)
    at = pos.view(1, 1, 1, 1).expand(k.shape)                                # (B, Hkv, 1, D)
    keys.scatter_(2, at, k)
    values.scatter_(2, at, v)
    out = a.attend(q, keys, values, mask)                                    # (B, H, 1, D)
    return a.o_proj(out.reshape(B, 1, a.num_heads * a.head_dim))


class GraphedGreedyDecoder:
    """The greedy decode step of ``model`` for ``batch_size`` rows of up to ``max_length`` ids,
    captured in a CUDA graph on its first :meth:`step` and replayed after that.

    It owns the static tensors the graph reads and writes: ``out`` (B, max_length) ids, ``cache``
    (a :class:`KVCache` of max_length positions), ``token`` (B, 1), ``pos`` (1,), the eos ids,
    ``pad`` and ``unfinished`` (B,), and the rotary tables. Each step feeds ``token`` at ``pos``,
    writes the argmax to ``out[:, pos + 1]`` and advances ``pos``."""

    def __init__(self, model, batch_size: int, max_length: int, num_eos: int) -> None:
        w = model.model.embed_tokens.weight
        dev = w.device
        self.model, self.num_eos = model, num_eos
        self.out = zeros(batch_size, max_length, dtype=int64, device=dev)
        self.cache = model.make_cache(batch_size, max_length)
        self.token = full((batch_size, 1), 0, dtype=int64, device=dev)
        self.pos = full((1,), 0, dtype=int64, device=dev)
        self.eos = full((num_eos,), 0, dtype=int64, device=dev) if num_eos else None
        self.pad = full((1,), 0, dtype=int64, device=dev)   # a device operand: a Python one is copied in
        self.unfinished = full((batch_size,), 1, dtype=int64, device=dev) if num_eos else None
        # the graph reads the rotary tables by address: hold them, so a longer table built later
        # for another length cannot free them
        self.rotary_tables = model.model.rotary_emb._table(max_length, w.dtype, dev)
        self.graph: Optional[object] = None
        self.captures = 0

    def _body(self) -> None:
        logits = static_decode_logits(self.model, self.token, self.pos, self.cache)
        nxt = logits.float().argmax(-1)                                        # (B,)
        if self.unfinished is not None:
            nxt = where(self.unfinished != 0, nxt, self.pad)
            hit = (nxt[:, None] == self.eos).any(-1)
            self.unfinished.mul_(hit.logical_not().to(int64))
        self.out.scatter_(1, (self.pos + 1).view(1, 1).expand(nxt.shape[0], 1), nxt[:, None])
        self.token.copy_(nxt[:, None])
        self.pos.add_(1)

    def start(self, first_token: Tensor, position: int, eos: Sequence[int], pad: int,
              unfinished: Optional[Tensor]) -> None:
        """Sets up a decode: ``first_token`` (B,) (already in ``out[:, position]``) is fed at
        ``position``; ``eos`` (``num_eos`` ids), ``pad`` and the rows still ``unfinished`` (B,) bool."""
        self.token.copy_(first_token[:, None])
        self.pos.fill_(position)
        self.pad.fill_(pad)
        if self.eos is not None:
            self.eos.copy_(as_tensor(list(eos), dtype=int64, device=self.eos.device))
            self.unfinished.copy_(unfinished.to(int64))

    def step(self) -> None:
        """One decode step: replays the graph, capturing it first if there is none (the capture's
        warm-up runs the step for real, eagerly, on a side stream)."""
        if self.graph is not None:
            self.graph.replay()
            return
        import tinytorch.cuda as cuda
        side = cuda.Stream()
        side.wait_stream(cuda.current_stream())
        with cuda.stream(side):
            self._body()                       # this step, run for real (warms up every kernel and plan)
        cuda.current_stream().wait_stream(side)
        graph = cuda.CUDAGraph()
        with cuda.graph(graph):
            self._body()
        self.graph = graph
        self.captures += 1

    def finished(self) -> bool:
        """True once every row has produced an eos token (reads one value back to the host)."""
        return self.unfinished is not None and not bool(self.unfinished.any())

    def close(self) -> None:
        if self.graph is not None:
            self.graph.reset()
            self.graph = None


def parameter_fingerprint(model) -> Tuple:
    """Where every parameter and buffer of ``model`` lives (address, shape, dtype, device): a graph
    captured against one fingerprint is valid while it holds. In-place updates keep it (the graph
    reads the new values); replacing, casting or moving a tensor changes it."""
    return tuple((t.data_ptr(), tuple(t.shape), t.dtype, str(t.device))
                 for t in (*model.parameters(), *model.buffers()) if t is not None)


class DecodeGraphCache:
    """A model's captured decode steps (:class:`GraphedGreedyDecoder`), by (batch, cache length,
    dtype, device, number of eos ids), valid for the parameter fingerprint they were captured with.
    ``captures`` counts the graphs captured so far. Copies and pickles of a model start empty."""

    def __init__(self) -> None:
        self.decoders: Dict[tuple, GraphedGreedyDecoder] = {}
        self.fingerprint: Optional[Tuple] = None
        self._dropped_captures = 0

    @property
    def captures(self) -> int:
        """How many decode steps were captured through this cache (replays don't count)."""
        return self._dropped_captures + sum(d.captures for d in self.decoders.values())

    def decoder(self, model, batch_size: int, length: int, num_eos: int) -> GraphedGreedyDecoder:
        """The decoder for ``batch_size`` rows of up to ``length`` ids (rounded up to the bucket, at
        most the model's context), built on first use; all are dropped when the parameters moved."""
        fingerprint = parameter_fingerprint(model)
        if fingerprint != self.fingerprint:
            self.clear()
            self.fingerprint = fingerprint
        w = model.model.embed_tokens.weight
        bucket = -(-length // LENGTH_BUCKET) * LENGTH_BUCKET
        max_length = max(length, min(bucket, model.config.max_position_embeddings))
        key = (batch_size, max_length, w.dtype, str(w.device), num_eos)
        dec = self.decoders.get(key)
        if dec is None:
            dec = self.decoders[key] = GraphedGreedyDecoder(model, batch_size, max_length, num_eos)
        return dec

    def clear(self) -> None:
        """Drops every captured graph and its buffers."""
        for dec in self.decoders.values():
            self._dropped_captures += dec.captures
            dec.close()
        self.decoders.clear()

    def __len__(self) -> int:
        return len(self.decoders)

    def __deepcopy__(self, memo) -> "DecodeGraphCache":
        return DecodeGraphCache()

    def __reduce__(self):
        return (DecodeGraphCache, ())
