"""demo/gpt.py's training step at the shapes users train, tinytorch vs PyTorch in one process,
alternating.

The demo's GPT classes are built from the demo's own source: once as written (tinytorch), once
with its three imports switched to torch. Each round times N steps (forward, backward, gradient
clipping, fused AdamW; dropout 0) of a demo preset on the same random batches, for every variant
in turn: tinytorch, torch eager, and, with --compile, ``torch.compile(model)`` as nanoGPT trains
it. Prints the shape (layers, heads, width, vocabulary, B x T, dtype), the median step time,
tokens/s (and MFU on CUDA) of each, and tinytorch's time over each one's (< 1: tinytorch faster).

The vocabulary is part of the shape: the cpu and gpu presets train demo/gpt.py's character model
(65 symbols), gpt2 is GPT-2 small with GPT-2's BPE vocabulary, 50257 tokens padded to 50304 as in
nanoGPT (the lm_head and the cross entropy over it are a large share of that step).

    .venv-ref/bin/python bench/gpt_bench.py [--steps 10] [--rounds 5] [--threads 2] [--preset cpu]
    .venv-ref/bin/python bench/gpt_bench.py --preset cpu --vocab-size 50304 --compile   # CPU inductor (g++)
    python3 bench/gpt_bench.py --device cuda --preset gpu      # bf16 autocast, as the demo on a GPU
    python3 bench/gpt_bench.py --device cuda --preset gpt2 --graphs   # torch.compile on; + CUDA graphs

tinytorch is whatever ``import tinytorch`` resolves to (the installed package, or the source tree
with ``PYTHONPATH=/path/to/repo`` after a build and scripts/dev_link.sh).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402

from _harness import alternate_all, load_script, try_import_torch  # noqa: E402
import tinytorch as tt  # noqa: E402

_IMPORTS = {"import tinytorch as torch": "import torch", "import tinytorch.nn as nn": "import torch.nn as nn",
            "import tinytorch.nn.functional as F": "import torch.nn.functional as F",
            # torch keeps nanoGPT's explicit float32 copy of the logits (its autocast would run
            # log_softmax and nll_loss on them as two ops); tinytorch reads bf16 logits in float32
            # without the copy, so the demo leaves the cast out
            "F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))":
                "F.cross_entropy(logits.view(-1, logits.shape[-1]).float(), targets.view(-1))"}
# The vocabulary each demo preset is measured at (--vocab-size overrides): the character model's
# 65 symbols for cpu/gpu, GPT-2's 50257 BPE tokens padded to a multiple of 64 for gpt2.
VOCAB = {"cpu": 65, "gpu": 65, "gpt2": 50304}


def load_demo(library: str) -> types.ModuleType:
    """demo/gpt.py as a module, its imports switched to ``library`` ("tinytorch" or "torch")."""
    return load_script("demo/gpt.py", f"gpt_demo_{library}", _IMPORTS if library == "torch" else None)


def make_run(lib, demo, cfg_kw, batches, steps: int, device: str = "cpu", graphs: bool = False,
             compile_mode: str | None = None, autocast_cuda: bool = True):
    """A function timing ``steps`` training steps (demo.make_train_step) and returning seconds per
    step; with ``graphs``, the step is captured once (demo.GraphedStep, capturable AdamW) and
    replayed; with ``compile_mode`` (torch only), the model is ``torch.compile(model, mode=...)``d.
    The first call (compilation, cuBLAS plans, optimizer state) happens here, untimed. The
    function's ``n_params`` is the model's parameter count."""
    lib.manual_seed(0)
    model = demo.GPT(demo.GPTConfig(**cfg_kw)).to(device)
    n_params = sum(q.numel() for q in model.parameters())
    opt = lib.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.95), weight_decay=0.1, fused=True,
                          capturable=graphs)
    if compile_mode is not None:
        model = lib.compile(model, mode=compile_mode)
    data = [(lib.from_numpy(x).to(device), lib.from_numpy(y).to(device)) for x, y in batches]
    cuda = device.startswith("cuda")

    def autocast():
        return lib.autocast(device_type="cuda", dtype=lib.bfloat16, enabled=cuda and autocast_cuda)
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
    run.n_params = n_params
    return run


def parse_args(argv, presets) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--preset", choices=sorted(presets), default="cpu")
    p.add_argument("--vocab-size", type=int, default=None,
                   help="vocabulary (default per preset: " + ", ".join(f"{k} {v}" for k, v in VOCAB.items()) + ")")
    p.add_argument("--batch-size", type=int, default=None, help="B (default: the preset's)")
    p.add_argument("--block-size", type=int, default=None, help="T (default: the preset's)")
    p.add_argument("--device", default="cpu", help="cpu or cuda (bf16 autocast on cuda)")
    p.add_argument("--no-autocast", action="store_true", help="float32 on cuda too")
    p.add_argument("--compile", action=argparse.BooleanOptionalAction, default=None,
                   help="also time torch.compile(model) (default: on for the gpt2 preset on cuda)")
    p.add_argument("--compile-mode", default="default", choices=["default", "reduce-overhead", "max-autotune"],
                   help="torch.compile's mode")
    p.add_argument("--graphs", action="store_true",
                   help="also time the step captured in a CUDA graph and replayed (tinytorch and torch)")
    p.add_argument("--peak-tflops", type=float, default=989.0,
                   help="the GPU's dense bf16 peak for model FLOPs utilisation (H100/H200 SXM: 989)")
    args = p.parse_args(argv)
    preset = presets[args.preset]
    if args.vocab_size is None:
        if args.preset not in VOCAB:
            p.error(f"preset {args.preset!r} has no vocabulary in gpt_bench.VOCAB: pass --vocab-size")
        args.vocab_size = VOCAB[args.preset]
    args.batch_size = args.batch_size or preset["batch_size"]
    args.block_size = args.block_size or preset["block_size"]
    for name in ("vocab_size", "batch_size", "block_size", "steps", "rounds", "threads"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    if args.compile is None:
        args.compile = args.preset == "gpt2" and args.device.startswith("cuda")
    if args.graphs and not args.device.startswith("cuda"):
        p.error("--graphs needs --device cuda")
    return args


def main(argv=None) -> dict:
    """Runs the bench; returns each variant's median seconds per step by name ("tinytorch", "torch",
    "torch.compile", "tinytorch graphed", "torch graphed": those measured)."""
    ours_demo = load_demo("tinytorch")
    args = parse_args(argv, ours_demo.PRESETS)
    torch = try_import_torch()
    preset = ours_demo.PRESETS[args.preset]
    B, T, V = args.batch_size, args.block_size, args.vocab_size
    cfg_kw = dict(vocab_size=V, block_size=T, n_layer=preset["n_layer"], n_head=preset["n_head"],
                  n_embd=preset["n_embd"], dropout=0.0)
    rng = np.random.default_rng(0)
    batches = [(rng.integers(0, V, (B, T)), rng.integers(0, V, (B, T))) for _ in range(4)]
    tt.set_num_threads(args.threads)
    autocast_cuda = not args.no_autocast
    kw = dict(device=args.device, autocast_cuda=autocast_cuda)
    runs = {"tinytorch": make_run(tt, ours_demo, cfg_kw, batches, args.steps, **kw)}
    if torch is not None:
        torch.set_num_threads(args.threads)
        torch_demo = load_demo("torch")
        runs["torch"] = make_run(torch, torch_demo, cfg_kw, batches, args.steps, **kw)
        if args.compile:
            runs["torch.compile"] = make_run(torch, torch_demo, cfg_kw, batches, args.steps,
                                             compile_mode=args.compile_mode, **kw)
    if args.graphs:
        runs["tinytorch graphed"] = make_run(tt, ours_demo, cfg_kw, batches, args.steps, graphs=True, **kw)
        if torch is not None:
            runs["torch graphed"] = make_run(torch, torch_demo, cfg_kw, batches, args.steps, graphs=True, **kw)
    n_params = runs["tinytorch"].n_params
    med = alternate_all(runs, args.rounds)
    cuda = args.device.startswith("cuda")
    dtype = "bf16 autocast" if cuda and autocast_cuda else "float32"
    threads = "" if cuda else f", {args.threads} threads"
    compiled = f" ({args.compile_mode})" if args.compile and args.compile_mode != "default" else ""
    print(f"GPT {args.preset} training step: {cfg_kw['n_layer']} layers, {cfg_kw['n_head']} heads, width "
          f"{cfg_kw['n_embd']}, vocab {V}, {B}x{T} tokens, {dtype}, {args.device}{threads}; "
          f"{n_params / 1e6:.1f}M parameters; median of {args.rounds} rounds x {args.steps} steps", flush=True)
    # nanoGPT's estimate of training FLOPs per token: 6 N + 12 L T E (attention scores and mixing)
    flops_per_token = 6 * n_params + 12 * cfg_kw["n_layer"] * T * cfg_kw["n_embd"]
    ours = {"torch": "tinytorch", "torch.compile": "tinytorch", "torch graphed": "tinytorch graphed",
            "tinytorch graphed": None}
    for name, sec in med.items():
        tok_s = B * T / sec
        mfu = f", MFU {flops_per_token * tok_s / (args.peak_tflops * 1e12):5.1%}" if cuda else ""
        label = name + (compiled if name == "torch.compile" else "")
        vs = f"   {ours[name]} / {label}: {med[ours[name]] / sec:.2f}x" if ours.get(name) in med else ""
        print(f"  {label:24s} {sec * 1e3:9.1f} ms  {tok_s:12,.0f} tokens/s{mfu}{vs}", flush=True)
    return med


if __name__ == "__main__":
    main()
