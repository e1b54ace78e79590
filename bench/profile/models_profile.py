"""Where the time of bench/models_bench.py's training steps goes on the GPU, tinytorch against
PyTorch: one profiled step per library (after warm-up), the per-kernel tables written to DIR and
the kernel time per category printed side by side, with host time per step against the step's
time (a host time close to the step time means the GPU waits for the launches). Needs torch with CUDA.

    python3 bench/profile/models_profile.py [--model resnet18|gpt|lstm] [--size cpu|big] [--out DIR]
"""
from __future__ import annotations

import argparse
import itertools
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_here, os.path.dirname(_here)]  # gpt_profile beside it; models_bench in bench/
from gpt_profile import profile_steps  # noqa: E402
import tinytorch as tt  # noqa: E402
from models_bench import GPT_SIZES, build_step  # noqa: E402


def main(argv=None) -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="resnet18", choices=["resnet18", "gpt", "lstm"])
    p.add_argument("--size", default="big", choices=sorted(GPT_SIZES))
    p.add_argument("--out", default=os.environ.get("OUT", "."))
    p.add_argument("--top", type=int, default=25, help="rows of each table printed")
    args = p.parse_args(argv)
    import torch
    os.makedirs(args.out, exist_ok=True)
    steps = []
    for name, lib in (("tinytorch", tt), ("torch", torch)):
        one, counter = build_step(lib, args.model, args.size, "cuda"), itertools.count()
        steps.append((name, lib, lambda one=one, counter=counter: one(next(counter))))
    profile_steps(steps, args.out, f"{args.model}_profile", args.top)


if __name__ == "__main__":
    main()
