"""Where the time of demo/gpt.py's training step goes on the GPU, tinytorch against PyTorch.

    python3 bench/profile/gpt_profile.py [--preset gpt2] [--out DIR] [--graphs]

One step of each library (after warm-up) runs inside ``torch.profiler.profile`` with CUDA and CPU
activities: CUPTI records every kernel the process launches, tinytorch's included. Writes each
library's per-kernel table (``key_averages().table``) to DIR (default ``$OUT`` or ``.``) and prints
the kernel time per category (GEMM, attention, norms, ...) side by side, the kernel count, and host
time per step (until the step returns) against the step's time (until the GPU is done): a host time
close to the step time means the GPU waits for the launches. Needs torch with CUDA.
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: _harness, the *_bench scripts
import numpy as np  # noqa: E402

from gpt_bench import VOCAB, load_demo  # noqa: E402
import tinytorch as tt  # noqa: E402

# Kernel name -> category, first match wins (cuBLAS/cuDNN/flash names and tinytorch's own).
CATEGORIES = [
    ("attention", r"attention|flash|fmha|sdpa|softmax_warp|cudnn_generated"),
    ("gemm", r"gemm|sm90_xmma|cutlass|nvjet|xmma|cublas|splitk"),
    ("layer_norm", r"layer_norm|layernorm|norm_rows"),
    ("cross_entropy", r"cross_entropy|nll|log_softmax|logsoftmax"),
    ("optimizer", r"adam|optim|multi_tensor"),
    ("reduce/norm", r"reduce|norm|sum"),
    ("gelu", r"gelu"),
    ("embedding", r"embedding|index|gather|scatter"),
    ("cast/copy", r"copy|cast|convert|contiguous|to_dtype"),
    ("fill", r"fill|zero"),
    ("elementwise", r"elementwise|binary|unary|vectorized|kernel"),
]


def category(name: str) -> str:
    low = name.lower()
    for cat, pat in CATEGORIES:
        if re.search(pat, low):
            return cat
    return "other"


def make_step(lib, demo, cfg_kw, batch, graphs: bool):
    lib.manual_seed(0)
    model = demo.GPT(demo.GPTConfig(**cfg_kw)).to("cuda")
    opt = lib.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.95), weight_decay=0.1, fused=True,
                          capturable=graphs)
    x, y = (lib.from_numpy(a).to("cuda") for a in batch)

    def autocast():
        return lib.autocast(device_type="cuda", dtype=lib.bfloat16)
    train_step = demo.make_train_step(model, opt, autocast, 1.0)
    if graphs:
        graphed = demo.GraphedStep(train_step, opt, [(x, y)] * 2)
        return lambda: graphed(x, y)

    def step():
        train_step(x, y)
        opt.zero_grad(set_to_none=True)
    return step


def host_and_step_ms(lib, step, reps: int = 5) -> tuple:
    """Medians over ``reps`` steps: (ms until step() returns, ms until the GPU finishes)."""
    host, total = [], []
    for _ in range(reps):
        lib.cuda.synchronize()
        t0 = time.perf_counter()
        step()
        t1 = time.perf_counter()
        lib.cuda.synchronize()
        t2 = time.perf_counter()
        host.append((t1 - t0) * 1e3)
        total.append((t2 - t0) * 1e3)
    return statistics.median(host), statistics.median(total)


def kernel_times(prof) -> dict:
    """Kernel name -> (total self device time in ms, calls), from the profile's CUDA events."""
    import torch
    out = {}
    for e in prof.key_averages():
        if getattr(e, "device_type", None) != torch.autograd.DeviceType.CUDA:
            continue
        us = getattr(e, "self_device_time_total", None)
        if us is None:
            us = e.self_cuda_time_total
        if us > 0:
            out[e.key] = (us / 1e3, e.count)
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--preset", default="gpt2")
    p.add_argument("--out", default=os.environ.get("OUT", "."))
    p.add_argument("--graphs", action="store_true", help="profile the graph-replayed steps too")
    p.add_argument("--top", type=int, default=25, help="rows of each table printed")
    p.add_argument("--vocab-size", type=int, default=None, help="vocabulary (default: the preset's in gpt_bench.VOCAB)")
    args = p.parse_args(argv)
    import torch
    os.makedirs(args.out, exist_ok=True)
    ours_demo = load_demo("tinytorch")
    preset = ours_demo.PRESETS[args.preset]
    V = args.vocab_size or VOCAB[args.preset]
    cfg_kw = dict(vocab_size=V, block_size=preset["block_size"], n_layer=preset["n_layer"], n_head=preset["n_head"],
                  n_embd=preset["n_embd"], dropout=0.0)
    rng = np.random.default_rng(0)
    B, T = preset["batch_size"], preset["block_size"]
    batch = (rng.integers(0, V, (B, T)), rng.integers(0, V, (B, T)))
    cases = [("tinytorch", tt, ours_demo, False), ("torch", torch, load_demo("torch"), False)]
    if args.graphs:
        cases += [("tinytorch_graphed", tt, ours_demo, True), ("torch_graphed", torch, cases[1][2], True)]
    steps = [(name, lib, make_step(lib, demo, cfg_kw, batch, graphs)) for name, lib, demo, graphs in cases]
    profile_steps(steps, args.out, "gpt_profile", args.top)


def profile_steps(steps, out: str, prefix: str, top_rows: int) -> None:
    """Profiles one call of each (name, lib, step) after warm-up; writes ``<prefix>_<name>.txt``
    (the per-kernel table) to ``out`` and prints the top kernels and the time per category."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    summary = {}
    for name, lib, step in steps:
        for _ in range(3):
            step()
        host, total = host_and_step_ms(lib, step)
        lib.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
            step()
            lib.cuda.synchronize()
        table = prof.key_averages().table(sort_by="self_cuda_time_total", row_limit=60)
        with open(os.path.join(out, f"{prefix}_{name}.txt"), "w") as f:
            f.write(f"{name}: host {host:.2f} ms/step, step {total:.2f} ms\n{table}\n")
        kt = kernel_times(prof)
        summary[name] = (host, total, kt)
        top = sorted(kt.items(), key=lambda kv: -kv[1][0])[:top_rows]
        print(f"\n== {name}: host {host:.2f} ms until the step returns, {total:.2f} ms per step; "
              f"{sum(c for _, c in kt.values())} kernels, {sum(t for t, _ in kt.values()):.2f} ms of kernel time",
              flush=True)
        for k, (ms, calls) in top:
            print(f"  {ms:8.3f} ms {calls:6d}x  [{category(k)}] {k[:110]}")
        del step
        torch.cuda.empty_cache()
    names = list(summary)
    cats = {}
    for n in names:
        for k, (ms, calls) in summary[n][2].items():
            c = cats.setdefault(category(k), {m: [0.0, 0] for m in names})
            c[n][0] += ms
            c[n][1] += calls
    print("\nkernel time per category, ms (calls):")
    print(f"  {'category':14s}" + "".join(f"{n:>26s}" for n in names))
    for c, per in sorted(cats.items(), key=lambda kv: -kv[1][names[0]][0]):
        print(f"  {c:14s}" + "".join(f"{per[n][0]:17.2f} ({per[n][1]:5d})" for n in names))
    print(f"  {'step (wall)':14s}" + "".join(f"{summary[n][1]:26.2f}" for n in names))
    print(f"  {'host':14s}" + "".join(f"{summary[n][0]:26.2f}" for n in names), flush=True)

if __name__ == "__main__":
    main()
