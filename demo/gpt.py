"""A GPT trained from scratch on tinytorch: character-level, on Shakespeare (demo/text/).

    python demo/gpt.py                          # CPU default: a 4-layer, 0.8M-parameter model, a few minutes
    python demo/gpt.py --preset gpu             # nanoGPT's shakespeare-char config (6 x 384, context 256)
    python demo/gpt.py --bitlinear              # BitNet b1.58 projections (nn.BitLinear)
    python demo/gpt.py --optimizer chuck        # Notorch's Chuck instead of AdamW
    python demo/gpt.py --resume                 # continue from --out-dir/ckpt.safetensors (~/.cache/tinytorch/gpt)
    python demo/gpt.py --preset gpt2 --cuda-graph   # the whole step replayed from a CUDA graph
    tinytorch-run --nproc-per-node 2 demo/gpt.py --preset gpu                 # DDP, NCCL
    tinytorch-run --nproc-per-node 2 --backend mpi demo/gpt.py               # DDP, CPU

A GPT-2-style decoder (pre-LayerNorm blocks, causal scaled-dot-product attention, GELU MLP, tied
embeddings), AdamW (fused C++ step) with decay on matrices only, linear warmup then cosine decay,
gradient clipping and accumulation, bf16 autocast on CUDA, validation loss, checkpoints, a tqdm
bar, --plot of the losses, and samples (tinytorch.multinomial, temperature and top-k) at the end.
Under DDP, --batch-size is per rank and the data order differs per rank.

Data: Shakespeare's plays as collected in Andrej Karpathy's char-rnn "tinyshakespeare" (public
domain text), first 1 MB; see docs/training.md.
"""
from __future__ import annotations

import argparse
import math
import os
import time
from contextlib import nullcontext
from dataclasses import asdict, dataclass

import numpy as np

import tinytorch as torch
import tinytorch.nn as nn
import tinytorch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "text", "shakespeare.txt")

# Per preset: model shape and training defaults (any can be overridden by its flag).
PRESETS = {
    "cpu": dict(n_layer=4, n_head=4, n_embd=128, block_size=64, batch_size=32, max_steps=600, lr=2e-3,
                min_lr=2e-4, warmup=50, dropout=0.0, eval_interval=200, eval_iters=20),
    "gpu": dict(n_layer=6, n_head=6, n_embd=384, block_size=256, batch_size=64, max_steps=5000, lr=1e-3,
                min_lr=1e-4, warmup=100, dropout=0.2, eval_interval=250, eval_iters=200),
    # GPT-2 small's shape (a throughput configuration, char-level vocabulary)
    "gpt2": dict(n_layer=12, n_head=12, n_embd=768, block_size=1024, batch_size=8, max_steps=200, lr=6e-4,
                 min_lr=6e-5, warmup=20, dropout=0.0, eval_interval=100, eval_iters=10),
}


@dataclass
class GPTConfig:
    vocab_size: int
    block_size: int = 64
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128
    dropout: float = 0.0
    bias: bool = True
    bitlinear: bool = False


