"""A tiny GPT-like model, its data, and single-process references for the FSDP workers.

Sizes are chosen so that sharding pads: the vocabulary (13 rows) and the MLP width (10) divide by
neither 2 nor 4, and the 3-row segment embedding leaves rank 3 of 4 with no rows at all."""
from __future__ import annotations

import copy

import numpy as np

import tinytorch as tt
import tinytorch.nn as nn
import tinytorch.nn.functional as F
from tinytorch.utils.checkpoint import checkpoint

V, D, H, T, SEG = 13, 8, 10, 5, 3       # vocabulary, width, MLP width, sequence length, segments
B = 2                                    # sequences per rank


class Block(nn.Module):
    def __init__(self, inner_ckpt: bool = False):
        super().__init__()
        self.ln = nn.LayerNorm(D)
        self.fc1 = nn.Linear(D, H)
        self.fc2 = nn.Linear(H, D)
        self.inner_ckpt = inner_ckpt

    def _mlp(self, h):
        return self.fc2(F.gelu(self.fc1(h)))

    def forward(self, x):
        h = self.ln(x)
        return x + (checkpoint(self._mlp, h, use_reentrant=True) if self.inner_ckpt else self._mlp(h))


class GPT(nn.Module):
    def __init__(self, n_blocks: int = 2, act_ckpt: str = ""):
        super().__init__()
        self.tok = nn.Embedding(V, D)
        self.seg = nn.Embedding(SEG, D)
        self.blocks = nn.ModuleList([Block(inner_ckpt=act_ckpt == "inner") for _ in range(n_blocks)])
        self.ln_f = nn.LayerNorm(D)
        self.head = nn.Linear(D, V)
        self.act_ckpt = act_ckpt         # "": none; "outer": checkpoint(block, x); "inner": inside each block

    def forward(self, idx, seg):
        x = self.tok(idx) + self.seg(seg)
        for b in self.blocks:
            x = checkpoint(b, x, use_reentrant=True) if self.act_ckpt == "outer" else b(x)
        return self.head(self.ln_f(x))


def make_model(seed: int = 0, **kw) -> GPT:
    tt.manual_seed(seed)
    return GPT(**kw)


def batch(step: int, rank: int, n: int = B):
    rng = np.random.default_rng(1000 * step + rank)
    idx = rng.integers(0, V, (n, T))
    return (tt.tensor(idx, dtype=tt.int64), tt.tensor(rng.integers(0, SEG, (n, T)), dtype=tt.int64),
            tt.tensor(np.roll(idx, -1, 1), dtype=tt.int64))


def global_batch(step: int, world: int):
    parts = [batch(step, r) for r in range(world)]
    return tuple(tt.cat([p[i] for p in parts]) for i in range(3))


def loss_of(model, idx, seg, tgt):
    return F.cross_entropy(model(idx, seg).float().reshape(-1, V), tgt.reshape(-1))


def reference_losses(steps: int, world: int, lr: float = 1e-2, micro: int = 1, clip=None, seed: int = 0,
                     model=None, opt=None, start: int = 0):
    """Single-process training on the concatenation of every rank's batch (AdamW, float32)."""
    model = model if model is not None else make_model(seed)
    opt = opt if opt is not None else tt.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.1)
    losses, norms = [], []
    for step in range(start, start + steps):
        opt.zero_grad()
        total = 0.0
        for k in range(micro):
            loss = loss_of(model, *global_batch(micro * step + k, world)) / micro
            loss.backward()
            total += float(loss.item())
        if clip is not None:
            norms.append(float(nn.utils.clip_grad_norm_(model.parameters(), clip).item()))
        opt.step()
        losses.append(total)
    return losses, norms, model, opt


def tensor_bytes(tensors) -> int:
    """Bytes of the distinct storages behind ``tensors``."""
    seen, total = set(), 0
    for t in tensors:
        if t is None:
            continue
        key = t._impl.storage_ptr
        if key not in seen:
            seen.add(key)
            total += t._impl.storage_nbytes
    return total


def state_bytes(model, opt) -> dict:
    params = list(model.parameters())
    states = [v for st in opt.state.values() for v in st.values() if isinstance(v, tt.Tensor)]
    return {"params": tensor_bytes(params), "grads": tensor_bytes([p.grad for p in params]),
            "optim": tensor_bytes(states)}


def rel_close(a, b, rtol, what):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    err = np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-30)) if a.size else 0.0
    assert err <= rtol, f"{what}: relative difference {err:.3g} > {rtol:g}\n got {a.tolist()}\nwant {b.tolist()}"
    return float(err)


__all__ = ["GPT", "Block", "make_model", "batch", "global_batch", "loss_of", "reference_losses", "state_bytes",
           "rel_close", "copy"]
