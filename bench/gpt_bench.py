"""demo/gpt.py's training step, tinytorch vs PyTorch in one process, alternating.

The demo's GPT classes are built twice from the demo's own source: once as written (tinytorch),
once with its three imports switched to torch. Each round times N steps (forward, backward,
gradient clipping, fused AdamW) of the default CPU config on the same batches; prints the median
step time and the ratio (tinytorch / PyTorch; < 1 means tinytorch is faster).

    /tmp/tv/bin/python bench/gpt_bench.py [--steps 10] [--rounds 5] [--threads 2] [--preset cpu]
    python3 bench/gpt_bench.py --device cuda --preset gpu      # bf16 autocast, as the demo on a GPU
    python3 bench/gpt_bench.py --device cuda --preset gpt2 --graphs   # + the step replayed from a CUDA graph
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, ROOT)
import numpy as np  # noqa: E402

import tinytorch as tt  # noqa: E402
from _harness import alternate_all, try_import_torch  # noqa: E402

DEMO = os.path.join(ROOT, "demo", "gpt.py")
_IMPORTS = {"import tinytorch as torch": "import torch", "import tinytorch.nn as nn": "import torch.nn as nn",
            "import tinytorch.nn.functional as F": "import torch.nn.functional as F"}


def load_demo(library: str) -> types.ModuleType:
    """demo/gpt.py as a module, its imports switched to ``library`` ("tinytorch" or "torch")."""
    with open(DEMO, encoding="utf-8") as f:
        src = f.read()
    if library == "torch":
        for ours, theirs in _IMPORTS.items():
            assert ours in src, ours
            src = src.replace(ours, theirs)
    mod = types.ModuleType(f"gpt_demo_{library}")
    mod.__file__ = DEMO
    sys.modules[mod.__name__] = mod
    exec(compile(src, DEMO, "exec"), mod.__dict__)
    return mod


def make_run(lib, demo, cfg_kw, batches, steps: int, device: str = "cpu", graphs: bool = False):
    """A function timing ``steps`` training steps (demo.make_train_step) and returning seconds per
    step; with ``graphs``, the step is captured once (demo.GraphedStep, capturable AdamW) and
    replayed."""
    lib.manual_seed(0)
    model = demo.GPT(demo.GPTConfig(**cfg_kw)).to(device)
    opt = lib.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.95), weight_decay=0.1, fused=True,
                          capturable=graphs)
    data = [(lib.from_numpy(x).to(device), lib.from_numpy(y).to(device)) for x, y in batches]
    cuda = device.startswith("cuda")

    def autocast():
        return lib.autocast(device_type="cuda", dtype=lib.bfloat16, enabled=cuda)
    train_step = demo.make_train_step(model, opt, autocast, 1.0)
    if graphs:
        train_step = demo.GraphedStep(train_step, opt, data[:2])
    else:
        eager_step = train_step

        def train_step(x, y):
            loss = eager_step(x, y)
            opt.zero_grad(set_to_none=True)
            return loss

    def run() -> float:
        if cuda:
            lib.cuda.synchronize()
        t = time.perf_counter()
        for i in range(steps):
            train_step(*data[i % len(data)])
        if cuda:
            lib.cuda.synchronize()
        return (time.perf_counter() - t) / steps
    run()  # warm-up
    return run


def main(argv=None) -> dict:
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--preset", default="cpu")
    p.add_argument("--device", default="cpu", help="cpu or cuda (bf16 autocast on cuda)")
    p.add_argument("--graphs", action="store_true",
                   help="also time the step captured in a CUDA graph and replayed (tinytorch and torch)")
    p.add_argument("--peak-tflops", type=float, default=989.0,
                   help="the GPU's dense bf16 peak for model FLOPs utilisation (H100/H200 SXM: 989)")
    args = p.parse_args(argv)
    torch = try_import_torch()
    ours_demo = load_demo("tinytorch")
    preset = ours_demo.PRESETS[args.preset]
    cfg_kw = dict(vocab_size=65, block_size=preset["block_size"], n_layer=preset["n_layer"], n_head=preset["n_head"],
                  n_embd=preset["n_embd"], dropout=0.0)
    rng = np.random.default_rng(0)
    B, T = preset["batch_size"], preset["block_size"]
    batches = [(rng.integers(0, 65, (B, T)), rng.integers(0, 65, (B, T))) for _ in range(4)]
    tt.set_num_threads(args.threads)
    ours = make_run(tt, ours_demo, cfg_kw, batches, args.steps, args.device)
    ref = None
    if torch is not None:
        torch.set_num_threads(args.threads)
        ref = make_run(torch, load_demo("torch"), cfg_kw, batches, args.steps, args.device)
    runs = {"tinytorch": ours, "torch": ref}
    if args.graphs:
        runs["tinytorch graphed"] = make_run(tt, ours_demo, cfg_kw, batches, args.steps, args.device, graphs=True)
        if torch is not None:
            runs["torch graphed"] = make_run(torch, load_demo("torch"), cfg_kw, batches, args.steps, args.device,
                                             graphs=True)
    med = alternate_all({k: v for k, v in runs.items() if v is not None}, args.rounds)
    a, b = med["tinytorch"], med.get("torch")
    line = f"GPT {args.preset} step on {args.device} ({B}x{T} tokens, {args.threads} threads): tinytorch {a * 1e3:.1f} ms"
    if b is not None:
        line += f", torch {b * 1e3:.1f} ms, ratio {a / b:.2f}x"
    print(line, flush=True)
    for name in ("tinytorch graphed", "torch graphed"):
        if name in med:
            vs = f", ratio to torch eager {med[name] / b:.2f}x" if b is not None else ""
            print(f"  {name}: {med[name] * 1e3:.1f} ms{vs}", flush=True)
    # nanoGPT's estimate of training FLOPs per token: 6 N + 12 L T E (attention scores and mixing)
    n_params = sum(q.numel() for q in ours_demo.GPT(ours_demo.GPTConfig(**cfg_kw)).parameters())
    flops_per_token = 6 * n_params + 12 * cfg_kw["n_layer"] * T * cfg_kw["n_embd"]
    for name, sec in med.items():
        tok_s = B * T / sec
        mfu = f", MFU {flops_per_token * tok_s / (args.peak_tflops * 1e12):.1%}" if args.device.startswith("cuda") else ""
        print(f"  {name}: {tok_s:,.0f} tokens/s{mfu}  ({n_params / 1e6:.1f}M parameters)", flush=True)
    return {"ours": a, "ref": b}


if __name__ == "__main__":
    main()