def _linear(cfg: GPTConfig):
    """The projections' layer: nn.Linear, or BitNet b1.58's nn.BitLinear with --bitlinear."""
    return nn.BitLinear if cfg.bitlinear else nn.Linear


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        Linear = _linear(cfg)
        self.n_head, self.n_embd, self.dropout = cfg.n_head, cfg.n_embd, cfg.dropout
        self.c_attn = Linear(cfg.n_embd, 3 * cfg.n_embd, bias=cfg.bias)
        self.c_proj = Linear(cfg.n_embd, cfg.n_embd, bias=cfg.bias)
        self.resid_dropout = nn.Dropout(cfg.dropout)

    def forward(self, x):
        B, T, C = x.shape  # x: (B, T, C)
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))  # (B, nh, T, hs)
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout if self.training else 0.0, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        Linear = _linear(cfg)
        self.c_fc = Linear(cfg.n_embd, 4 * cfg.n_embd, bias=cfg.bias)
        self.c_proj = Linear(4 * cfg.n_embd, cfg.n_embd, bias=cfg.bias)
        self.dropout = nn.Dropout(cfg.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(F.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(cfg.n_embd)
        self.attn = CausalSelfAttention(cfg)
        self.ln_2 = nn.LayerNorm(cfg.n_embd)
        self.mlp = MLP(cfg)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.wte = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.wpe = nn.Embedding(cfg.block_size, cfg.n_embd)
        self.drop = nn.Dropout(cfg.dropout)
        self.h = nn.ModuleList([Block(cfg) for _ in range(cfg.n_layer)])
        self.ln_f = nn.LayerNorm(cfg.n_embd)
        self.lm_head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
        self.lm_head.weight = self.wte.weight  # tied
        for name, p in self.named_parameters():  # GPT-2's init; residual projections scaled by depth
            if p.dim() == 2:
                std = 0.02 / math.sqrt(2 * cfg.n_layer) if name.endswith("c_proj.weight") else 0.02
                nn.init.normal_(p, 0.0, std)
            elif name.endswith(".bias"):
                nn.init.zeros_(p)

    def forward(self, idx, targets=None):
        B, T = idx.shape  # idx: (B, T) token ids
        if T > self.cfg.block_size:
            raise ValueError(f"GPT: sequence length {T} exceeds block_size {self.cfg.block_size}")
        pos = torch.arange(T, device=idx.device)
        x = self.drop(self.wte(idx) + self.wpe(pos))
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))  # (B, T, vocab)
        if targets is None:
            return logits, None
        # autocast computes the loss in float32 (tinytorch reads bf16 logits in float32, without a copy)
        return logits, F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))

    @torch.no_grad()
    def generate(self, idx, max_new_tokens: int, temperature: float = 1.0, top_k: int | None = None,
                 generator=None):
        """Samples ``max_new_tokens`` tokens after ``idx`` (B, T) with tinytorch.multinomial."""
        for _ in range(max_new_tokens):
            logits, _ = self(idx[:, -self.cfg.block_size:])
            logits = logits[:, -1, :].float() / temperature
            if top_k is not None:
                kth = torch.topk(logits, min(top_k, logits.shape[-1])).values[:, -1:]
                logits = logits.masked_fill(logits < kth, float("-inf"))
            nxt = torch.multinomial(F.softmax(logits, dim=-1), 1, generator=generator)
            idx = torch.cat([idx, nxt], dim=1)
        return idx


# ---------------------------------------------------------------------------- data
class CharData:
    """The text as character ids; 90 % train, 10 % validation."""

    def __init__(self, path: str) -> None:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        self.chars = sorted(set(text))
        self.stoi = {c: i for i, c in enumerate(self.chars)}
        ids = np.array([self.stoi[c] for c in text], dtype=np.int64)
        n = int(0.9 * len(ids))
        self.splits = {"train": ids[:n], "val": ids[n:]}

    def encode(self, s: str) -> list[int]:
        return [self.stoi[c] for c in s if c in self.stoi]

    def decode(self, ids) -> str:
        return "".join(self.chars[i] for i in ids)

    def batch(self, split: str, batch_size: int, block_size: int, rng: np.random.Generator, device):
        data = self.splits[split]
        ix = rng.integers(0, len(data) - block_size - 1, batch_size)
        x = np.stack([data[i:i + block_size] for i in ix])
        y = np.stack([data[i + 1:i + 1 + block_size] for i in ix])
        return torch.from_numpy(x).to(device), torch.from_numpy(y).to(device)


# ---------------------------------------------------------------------------- training
def cosine_lr(step: int, args) -> float:
    """Linear warmup to --lr, then cosine decay to --min-lr at --max-steps."""
    if step < args.warmup:
        return args.lr * (step + 1) / args.warmup
    progress = min(1.0, (step - args.warmup) / max(1, args.max_steps - args.warmup))
    return args.min_lr + 0.5 * (1.0 + math.cos(math.pi * progress)) * (args.lr - args.min_lr)


