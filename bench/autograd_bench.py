"""Autograd host-overhead benchmarks against PyTorch CPU (issue: autograd).

    /path/to/venv-with-torch/bin/python bench/autograd_bench.py
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import compare, try_import_torch  # noqa: E402
import tinytorch as tt  # noqa: E402


def main() -> None:
    torch = try_import_torch()
    if torch is None:
        return
    torch.set_num_threads(2)
    tt.set_num_threads(2)
    print(f"torch {torch.__version__}")

    # 1. host overhead of a + b on 1-element tensors
    a, b = tt.ones(1), tt.ones(1)
    ta, tb = torch.ones(1), torch.ones(1)
    compare("a + b, 1 element, grad off", lambda: a + b, lambda: ta + tb, rounds=21, inner=2000, unit="us",
            ref_name="torch")
    ag, bg = tt.ones(1, requires_grad=True), tt.ones(1, requires_grad=True)
    tag, tbg = torch.ones(1, requires_grad=True), torch.ones(1, requires_grad=True)
    compare("a + b, 1 element, grad on", lambda: ag + bg, lambda: tag + tbg, rounds=21, inner=2000, unit="us",
            ref_name="torch")

    # 2. Linear(4, 4) forward + sum().backward() on a (1, 4) input
    tt.manual_seed(0)
    lin = tt.nn.Linear(4, 4)
    tlin = torch.nn.Linear(4, 4)
    x, tx = tt.randn(1, 4), torch.randn(1, 4)
    compare("Linear(4,4) forward + sum().backward()", lambda: lin(x).sum().backward(),
            lambda: tlin(tx).sum().backward(), rounds=21, inner=200, unit="us", ref_name="torch")

    # 3. backward of a 20-layer MLP, width 256, batch 64
    layers = []
    tlayers = []
    for _ in range(20):
        layers += [tt.nn.Linear(256, 256), tt.nn.ReLU()]
        tlayers += [torch.nn.Linear(256, 256), torch.nn.ReLU()]
    mlp, tmlp = tt.nn.Sequential(*layers), torch.nn.Sequential(*tlayers)
    xb, txb = tt.randn(64, 256), torch.randn(64, 256)

    def ours():
        loss = mlp(xb).sum()
        loss.backward()

    def ref():
        loss = tmlp(txb).sum()
        loss.backward()
    compare("20-layer MLP (256 wide, batch 64) fwd + backward", ours, ref, rounds=15, inner=3, ref_name="torch")

    def ours_bwd_only():
        loss = mlp(xb).sum()
        return loss

    import time
    import statistics
    ob, rb = [], []
    for _ in range(15):
        loss = mlp(xb).sum()
        t = time.perf_counter(); loss.backward(); ob.append(time.perf_counter() - t)
        tloss = tmlp(txb).sum()
        t = time.perf_counter(); tloss.backward(); rb.append(time.perf_counter() - t)
    mo, mr = statistics.median(ob), statistics.median(rb)
    print(f"{'20-layer MLP backward only':48s} tinytorch {mo * 1e3:9.3f} ms   torch {mr * 1e3:9.3f} ms   "
          f"ratio {mo / mr:5.2f}x")


if __name__ == "__main__":
    main()
