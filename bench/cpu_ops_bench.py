"""CPU operator benchmarks against numpy (issue: foundation): matmul, add, sum, softmax, import time.

    python bench/cpu_ops_bench.py [--threads 2]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402

from _harness import compare  # noqa: E402
import tinytorch as tt  # noqa: E402


def import_time(module: str, python: str = sys.executable, runs: int = 7) -> float:
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    times = []
    for _ in range(runs):
        out = subprocess.run([python, "-c", code], capture_output=True, text=True)
        if out.returncode != 0:
            return float("nan")
        times.append(float(out.stdout.strip()))
    return sorted(times)[len(times) // 2]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--torch-python", default=None, help="a python with torch, to time `import torch`")
    args = p.parse_args()
    tt.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    print(f"threads={args.threads}  numpy {np.__version__}")

    a = rng.standard_normal((1024, 1024), dtype=np.float32)
    b = rng.standard_normal((1024, 1024), dtype=np.float32)
    ta, tb = tt.from_numpy(a), tt.from_numpy(b)
    compare("matmul 1024^3 float32", lambda: ta @ tb, lambda: a @ b)

    n = 16 * 1024 * 1024
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    out = np.empty_like(x)
    tx, ty, tout = tt.from_numpy(x), tt.from_numpy(y), tt.from_numpy(out)
    compare("add 16M float32 into preallocated out", lambda: tt._C.add_out(tx._impl, ty._impl, tout._impl),
            lambda: np.add(x, y, out=out))
    compare("add 16M float32, new output", lambda: tx + ty, lambda: x + y)
    compare("sum 16M float32", lambda: tx.sum(), lambda: x.sum())

    s = rng.standard_normal((4096, 4096), dtype=np.float32)
    ts = tt.from_numpy(s)

    def np_softmax():
        e = np.exp(s - s.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    compare("softmax (4096, 4096) float32 dim=1", lambda: ts.softmax(1), np_softmax, rounds=9)

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    print(f"import time (median of 7 fresh interpreters): numpy {import_time('numpy') * 1e3:.0f} ms, "
          f"tinytorch {import_time('tinytorch') * 1e3:.0f} ms, "
          f"torch {import_time('torch', args.torch_python or sys.executable) * 1e3:.0f} ms")


if __name__ == "__main__":
    main()
