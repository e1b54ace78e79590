"""Layers composed from other ops this tinytorch writes in Python (LSTM, einsum attention,
interpolate, in-place through a view) against PyTorch's fused kernels, alternating in one
process; forward + backward, median ms and the ratio (tinytorch / torch).

    /path/to/venv-with-torch/bin/python bench/composed_bench.py [--device cpu|cuda]
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import compare, try_import_torch  # noqa: E402
import tinytorch as tt  # noqa: E402


def cases(lib, device):
    lib.manual_seed(0)
    lstm = lib.nn.LSTM(64, 128, num_layers=2).to(device)
    seq = lib.randn(32, 16, 64, device=device, requires_grad=True)
    q = lib.randn(8, 4, 128, 32, device=device, requires_grad=True)
    img = lib.randn(8, 16, 32, 32, device=device, requires_grad=True)
    base = lib.randn(256, 256, device=device, requires_grad=True)

    def run_lstm():
        lstm(seq)[0].sum().backward()

    def run_einsum():
        lib.einsum("bhqd,bhkd->bhqk", q, q).softmax(-1).sum().backward()

    def run_interp():
        lib.nn.functional.interpolate(img, scale_factor=2, mode="bilinear").sum().backward()

    def run_inplace_view():
        y = base * 1
        y[:, :8] += 1.0
        y.sum().backward()
    return {"LSTM(64, 128, 2 layers), seq 32 x batch 16, fwd+bwd": run_lstm,
            "einsum attention scores (8, 4, 128, 32) + softmax": run_einsum,
            "interpolate bilinear x2, (8, 16, 32, 32)": run_interp,
            "y[:, :8] += 1 on a (256, 256) tensor needing grad": run_inplace_view}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cpu")
    args = p.parse_args()
    torch = try_import_torch()
    if torch is None:
        return
    ours, ref = cases(tt, args.device), cases(torch, args.device)
    sync = (lambda lib: lib.cuda.synchronize) if args.device == "cuda" else (lambda lib: (lambda: None))
    for name in ours:
        a, b = ours[name], ref[name]
        compare(name, lambda: (a(), sync(tt)()), lambda: (b(), sync(torch)()), rounds=9, ref_name="torch")


if __name__ == "__main__":
    main()