def make_optimizer(model, args):
    decay = [p for p in model.parameters() if p.requires_grad and p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.requires_grad and p.dim() < 2]
    groups = [{"params": decay, "weight_decay": args.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    if args.optimizer == "chuck":
        # Same-seeded noise generator on every rank, so DDP replicas stay identical.
        return torch.optim.Chuck(groups, lr=args.lr, betas=(0.9, 0.95),
                                 generator=torch.Generator().manual_seed(args.seed))
    if args.cuda_graph:
        # A graph replays its captured values: the step count and the scheduled lr live on the GPU.
        device = next(model.parameters()).device
        return torch.optim.AdamW(groups, lr=torch.tensor(args.lr, device=device), betas=(0.9, 0.95), fused=True,
                                 capturable=True)
    return torch.optim.AdamW(groups, lr=args.lr, betas=(0.9, 0.95), fused=True)


def make_train_step(model, optimizer, autocast, grad_clip: float = 1.0):
    """One training step on a batch (forward under ``autocast``, backward, gradient clipping, the
    optimizer's step); returns the loss tensor. Gradients are left for the caller to zero."""
    def train_step(x, y):
        with autocast():
            _, loss = model(x, y)
        loss.backward()
        if grad_clip:
            nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        optimizer.step()
        return loss
    return train_step


class GraphedStep:
    """``train_step`` captured once into a CUDA graph and replayed (``--cuda-graph``).

    The warm-up batches are real training steps, run eagerly on a side stream (cuBLAS plans,
    optimizer state), then one step is captured with the gradients unset, so backward allocates
    them from the graph's pool and every replay writes them afresh, as ``zero_grad(set_to_none=True)``
    then an eager step would. A call copies its batch into the static input buffers and replays;
    the loss it returns is the graph's static output, rewritten by the next call. The optimizer
    must be ``capturable=True`` (its step count lives on the GPU); a learning-rate schedule must
    write a one-element device tensor ``lr`` in place."""

    def __init__(self, train_step, optimizer, warmup_batches) -> None:
        x0, y0 = warmup_batches[0]
        self.x, self.y = x0.clone(), y0.clone()
        current = torch.cuda.current_stream()
        side = torch.cuda.Stream()
        side.wait_stream(current)
        with torch.cuda.stream(side):
            self.warmup_losses = []
            for x, y in warmup_batches:
                self.x.copy_(x)
                self.y.copy_(y)
                self.warmup_losses.append(train_step(self.x, self.y).item())
                optimizer.zero_grad(set_to_none=True)
        current.wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.loss = train_step(self.x, self.y)

    def __call__(self, x, y):
        self.x.copy_(x)
        self.y.copy_(y)
        self.graph.replay()
        return self.loss


class Dist:
    """DDP wiring when launched by tinytorch.distributed.run (WORLD_SIZE > 1), else one process."""

    def __init__(self, device_arg: str | None) -> None:
        self.world = int(os.environ.get("WORLD_SIZE", "1"))
        self.rank = int(os.environ.get("RANK", "0"))
        local = int(os.environ.get("LOCAL_RANK", "0"))
        if device_arg is None:
            device_arg = "cuda" if torch.cuda.is_available() else "cpu"
        if self.world > 1 and device_arg == "cuda":
            device_arg = f"cuda:{local}"
        self.device = torch.device(device_arg)
        if self.device.type == "cuda":
            torch.cuda.set_device(self.device)
        if self.world > 1:
            import tinytorch.distributed as dist
            self.dist = dist
            dist.init_process_group("nccl" if self.device.type == "cuda" else "mpi")

    def mean(self, value: float) -> float:
        """The mean of a float over the ranks."""
        if self.world == 1:
            return value
        t = torch.tensor([value], dtype=torch.float64, device=self.device if self.device.type == "cuda" else "cpu")
        self.dist.all_reduce(t)
        return t.item() / self.world

    def close(self) -> None:
        if self.world > 1:
            self.dist.destroy_process_group()


@torch.no_grad()
def estimate_loss(model, data, args, rng, device, autocast) -> dict[str, float]:
    model.eval()
    out = {}
    for split in ("train", "val"):
        losses = []
        for _ in range(args.eval_iters):
            x, y = data.batch(split, args.batch_size, args.block_size, rng, device)
            with autocast():
                losses.append(model(x, y)[1].item())
        out[split] = float(np.mean(losses))
    model.train()
    return out


def default_out_dir() -> str:
    """Checkpoints go to the user's cache (``$XDG_CACHE_HOME`` or ~/.cache), not into the checkout."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "tinytorch", "gpt")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description="Train a character-level GPT on tinytorch")
    p.add_argument("--preset", choices=sorted(PRESETS), default="cpu",
                   help="model shape and training defaults (the flags below override them)")
    shape_help = {"n_layer": "transformer blocks", "n_head": "attention heads", "n_embd": "embedding width",
                  "block_size": "context length (tokens)", "batch_size": "sequences per micro-batch (per rank)",
                  "max_steps": "optimizer steps to train (bounds the run)", "warmup": "linear warm-up steps",
                  "eval_interval": "steps between validation losses and checkpoints",
                  "eval_iters": "batches per validation estimate", "lr": "peak learning rate",
                  "min_lr": "final learning rate of the cosine decay", "dropout": "dropout probability"}
    for name, help_text in shape_help.items():
        kind = float if name in ("lr", "min_lr", "dropout") else int
        p.add_argument("--" + name.replace("_", "-"), type=kind, default=None,
                       help=f"{help_text} (default: the preset's)")
    p.add_argument("--grad-accum", type=int, default=1, help="micro-batches per optimizer step (default: 1)")
    p.add_argument("--weight-decay", type=float, default=0.1, help="AdamW weight decay, matrices only (default: 0.1)")
    p.add_argument("--grad-clip", type=float, default=1.0, help="max gradient norm; 0 disables clipping (default: 1.0)")
    p.add_argument("--optimizer", choices=["adamw", "chuck"], default="adamw", help="the optimizer (default: adamw)")
    p.add_argument("--bitlinear", action="store_true", help="BitNet b1.58 attention/MLP projections")
    p.add_argument("--device", default=None, help="cpu or cuda[:N] (default: cuda when available)")
    p.add_argument("--threads", type=int, default=None, help="CPU threads (default: tinytorch's, the cores)")
    p.add_argument("--no-autocast", action="store_true", help="no bf16 autocast on CUDA")
    p.add_argument("--cuda-graph", action="store_true",
                   help="capture the whole training step (forward, backward, clipping, AdamW) once, then replay it")
    p.add_argument("--data", default=DATA, help="a UTF-8 text file (default: demo/text/shakespeare.txt)")
    p.add_argument("--out-dir", default=default_out_dir(), help="where ckpt.safetensors goes (default: %(default)s)")
    p.add_argument("--resume", action="store_true", help="continue from --out-dir/ckpt.safetensors")
    p.add_argument("--no-progress", action="store_true", help="no tqdm bar")
    p.add_argument("--plot", default=None, metavar="PNG", help="write the train/val loss curves here")
    p.add_argument("--samples", type=int, default=2, help="text samples to print after training (default: 2)")
    p.add_argument("--sample-len", type=int, default=300, help="characters per sample (default: 300)")
    p.add_argument("--temperature", type=float, default=0.8, help="sampling temperature (default: 0.8)")
    p.add_argument("--top-k", type=int, default=None, help="sample from the k most likely characters only")
    p.add_argument("--prompt", default="\n", help="the samples' first characters")
    p.add_argument("--seed", type=int, default=1337, help="random seed (model init, data order, sampling)")
    args = p.parse_args(argv)
    for key, value in PRESETS[args.preset].items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.plot:
        try:
            import matplotlib  # noqa: F401  (checked before training, not after)
        except ImportError:
            p.error("--plot needs matplotlib: pip install matplotlib")
    if args.cuda_graph:
        bad = [name for name, off in (("--grad-accum > 1", args.grad_accum > 1), ("--optimizer chuck", args.optimizer
               == "chuck"), ("--dropout > 0 (attention dropout)", args.dropout > 0), ("--device cpu", args.device
               == "cpu"), ("DDP", int(os.environ.get("WORLD_SIZE", "1")) > 1)) if off]
        if bad:
            p.error(f"--cuda-graph captures one single-GPU AdamW step without dropout: not with {', '.join(bad)}")
    if args.n_embd % args.n_head:
        p.error(f"--n-embd ({args.n_embd}) must be divisible by --n-head ({args.n_head})")
    return args


def plot(history, path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    steps, train, val = zip(*history)
    plt.figure(figsize=(6, 3.5))
    plt.plot(steps, train, label="train")
    plt.plot(steps, val, label="val")
    plt.xlabel("step")
    plt.ylabel("loss (nats/char)")
    plt.legend()
    plt.tight_layout()
    plt.savefig(path, dpi=120)
    print(f"wrote {path}")


def main(argv=None) -> dict:
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    ddp = Dist(args.device)
    device, master = ddp.device, ddp.rank == 0
    torch.manual_seed(args.seed)
    data = CharData(args.data)
    cfg = GPTConfig(vocab_size=len(data.chars), block_size=args.block_size, n_layer=args.n_layer,
                    n_head=args.n_head, n_embd=args.n_embd, dropout=args.dropout, bitlinear=args.bitlinear)
    model = GPT(cfg).to(device)
    optimizer = make_optimizer(model, args)
    ckpt_path = os.path.join(args.out_dir, "ckpt.safetensors")
    step, history = 0, []
    if args.resume:
        if not os.path.exists(ckpt_path):
            raise FileNotFoundError(f"--resume: no checkpoint at {ckpt_path}")
        ckpt = torch.load(ckpt_path, map_location=str(device))
        if ckpt["config"] != asdict(cfg):
            raise ValueError(f"--resume: the checkpoint's model config {ckpt['config']} differs from {asdict(cfg)}")
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        step, history = ckpt["step"], [tuple(h) for h in ckpt["history"]]
    train_model = model
    if ddp.world > 1:
        from tinytorch.nn.parallel import DistributedDataParallel as DDP
        train_model = DDP(model, device_ids=[device] if device.type == "cuda" else None)
    use_autocast = device.type == "cuda" and not args.no_autocast

    def autocast():
        return torch.amp.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=use_autocast)

    # The data stream depends on (seed, rank, step), so a resumed run continues it.
    rng = np.random.default_rng([args.seed, ddp.rank, step])
    eval_rng = np.random.default_rng([args.seed, 999])
    n_params = sum(p.numel() for p in model.parameters())
    if master:
        print(f"GPT {args.n_layer}x{args.n_embd}, {args.n_head} heads, context {args.block_size}, "
              f"{n_params / 1e6:.2f}M parameters, vocab {cfg.vocab_size}, {args.optimizer}"
              f"{', BitLinear' if args.bitlinear else ''}, device {device}, world {ddp.world}"
              f"{', bf16 autocast' if use_autocast else ''}", flush=True)
    from tqdm import tqdm
    bar = tqdm(total=args.max_steps, initial=step, disable=args.no_progress or not master, dynamic_ncols=True,
               unit="step")
    tokens_per_step = args.batch_size * args.block_size * args.grad_accum * ddp.world
    train_step = make_train_step(train_model, optimizer, autocast, args.grad_clip)
    graphed, eager_steps = None, step + 2   # --cuda-graph: two eager steps, then the capture
    t0, steps_timed = time.time(), 0
    losses = {}
    while step < args.max_steps:
        lr = cosine_lr(step, args)
        for group in optimizer.param_groups:
            if isinstance(group["lr"], torch.Tensor):
                group["lr"].fill_(lr)
            else:
                group["lr"] = lr
        if args.cuda_graph and step >= eager_steps:
            x, y = data.batch("train", args.batch_size, args.block_size, rng, device)
            if graphed is None:   # this step runs eagerly as the warm-up, then one step is captured
                graphed = GraphedStep(train_step, optimizer, [(x, y)])
                loss_sum = graphed.warmup_losses[-1]
            else:
                loss_sum = graphed(x, y).item()
        else:
            loss_sum = 0.0
            for micro in range(args.grad_accum):
                x, y = data.batch("train", args.batch_size, args.block_size, rng, device)
                sync = ddp.world == 1 or micro == args.grad_accum - 1
                ctx = train_model.no_sync() if not sync else nullcontext()
                with ctx:
                    with autocast():
                        _, loss = train_model(x, y)
                    (loss / args.grad_accum).backward()
                loss_sum += loss.item() / args.grad_accum
            if args.grad_clip:
                nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip)
            if args.optimizer == "chuck":
                optimizer.step(loss=ddp.mean(loss_sum))  # the same loss on every rank keeps replicas identical
            else:
                optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        step += 1
        steps_timed += 1
        bar.update(1)
        bar.set_postfix(loss=f"{loss_sum:.4f}", lr=f"{lr:.2e}")
        if step % args.eval_interval == 0 or step == args.max_steps:
            losses = {k: ddp.mean(v) for k, v in estimate_loss(model, data, args, eval_rng, device,
                                                               autocast).items()}
            history.append((step, losses["train"], losses["val"]))
            if master:
                bar.write(f"step {step}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
                os.makedirs(args.out_dir, exist_ok=True)
                bar.write(f"saved {ckpt_path}")
                torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step,
                            "config": asdict(cfg), "history": [list(h) for h in history]}, ckpt_path)
    bar.close()
    secs = time.time() - t0
    result = {"step": step, "history": history, "samples": [], "params": n_params,
              "tokens_per_s": steps_timed * tokens_per_step / secs if steps_timed else 0.0,
              "step_ms": 1000 * secs / steps_timed if steps_timed else 0.0}
    if master:
        if steps_timed:
            print(f"{steps_timed} steps in {secs:.1f} s: {result['step_ms']:.0f} ms/step, "
                  f"{result['tokens_per_s']:.0f} tokens/s", flush=True)
        if history:
            print(f"final: train loss {history[-1][1]:.4f}, val loss {history[-1][2]:.4f}")
        gen = torch.Generator(device=device.type).manual_seed(args.seed)
        prompt = data.encode(args.prompt) or [0]
        model.eval()
        for i in range(args.samples):
            idx = torch.tensor([prompt], dtype=torch.int64, device=device)
            out = model.generate(idx, args.sample_len, args.temperature, args.top_k, generator=gen)
            text = data.decode(out[0].tolist()[len(prompt):])
            result["samples"].append(text)
            print(f"---------- sample {i + 1}\n{text}")
        if args.plot and history:
            plot(history, args.plot)
    ddp.close()
    return result


if __name__ == "__main__":
    main()
