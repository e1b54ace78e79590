"""conv2d forward / backward pieces for the two conv layers of the MNIST CNN, tinytorch vs
PyTorch CPU in one process, alternating runs; medians and ratios (tinytorch time / torch time,
< 1 means tinytorch is faster). Also max_pool2d 2x2 forward/backward on conv2's output.

    python bench/conv_bench.py [--threads 2] [--rounds 15] [--batch 64]
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402

import tinytorch as tt  # noqa: E402
from _harness import compare, try_import_torch  # noqa: E402

C = tt._C


def layers(batch: int):
    # (name, input shape, weight shape): conv1 (1 -> 32, 28x28), conv2 (32 -> 64, 26x26), 3x3, stride 1
    return [("conv1", (batch, 1, 28, 28), (32, 1, 3, 3)), ("conv2", (batch, 32, 26, 26), (64, 32, 3, 3))]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--inner", type=int, default=3)
    args = p.parse_args()
    torch = try_import_torch()
    if torch is None:
        return
    tt.set_num_threads(args.threads)
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    one, zero = (1, 1), (0, 0)
    kw = dict(rounds=args.rounds, inner=args.inner, ref_name="torch")
    for name, xs, ws in layers(args.batch):
        x = rng.standard_normal(xs, dtype=np.float32)
        w = rng.standard_normal(ws, dtype=np.float32) * 0.1
        b = rng.standard_normal(ws[0], dtype=np.float32)
        tx, tw, tb = (tt.tensor(a)._impl for a in (x, w, b))
        rx, rw, rb = (torch.from_numpy(a) for a in (x, w, b))
        ro = torch.nn.functional.conv2d(rx, rw, rb)
        go = rng.standard_normal(tuple(ro.shape), dtype=np.float32)
        tg, rg = tt.tensor(go)._impl, torch.from_numpy(go)
        # correctness guard: forward and all grads agree with torch
        out = np.asarray(tt._tensor._wrap(C.conv2d(tx, tw, tb, one, zero, one, 1)).numpy())
        np.testing.assert_allclose(out, ro.numpy(), rtol=1e-3, atol=1e-3)
        rgrads = torch.ops.aten.convolution_backward(rg, rx, rw, [ws[0]], [1, 1], [0, 0], [1, 1], False, [0, 0], 1,
                                                     [True, True, True])
        tgrads = C.conv2d_backward(tg, tx, tw, one, zero, one, 1, (True, True, True))
        for t_, r_ in zip(tgrads, rgrads):
            np.testing.assert_allclose(tt._tensor._wrap(t_).numpy(), r_.numpy(), rtol=1e-3, atol=2e-3)

        compare(f"{name} forward {xs}", lambda: C.conv2d(tx, tw, tb, one, zero, one, 1),
                lambda: torch.nn.functional.conv2d(rx, rw, rb), **kw)
        for label, mask in (("grad_input", (True, False, False)), ("grad_weight", (False, True, False)),
                            ("grad_bias", (False, False, True)), ("backward all", (True, True, True))):
            if name == "conv1" and mask[0]:
                mask = (False,) + mask[1:]  # the CNN never needs conv1's grad_input
                if not any(mask):
                    continue
            ref_mask = list(mask)
            compare(f"{name} {label}", lambda m=mask: C.conv2d_backward(tg, tx, tw, one, zero, one, 1, m),
                    lambda m=ref_mask: torch.ops.aten.convolution_backward(rg, rx, rw, [ws[0]], [1, 1], [0, 0], [1, 1],
                                                                           False, [0, 0], 1, m), **kw)
    # max_pool2d 2x2 on conv2's output
    y = rng.standard_normal((args.batch, 64, 24, 24), dtype=np.float32)
    ty, ry = tt.tensor(y), torch.from_numpy(y)
    compare("max_pool2d 2x2 forward", lambda: tt.nn.functional.max_pool2d(ty, 2),
            lambda: torch.nn.functional.max_pool2d(ry, 2), **kw)
    ty.requires_grad_(True)
    ry.requires_grad_(True)
    gp = rng.standard_normal((args.batch, 64, 12, 12), dtype=np.float32)
    tgp, rgp = tt.tensor(gp), torch.from_numpy(gp)

    def tpool():
        tt.nn.functional.max_pool2d(ty, 2).backward(tgp)

    def rpool():
        torch.nn.functional.max_pool2d(ry, 2).backward(rgp)
    compare("max_pool2d 2x2 forward+backward", tpool, rpool, **kw)


if __name__ == "__main__":
    main()
