"""Fused scaled_dot_product_attention: tinytorch's fused kernels vs its composed path (matmul +
softmax + matmul) vs PyTorch's scaled_dot_product_attention (its flash backend on the GPU), in one
process, alternating; medians, ratios (tinytorch / torch: < 1 means tinytorch is faster) and
peak memory on the GPU.

    python bench/attention_bench.py --device cuda            # bf16, B=4, H=16, T=4096, D=64 and 128, causal
    .venv-ref/bin/python bench/attention_bench.py --device cpu # float32, B=1, H=8, T=1024, D=64
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402

from _harness import try_import_torch  # noqa: E402
import tinytorch as tt  # noqa: E402
from tinytorch.nn.functional.attention import _composed_scaled_dot_product_attention  # noqa: E402


def make_inputs(lib, shape, dtype, device, seed):
    rng = np.random.default_rng(seed)
    t = lib.tensor(rng.standard_normal(shape).astype(np.float32), device=device).to(getattr(lib, dtype))
    t.requires_grad_(True)
    return t


def runner(lib, fn, q, k, v, g, backward):
    def run():
        for t in (q, k, v):
            t.grad = None
        out = fn(q, k, v, is_causal=True)
        if backward:
            out.backward(g)
    return run


def timed(lib, fn, device, reps):
    sync = lib.cuda.synchronize if device == "cuda" else (lambda: None)
    fn()
    sync()
    t = time.perf_counter()
    for _ in range(reps):
        fn()
    sync()
    return (time.perf_counter() - t) / reps


def peak_bytes(lib, fn):
    lib.cuda.synchronize()
    base = lib.cuda.memory_allocated()
    lib.cuda.reset_peak_memory_stats()
    fn()
    lib.cuda.synchronize()
    return lib.cuda.max_memory_allocated() - base


def bench(args, torch, B, H, T, D):
    dev, dt = args.device, args.dtype
    shape = (B, H, T, D)
    ours = [make_inputs(tt, shape, dt, dev, s) for s in range(4)]
    impls = {"fused": (tt, tt.nn.functional.scaled_dot_product_attention, ours)}
    if not args.no_composed:
        impls["composed"] = (tt, _composed_scaled_dot_product_attention, ours)
    if torch is not None:
        theirs = [make_inputs(torch, shape, dt, dev, s) for s in range(4)]
        impls["torch"] = (torch, torch.nn.functional.scaled_dot_product_attention, theirs)
    flops_fwd = 4 * B * H * T * T * D / 2   # causal: half the (T, T) products
    for backward in (False, True):
        fns = {n: runner(lib, fn, *x[:3], x[3].detach(), backward) for n, (lib, fn, x) in impls.items()}
        times = {n: [] for n in fns}
        for _ in range(args.rounds):   # alternating
            for n, fn in fns.items():
                times[n].append(timed(impls[n][0], fn, dev, args.reps))
        med = {n: statistics.median(ts) for n, ts in times.items()}
        flops = flops_fwd * (3.5 if backward else 1.0)   # backward: 2.5x the forward's products
        label = f"{dt} B={B} H={H} T={T} D={D} causal {'fwd+bwd' if backward else 'fwd'}"
        unit, div = ("TFLOP/s", 1e12) if dev == "cuda" else ("GFLOP/s", 1e9)
        line = f"{label:46s}" + "".join(f" {n} {med[n] * 1e3:8.2f} ms ({flops / med[n] / div:6.1f} {unit})"
                                         for n in med)
        if "torch" in med:
            line += f"   fused/torch {med['fused'] / med['torch']:5.2f}x"
        if "composed" in med:
            line += f"   fused/composed {med['fused'] / med['composed']:5.2f}x"
        print(line, flush=True)
        if dev == "cuda" and backward:
            mem = {n: peak_bytes(impls[n][0], fns[n]) / 2**20 for n in fns}
            print(f"{'':46s} peak memory above inputs: " + ", ".join(f"{n} {m:.0f} MiB" for n, m in mem.items()),
                  flush=True)
    for lib, _, x in impls.values():
        del x[:]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cuda", choices=["cpu", "cuda"])
    p.add_argument("--dtype", default=None)
    p.add_argument("--batch", type=int, default=None)
    p.add_argument("--heads", type=int, default=None)
    p.add_argument("--seq", type=int, default=None)
    p.add_argument("--head-dims", type=int, nargs="+", default=None)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--reps", type=int, default=None)
    p.add_argument("--no-composed", action="store_true", help="skip the composed path (its (T, T) matrices)")
    args = p.parse_args()
    gpu = args.device == "cuda"
    args.dtype = args.dtype or ("bfloat16" if gpu else "float32")
    B, H, T = args.batch or (4 if gpu else 1), args.heads or (16 if gpu else 8), args.seq or (4096 if gpu else 1024)
    args.reps = args.reps or (5 if gpu else 1)
    torch = try_import_torch()
    if torch is not None and not gpu:
        torch.set_num_threads(tt.get_num_threads())
    name = tt.cuda.get_device_name() if gpu else "cpu"
    print(f"device: {name}  threads {tt.get_num_threads()}  torch {torch.__version__ if torch else '-'}", flush=True)
    for D in args.head_dims or ([64, 128] if gpu else [64]):
        bench(args, torch, B, H, T, D)


if __name__ == "__main__":
    main()
