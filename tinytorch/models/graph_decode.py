"""Greedy decoding with the per-token step replayed from a CUDA graph (``generate(...,
cuda_graph=True)``).

A captured step must have the same shapes and addresses every time, so the step is written over
the whole preallocated KV cache: the token and its position are device tensors, the new key and
value go to the cache with ``scatter_`` at that position, and attention reads all
``max_length`` cached positions with a mask of those up to the position. The step also writes
its token into the output ids and advances the position, so decoding n tokens is n replays and
no host work per token (one host read per token only where ``eos_token_id`` is given)."""
from __future__ import annotations

from typing import Optional, Sequence

from tinytorch._creation import arange, full
from tinytorch._dtype import int64
from tinytorch._functional import where
from tinytorch.models.kv_cache import KVCache
from tinytorch.models.rotary import apply_rotary_pos_emb
from tinytorch.nn import functional as F
from tinytorch.tensor import Tensor


def static_decode_logits(model, token: Tensor, pos: Tensor, cache: KVCache) -> Tensor:
    """Logits (B, vocab) of ``token`` (B, 1) at position ``pos`` (a (1,) int64 device tensor) after
    the cache's positions [0, pos): writes the token's keys/values at ``pos`` in every layer and
    attends over all ``cache.max_length`` positions, masked to those <= pos."""
    m = model.model
    S = cache.max_length
    B = token.shape[0]
    x = m.embed_tokens(token)                                               # (B, 1, hidden)
    cos, sin = m.rotary_emb(pos.view(1, 1), x.dtype, S)                     # (1, 1, 1, D)
    keep = (arange(S, dtype=int64, device=pos.device) <= pos).view(1, 1, 1, S)
    for layer in m.layers:
        a = layer.self_attn
        h = layer.input_layernorm(x)
        q = a.q_proj(h).view(B, 1, a.num_heads, a.head_dim).transpose(1, 2)      # (B, H, 1, D)
        k = a.k_proj(h).view(B, 1, a.num_kv_heads, a.head_dim).transpose(1, 2)   # (B, Hkv, 1, D)
        v = a.v_proj(h).view(B, 1, a.num_kv_heads, a.head_dim).transpose(1, 2)
        q = apply_rotary_pos_emb(q, cos, sin, a.rotary_convention)
        k = apply_rotary_pos_emb(k, cos, sin, a.rotary_convention)
        keys, values = cache.keys[a.layer_idx], cache.values[a.layer_idx]       # (B, Hkv, S, D)
        at = pos.view(1, 1, 1, 1).expand(k.shape)                                # (B, Hkv, 1, D)
        keys.scatter_(2, at, k)
        values.scatter_(2, at, v)
        group = a.num_heads // a.num_kv_heads
        # the G queries of a KV head become G rows against it (the cache is read in place)
        out = F.scaled_dot_product_attention(q.reshape(B, a.num_kv_heads, group, a.head_dim), keys, values,
                                             attn_mask=keep)                     # (B, Hkv, G, D)
        x = x + a.o_proj(out.reshape(B, 1, a.num_heads * a.head_dim))
        x = x + layer.mlp(layer.post_attention_layernorm(x))
    return model.lm_head(m.norm(x))[:, -1]                                     # (B, V)


class GraphedGreedyDecoder:
    """The greedy decode step of ``model`` for ``out`` (B, total) ids, captured in a CUDA graph.

    ``begin(first_token_position)`` runs the step once eagerly on a side stream (which warms up
    every kernel and plan) and captures it; each ``step()`` then replays it: the token at
    ``pos`` goes through the model, the argmax is written to ``out[:, pos + 1]`` and ``pos``
    advances."""

    def __init__(self, model, out: Tensor, cache: KVCache, eos: Sequence[int], pad: int) -> None:
        import tinytorch.cuda as cuda
        self.cuda, self.model, self.out, self.cache = cuda, model, out, cache
        dev = out.device
        B = out.shape[0]
        self.token = full((B, 1), 0, dtype=int64, device=dev)
        self.pos = full((1,), 0, dtype=int64, device=dev)
        self.eos = _ids(eos, dev) if eos else None
        self.pad = full((1,), pad, dtype=int64, device=dev)   # a device operand: a Python one is copied in
        self.unfinished = full((B,), 1, dtype=int64, device=dev) if eos else None
        self.graph: Optional[object] = None

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

    def begin(self, first_token: Tensor, position: int) -> None:
        """Feeds ``first_token`` (B,) at ``position``: one eager step, then the capture."""
        cuda = self.cuda
        self.token.copy_(first_token[:, None])
        self.pos.fill_(position)
        side = cuda.Stream()
        side.wait_stream(cuda.current_stream())
        with cuda.stream(side):
            self._body()                       # the step for position, run for real (warm-up)
        cuda.current_stream().wait_stream(side)
        self.graph = cuda.CUDAGraph()
        with cuda.graph(self.graph):
            self._body()

    def step(self) -> None:
        self.graph.replay()

    def finished(self) -> bool:
        """True once every row has produced an eos token (reads one value back to the host)."""
        return self.unfinished is not None and not bool(self.unfinished.any())

    def close(self) -> None:
        if self.graph is not None:
            self.graph.reset()
            self.graph = None


def _ids(ids: Sequence[int], device) -> Tensor:
    from tinytorch._creation import as_tensor
    return as_tensor(list(ids), dtype=int64, device=device)
