"""Quantized matvec bandwidth (nn.QuantizedLinear, one input row: LLM decode).

For SmolLM2-135M's weight shapes (out x in: 576x1536 down, 1536x576 gate/up, 49152x576 LM head)
and a 4096x4096 one, per GGML type: the matvec's time and the packed bytes it streams per second,
against (same run, alternating) a plain copy of the same number of bytes (the bandwidth share:
matvec GB/s / copy GB/s, where the copy reads and writes each byte once)
Each line is printed for the median and the best of the alternating rounds and a float32 matvec
on the dequantized weight (numpy on the CPU, cuBLAS through tinytorch on the GPU).
`--prefill` times more input rows on one shape (the matvec up to 8 rows, dequantized tiles +
GEMM above) against the float32 GEMM.

    python bench/quant_bench.py [--device cuda] [--prefill] [--threads N]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import timed  # noqa: E402
import tinytorch as tt  # noqa: E402

QTYPES = {"Q4_0": (2, 32, 18, (0,)), "Q4_1": (3, 32, 20, (0, 2)), "Q8_0": (8, 32, 34, (0,)),
          "Q4_K": (12, 256, 144, (0, 2)), "Q6_K": (14, 256, 210, (208,))}
SHAPES = [(576, 1536), (1536, 576), (49152, 576), (4096, 4096)]


def packed(name: str, n: int, k: int, rng) -> np.ndarray:
    """Random blocks (speed does not depend on the values) with small finite fp16 scales."""
    _, values, nbytes, half_fields = QTYPES[name]
    raw = rng.integers(0, 256, (n, k // values, nbytes), dtype=np.uint8)
    for off in half_fields:
        raw[:, :, off:off + 2] = np.full((n, k // values), 0.01, np.float16).view(np.uint8).reshape(
            n, k // values, 2)
    return raw.reshape(n, -1)


def alternate(fns, rounds: int, inner: int = 1) -> list[tuple[float, float]]:
    """Times each of fns once per round, alternating; (median, best) seconds per call for each.
    On a machine shared with other work the best of the rounds is the steadier figure."""
    times = [[] for _ in fns]
    for _ in range(rounds):
        for t, f in zip(times, fns):
            t.append(timed(f, inner))
    return [(statistics.median(t), min(t)) for t in times]


def sync(device: str) -> None:
    if device == "cuda":
        tt.cuda.synchronize()


def bench_matvec(device: str, rounds: int, rng) -> None:
    print(f"matvec, 1 input row (float32), device {device}, threads {tt.get_num_threads()}; "
          "GB/s = packed weight bytes / time; share = matvec GB/s / copy GB/s")
    print(f"{'weight':>12s} {'qtype':>5s} {'stat':>6s} {'MB':>7s} {'matvec us':>10s} {'GB/s':>7s} {'copy GB/s':>9s} "
          f"{'share':>6s} {'f32 us':>9s} {'f32 GB/s':>8s} {'vs f32':>7s}")
    for n, k in SHAPES:
        x = rng.standard_normal((1, k)).astype(np.float32)
        xt = tt.tensor(x).to(device)
        w32 = None
        for name, (code, values, *_rest) in QTYPES.items():
            if k % values:
                continue  # K-quants need in_features % 256 == 0 (GGUF files keep such rows in Q8_0/Q4_1 etc.)
            data = packed(name, n, k, rng)
            layer = tt.nn.QuantizedLinear(k, n, code, data, device=device)
            if w32 is None:  # float32 reference weight (values do not matter for speed)
                w32 = layer.dequantize().cpu().numpy() if device == "cpu" else layer.dequantize()
            src = tt.tensor(data).to(device) if device == "cuda" else data
            dst = tt.empty(*src.shape, dtype=tt.uint8, device=device) if device == "cuda" else np.empty_like(data)
            inner = max(1, int(2e6 // data.nbytes))

            def ours():
                layer(xt)
                sync(device)

            def copy():
                dst.copy_(src) if device == "cuda" else np.copyto(dst, src)
                sync(device)

            if device == "cpu":
                def f32():
                    w32 @ x[0]
            else:
                def f32():
                    tt.nn.functional.linear(xt, w32)
                    sync(device)
            for f in (ours, copy, f32):
                f()
            res = alternate([ours, copy, f32], rounds, inner)
            for stat, pick in (("median", 0), ("best", 1)):
                t_ours, t_copy, t_f32 = (r[pick] for r in res)
                gb, gb_copy = data.nbytes / t_ours / 1e9, data.nbytes / t_copy / 1e9
                print(f"{n:>5d}x{k:<6d} {name:>5s} {stat:>6s} {data.nbytes / 1e6:7.2f} {t_ours * 1e6:10.1f} {gb:7.1f} "
                      f"{gb_copy:9.1f} {gb / gb_copy:6.2f} {t_f32 * 1e6:9.1f} {n * k * 4 / t_f32 / 1e9:8.1f} "
                      f"{t_f32 / t_ours:6.2f}x", flush=True)


def bench_prefill(device: str, rounds: int, rng) -> None:
    n, k = 1536, 576
    print(f"\nprefill, weight {n}x{k} Q4_0, device {device}: time per call; 'as 8-row calls' runs the "
          "matvec kernel over the rows in chunks of 8 (its cost if it took every batch)")
    data = packed("Q4_0", n, k, rng)
    layer = tt.nn.QuantizedLinear(k, n, 2, data, device=device)
    w32 = layer.dequantize()
    for m in (1, 2, 4, 8, 16, 64, 512):
        xt = tt.tensor(rng.standard_normal((m, k)).astype(np.float32)).to(device)
        chunks = [xt[i:i + 8] for i in range(0, m, 8)]

        def ours():
            layer(xt)
            sync(device)

        def as_matvec():
            for c in chunks:
                layer(c)
            sync(device)

        def f32():
            tt.nn.functional.linear(xt, w32)
            sync(device)
        for f in (ours, as_matvec, f32):
            f()
        (t_ours, b_ours), (t_mv, b_mv), (t_f32, b_f32) = alternate([ours, as_matvec, f32], rounds)
        print(f"  M={m:<4d} quantized {t_ours * 1e6:9.1f} us (best {b_ours * 1e6:9.1f})   as 8-row calls "
              f"{t_mv * 1e6:9.1f} (best {b_mv * 1e6:9.1f})   float32 linear {t_f32 * 1e6:9.1f} "
              f"(best {b_f32 * 1e6:9.1f})   ratio {t_ours / t_f32:5.2f}x", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--prefill", action="store_true")
    args = ap.parse_args()
    if args.threads:
        tt.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    bench_matvec(args.device, args.rounds, rng)
    if args.prefill:
        bench_prefill(args.device, args.rounds, rng)


if __name__ == "__main__":
    main()
