"""One training step (forward, loss, backward, AdamW step) of real models, tinytorch vs PyTorch.

Each model is written once against a module ``m`` (``tinytorch`` or ``torch``) and built for both;
rounds alternate between the libraries on the same batches; prints the median step time and the
ratio (tinytorch / PyTorch; < 1 means tinytorch is faster).

    .venv-ref/bin/python bench/models_bench.py [--threads 2] [--rounds 5] [--steps 3] [--only gpt,lstm]
    .venv-ref/bin/python bench/models_bench.py --size big          # bigger GPT / LSTM shapes
    python3 bench/models_bench.py --device cuda                   # synchronizes around every timing

Models: ResNet-18 (torchvision's BasicBlock layout, CIFAR-sized 3x32x32 input, batch 16), a
nanoGPT-shaped GPT (pre-LayerNorm blocks, causal SDPA, GELU MLP, tied embeddings), a 2-layer LSTM
language model (Embedding -> nn.LSTM(num_layers=2) -> Linear).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

# Two OpenMP pools in one process spin against each other unless they wait passively.
os.environ.setdefault("OMP_WAIT_POLICY", "passive")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402

from _harness import alternate_medians, try_import_torch  # noqa: E402
from _resnet import resnet18_sequential  # noqa: E402
import tinytorch  # noqa: E402

# GPT / LSTM shapes per --size: (n_layer, n_head, n_embd, block, batch) and (embed, hidden, seq, batch)
GPT_SIZES = {"cpu": (4, 4, 128, 64, 32), "big": (6, 6, 384, 256, 16)}
LSTM_SIZES = {"cpu": (128, 256, 64, 16), "big": (256, 512, 128, 32)}
VOCAB = 65


def resnet18(m, num_classes: int = 10):
    """torchvision's ResNet-18 layout (BasicBlock, [2, 2, 2, 2]) for 32x32 input."""
    nn = m.nn

    class BasicBlock(nn.Module):
        def __init__(self, cin: int, cout: int, stride: int):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU(inplace=True)
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            idt = x if self.downsample is None else self.downsample(x)
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return self.relu(out + idt)

    stem = [nn.Conv2d(3, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True)]
    return resnet18_sequential(nn, BasicBlock, stem, num_classes)


def gpt(m, n_layer: int, n_head: int, n_embd: int, block: int):
    """nanoGPT's decoder: pre-LayerNorm blocks, causal SDPA, GELU MLP, tied embeddings."""
    nn, F = m.nn, m.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.ln_2 = nn.LayerNorm(n_embd), nn.LayerNorm(n_embd)
            self.c_attn, self.c_proj = nn.Linear(n_embd, 3 * n_embd), nn.Linear(n_embd, n_embd)
            self.c_fc, self.mlp_proj = nn.Linear(n_embd, 4 * n_embd), nn.Linear(4 * n_embd, n_embd)
            self.gelu = nn.GELU()

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.c_attn(self.ln_1(x)).split(n_embd, dim=2)
            q, k, v = (t.view(B, T, n_head, C // n_head).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, nh, T, hs)
            x = x + self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))
            return x + self.mlp_proj(self.gelu(self.c_fc(self.ln_2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(VOCAB, n_embd), nn.Embedding(block, n_embd)
            self.h = nn.ModuleList([Block() for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(n_embd)
            self.lm_head = nn.Linear(n_embd, VOCAB, bias=False)
            self.lm_head.weight = self.wte.weight  # tied

        def forward(self, idx):
            x = self.wte(idx) + self.wpe(m.arange(idx.shape[1], device=idx.device))
            for blk in self.h:
                x = blk(x)
            return self.lm_head(self.ln_f(x))

    return GPT()


def lstm_lm(m, embed: int, hidden: int):
    nn = m.nn

    class LSTMLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(VOCAB, embed)
            self.rnn = nn.LSTM(embed, hidden, num_layers=2, batch_first=True)
            self.head = nn.Linear(hidden, VOCAB)

        def forward(self, idx):
            out, _ = self.rnn(self.emb(idx))
            return self.head(out)

    return LSTMLM()


def build_step(m, name: str, size: str, device: str):
    """Builds model ``name`` with library ``m``; returns one(i): a training step on batch i % 2."""
    rng = np.random.default_rng(0)
    m.manual_seed(0)
    if name == "resnet18":
        model = resnet18(m)
        batches = [(rng.standard_normal((16, 3, 32, 32), dtype=np.float32), rng.integers(0, 10, 16))
                   for _ in range(2)]
    elif name == "gpt":
        n_layer, n_head, n_embd, block, batch = GPT_SIZES[size]
        model = gpt(m, n_layer, n_head, n_embd, block)
        batches = [(rng.integers(0, VOCAB, (batch, block)), rng.integers(0, VOCAB, (batch, block))) for _ in range(2)]
    else:
        embed, hidden, seq, batch = LSTM_SIZES[size]
        model = lstm_lm(m, embed, hidden)
        batches = [(rng.integers(0, VOCAB, (batch, seq)), rng.integers(0, VOCAB, (batch, seq))) for _ in range(2)]
    model = model.to(device).train()
    opt = m.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.1)
    data = [(m.from_numpy(x).to(device), m.from_numpy(y).to(device)) for x, y in batches]
    F = m.nn.functional

    def one(i: int):
        x, y = data[i % len(data)]
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return one


def make_step(m, name: str, size: str, device: str, steps: int):
    """Builds model ``name`` with library ``m``; returns run() -> seconds per step over ``steps`` steps."""
    one = build_step(m, name, size, device)
    cuda = device.startswith("cuda")

    def run() -> float:
        if cuda:
            m.cuda.synchronize()
        t = time.perf_counter()
        for i in range(steps):
            one(i)
        if cuda:
            m.cuda.synchronize()
        return (time.perf_counter() - t) / steps

    one(0)  # warm-up
    return run


def main(argv=None) -> list:
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cpu", help="cpu or cuda")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--steps", type=int, default=3, help="steps per timed round")
    p.add_argument("--size", default="cpu", choices=sorted(GPT_SIZES))
    p.add_argument("--only", default="resnet18,gpt,lstm", help="comma-separated subset of resnet18,gpt,lstm")
    args = p.parse_args(argv)
    torch = try_import_torch()
    tinytorch.set_num_threads(args.threads)
    if torch is not None:
        torch.set_num_threads(args.threads)
    print(f"device {args.device}, {args.threads} threads, size {args.size}, load {os.getloadavg()[0]:.1f}", flush=True)
    results = []
    for name in args.only.split(","):
        ours = make_step(tinytorch, name, args.size, args.device, args.steps)
        ref = make_step(torch, name, args.size, args.device, args.steps) if torch is not None else None
        a, b = alternate_medians(ours, ref, args.rounds)
        line = f"{name:10s} step: tinytorch {a * 1e3:8.1f} ms"
        if b is not None:
            line += f"   torch {b * 1e3:8.1f} ms   ratio {a / b:5.2f}x"
        print(line, flush=True)
        results.append({"name": name, "ours": a, "ref": b})
    return results


if __name__ == "__main__":
    main()
