"""float32 GEMM through every path of the CPU kernel (cpp/src/cpu/sgemm_avx512.cpp, OpenBLAS)
against float64 numpy: A read in place or packed, B packed or read in place, several k- and m-blocks,
full and partial 32-column panels, transposed / sliced operands, alpha and beta; and the same
cases with the SIMD level capped (TINYTORCH_CPU_CAPABILITY=avx2 / default) in a child process."""
import os
import subprocess
import sys

import numpy as np
import pytest

import tinytorch as tt
from support.numeric import assert_close_dot, make

# (m, n, k): a plain A is read in place 12 rows at a time; a transposed A is packed for n >= 96 (8
# rows in place below); m <= 24 reads B in place; k > 384 takes several k-blocks; m > 336
# with k = 384 several m-blocks; odd sizes leave partial 12-row blocks and 32-column panels
# (n % 32 in 1..16: the half-width micro-kernel, 17..31: the masked one).
SHAPES = [(1, 1, 1), (7, 5, 3), (13, 33, 17), (25, 96, 40), (40, 120, 50), (37, 130, 129), (700, 100, 384),
          (50, 1100, 70), (129, 97, 800), (2048 // 8, 384, 128)]
LAYOUTS = [("contiguous", "contiguous"), ("transposed", "contiguous"), ("contiguous", "transposed"),
           ("transposed", "transposed"), ("sliced", "contiguous")]


@pytest.mark.parametrize("m,n,k", SHAPES)
@pytest.mark.parametrize("la,lb", LAYOUTS)
def test_matmul_paths(m, n, k, la, lb):
    a, ar = make((m, k), "float32", la, seed=m + k)
    b, br = make((k, n), "float32", lb, seed=n)
    assert_close_dot(tt.matmul(a, b), ar @ br, np.abs(ar) @ np.abs(br), "float32", what=f"{m}x{n}x{k} {la}/{lb}")


@pytest.mark.parametrize("m,n,k", [(37, 130, 129), (129, 97, 800), (20, 40, 9)])
@pytest.mark.parametrize("beta,alpha", [(0.0, 1.0), (0.5, 2.0), (1.0, -1.0)])
def test_addmm_alpha_beta(m, n, k, beta, alpha):
    a, ar = make((m, k), "float32", seed=1)
    b, br = make((k, n), "float32", "transposed", seed=2)
    c, cr = make((m, n), "float32", seed=3)
    out = tt.addmm(c, a, b, beta=beta, alpha=alpha)
    scale = abs(beta) * np.abs(cr) + abs(alpha) * (np.abs(ar) @ np.abs(br))
    assert_close_dot(out, beta * cr + alpha * (ar @ br), scale, "float32", what=f"beta={beta} alpha={alpha}")


@pytest.mark.parametrize("threads", [1, 2])
def test_thread_split_is_bitwise_stable(threads):
    # every C entry sums its k products in one order whatever share of C a thread computes
    a, _ = make((300, 500), "float32", seed=5)
    b, _ = make((500, 260), "float32", seed=6)
    old = tt.get_num_threads()
    try:
        tt.set_num_threads(1)
        want = tt.matmul(a, b).numpy()
        tt.set_num_threads(threads)
        got = tt.matmul(a, b).numpy()
    finally:
        tt.set_num_threads(old)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("level", ["avx2", "default"])
def test_capped_simd_level(level):
    # the SIMD level is read once per process: rerun the GEMM, attention and activation tests in a
    # child with TINYTORCH_CPU_CAPABILITY capping it (OpenBLAS + the generic tiles + plain loops)
    tests_dir = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    root = os.path.dirname(os.path.dirname(os.path.abspath(tt.__file__)))
    env = dict(os.environ, TINYTORCH_CPU_CAPABILITY=level,
               PYTHONPATH=os.pathsep.join(p for p in (tests_dir, root, os.environ.get("PYTHONPATH")) if p))
    files = [os.path.join(tests_dir, "ops", f) for f in ("activation/test_activation_vectorized.py",
                                                          "attention/test_attention_fused.py")]
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x",
                        os.path.abspath(__file__), *files, "-k", "not capped_simd_level"],
                       env=env, capture_output=True, text=True, timeout=600, cwd=root)
    assert r.returncode == 0 and " passed" in r.stdout, r.stdout[-3000:] + r.stderr[-2000:]
