"""Where MNIST CNN training time goes on the GPU, tinytorch vs PyTorch: both libraries' training
steps run under torch.profiler (CUPTI sees every kernel in the process, tinytorch's included),
then the kernels are listed by total GPU time per step, and tinytorch's cached cuDNN plans
(pass, shapes, engine) are printed.

    python bench/profile/mnist_conv_profile.py [--batch 512] [--steps 20] [--cudnn-benchmark]
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: _harness, the *_bench scripts
import numpy as np  # noqa: E402

from mnist_bench import make_run  # noqa: E402
import tinytorch as tt  # noqa: E402
from tinytorch._core.cuda_loader import cuda_backend  # noqa: E402


def kernel_table(torch, prof, steps: int, top: int) -> str:
    """The top kernels by total CUDA time, in microseconds per training step."""
    rows = [(e.device_time_total / steps, e.count / steps, e.key) for e in prof.key_averages()
            if e.device_time_total > 0 and e.device_type == torch.autograd.DeviceType.CUDA]
    rows.sort(reverse=True)
    total = sum(r[0] for r in rows)
    lines = [f"  total {total:9.1f} us/step"]
    lines += [f"  {us:9.1f} us  x{n:4.1f}  {name[:110]}" for us, n, name in rows[:top]]
    return "\n".join(lines)


def api_table(torch, prof, steps: int, wall_us: float, top: int = 10) -> str:
    """The host's CUDA runtime/driver calls per step (count, time) and how busy the GPU was: a
    synchronizing call or an allocation each step leaves the GPU idle between kernels."""
    kernel_us = sum(e.device_time_total for e in prof.key_averages()
                    if e.device_type == torch.autograd.DeviceType.CUDA) / steps
    rows = [(e.count / steps, e.cpu_time_total / steps, e.key) for e in prof.key_averages()
            if e.device_type == torch.autograd.DeviceType.CPU and e.key.startswith(("cuda", "cu", "Memcpy", "Memset"))]
    rows.sort(key=lambda r: -r[1])
    lines = [f"  wall {wall_us:9.1f} us/step, kernels {kernel_us:9.1f} us/step: GPU busy {kernel_us / wall_us:5.1%}"]
    lines += [f"  x{n:6.1f} {us:9.1f} us  {name[:100]}" for n, us, name in rows[:top]]
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=512)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--cudnn-benchmark", action="store_true")
    p.add_argument("--top", type=int, default=14, help="kernels listed")
    args = p.parse_args()
    import torch
    from torch.profiler import ProfilerActivity, profile
    tt.backends.cudnn.benchmark = torch.backends.cudnn.benchmark = args.cudnn_benchmark
    rng = np.random.default_rng(0)
    data = (rng.random((8192, 28, 28), dtype=np.float32), rng.integers(0, 10, 8192))
    for name, lib in (("tinytorch", tt), ("torch", torch)):
        run = make_run(lib, "cnn", args.batch, args.steps, "cuda", data)
        run()  # warm-up: plans built (and timed) here
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            sps = run()
        print(f"{name}: batch {args.batch}, {sps:.0f} samples/s under the profiler", flush=True)
        print(kernel_table(torch, prof, args.steps, args.top), flush=True)
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            sps = run()
        print(f"{name}: host calls ({sps:.0f} samples/s under the profiler)", flush=True)
        print(api_table(torch, prof, args.steps, 1e6 * args.batch / sps), flush=True)
    print("tinytorch's cuDNN plans:")
    for line in cuda_backend().cudnn_plans():
        print("  " + line)


if __name__ == "__main__":
    main()
