"""BitLinear inference, packed (2 bits per weight) vs the float32 nn.Linear of the same shape.

    python bench/bitlinear_bench.py [--rounds 15] [--device cpu|cuda] [--batches 1,64]
    python bench/bitlinear_bench.py --device cuda --batches 1,8,32,64   # the CUDA kernel's range and past it

For each shape: the weight's bytes (packed codes + scale vs float32) and the forward time of
PackedBitLinear vs nn.Linear, alternating in one process (medians; ratio = packed / float).
PackedBitLinear runs the packed int8 x ternary kernel (_C.bitnet_matmul: cpp/src/cpu/bitnet.cpp,
cuda/src/bitnet.cu) up to 8 tokens a call on the CPU and 32 on CUDA; above that it unpacks the
weight on the fly (a table gather) before a float matmul, so the 64-token ratio measures that
unpack's cost.
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _harness import compare  # noqa: E402
import tinytorch as tt  # noqa: E402
import tinytorch.nn as nn  # noqa: E402

SHAPES = [(768, 768), (768, 3072), (2048, 2048)]   # (in, out)
BATCHES = [1, 64]                                   # tokens per call: decode (matvec) and a prompt


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--device", default="cpu")
    p.add_argument("--batches", default=",".join(map(str, BATCHES)), help="tokens per call, comma-separated")
    args = p.parse_args(argv)
    batches = [int(b) for b in args.batches.split(",")]
    tt.manual_seed(0)
    rows = []
    for in_f, out_f in SHAPES:
        bit = nn.BitLinear(in_f, out_f, bias=False, device=args.device)
        packed = bit.pack()
        dense = nn.Linear(in_f, out_f, bias=False, device=args.device)
        float_bytes = dense.weight.numel() * 4
        print(f"weight {out_f}x{in_f}: float32 {float_bytes / 2**20:.2f} MiB, packed {packed.weight_nbytes() / 2**20:.3f}"
              f" MiB ({packed.weight_nbytes() / float_bytes:.4f} of float32)")
        for batch in batches:
            x = tt.randn(batch, in_f, device=args.device)

            def ours():
                with tt.no_grad():
                    packed(x)
                if args.device != "cpu":
                    tt.cuda.synchronize()

            def ref():
                with tt.no_grad():
                    dense(x)
                if args.device != "cpu":
                    tt.cuda.synchronize()

            row = compare(f"packed vs float linear {out_f}x{in_f}, {batch} token(s)", ours, ref, rounds=args.rounds,
                          ref_name="float32 Linear")
            row["packed_bytes"], row["float_bytes"] = packed.weight_nbytes(), float_bytes
            rows.append(row)
    return rows


if __name__ == "__main__":
    main()
