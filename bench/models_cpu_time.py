"""bench/models_bench.py's training steps timed by the calling thread's CPU time, one thread each,
tinytorch and PyTorch alternating: on a shared machine, other processes disturb CPU time far less than
wall time. Prints medians and the ratio (tinytorch / torch; < 1 means tinytorch is faster).

    .venv-ref/bin/python bench/models_cpu_time.py [--rounds 7] [--steps 3] [--only resnet18]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import types

os.environ.setdefault("OMP_WAIT_POLICY", "passive")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models_bench  # noqa: E402
import tinytorch  # noqa: E402
from _harness import alternate_medians, try_import_torch  # noqa: E402


def main(argv=None) -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--only", default="resnet18", help="comma-separated subset of resnet18,gpt,lstm")
    args = p.parse_args(argv)
    torch = try_import_torch()
    if torch is None:
        return
    # One thread: all of a step's work runs on the calling thread, whose CPU time is then the step's.
    tinytorch.set_num_threads(1)
    torch.set_num_threads(1)
    models_bench.time = types.SimpleNamespace(perf_counter=time.thread_time)  # the steps' clock
    print(f"1 thread, CPU time, load {os.getloadavg()[0]:.1f}", flush=True)
    for name in args.only.split(","):
        ours = models_bench.make_step(tinytorch, name, "cpu", "cpu", args.steps)
        ref = models_bench.make_step(torch, name, "cpu", "cpu", args.steps)
        a, b = alternate_medians(ours, ref, args.rounds)
        print(f"{name:10s} step: tinytorch {a * 1e3:8.1f} ms   torch {b * 1e3:8.1f} ms   ratio {a / b:5.2f}x",
              flush=True)


if __name__ == "__main__":
    main()
