"""tinytorch.linalg factorizations and solvers against numpy.linalg (same LAPACK family, float64),
alternating in one process: one large matrix and a batch of small ones per function.

    python bench/linalg_bench.py [--threads 2]
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402

from _harness import compare  # noqa: E402
import tinytorch as tt  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args()
    tt.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    print(f"threads={args.threads}  numpy {np.__version__}")
    for shape in [(512, 512), (256, 16, 16)]:
        n = shape[-1]
        a = rng.standard_normal(shape) + n * np.eye(n)
        spd = a @ np.swapaxes(a, -1, -2)
        b = rng.standard_normal(shape[:-1] + (8,))
        ta, tspd, tb = tt.tensor(a), tt.tensor(spd), tt.tensor(b)
        tag = "x".join(map(str, shape))
        rounds = 7 if n >= 512 else 15
        compare(f"solve {tag} (8 rhs)", lambda: tt.linalg.solve(ta, tb), lambda: np.linalg.solve(a, b), rounds)
        compare(f"inv {tag}", lambda: tt.linalg.inv(ta), lambda: np.linalg.inv(a), rounds)
        compare(f"det {tag}", lambda: tt.linalg.det(ta), lambda: np.linalg.det(a), rounds)
        compare(f"cholesky {tag}", lambda: tt.linalg.cholesky(tspd), lambda: np.linalg.cholesky(spd), rounds)
        compare(f"qr {tag}", lambda: tt.linalg.qr(ta), lambda: np.linalg.qr(a), rounds)
        compare(f"eigh {tag}", lambda: tt.linalg.eigh(tspd), lambda: np.linalg.eigh(spd), rounds)
        compare(f"svd {tag} (reduced)", lambda: tt.linalg.svd(ta, full_matrices=False),
                lambda: np.linalg.svd(a, full_matrices=False), rounds)


if __name__ == "__main__":
    main()
