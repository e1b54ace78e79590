"""Per-op breakdown of one MNIST CNN training step (demo/mnist.py's Net) on the GPU, tinytorch
against PyTorch, alternating, forward and backward of each layer timed separately.

    python bench/profile/cnn_profile.py [--batch 512] [--reps 20] [--rounds 5]

Backward of a layer is timed as ``autograd.grad(out, inputs, grad, retain_graph=True)`` on that
layer alone. Prints milliseconds per call (medians) and the ratio (tinytorch / torch; < 1 means
tinytorch is faster). PyTorch runs with its defaults (cuDNN, TF32 convolutions).
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: _harness, the *_bench scripts
from _harness import compare, try_import_torch  # noqa: E402
import tinytorch as tt  # noqa: E402


def layers(lib, B, dev):
    """(name, make) pairs; make() -> (forward fn, backward fn) on fresh inputs."""
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)
    conv1, conv2 = nn.Conv2d(1, 32, 3, 1).to(dev), nn.Conv2d(32, 64, 3, 1).to(dev)
    fc1, fc2 = nn.Linear(9216, 128).to(dev), nn.Linear(128, 10).to(dev)
    x0 = lib.randn(B, 1, 28, 28, device=dev)
    a1 = lib.randn(B, 32, 26, 26, device=dev, requires_grad=True)
    a2 = lib.randn(B, 64, 24, 24, device=dev, requires_grad=True)
    a3 = lib.randn(B, 64, 12, 12, device=dev, requires_grad=True)
    h = lib.randn(B, 9216, device=dev, requires_grad=True)
    h2 = lib.randn(B, 128, device=dev, requires_grad=True)
    y = lib.randint(0, 10, (B,), device=dev)
    specs = [
        ("conv1 (1->32)", lambda: conv1(x0), list(conv1.parameters())),
        ("relu (B,32,26,26)", lambda: F.relu(a1), [a1]),
        ("conv2 (32->64)", lambda: conv2(a1), [a1] + list(conv2.parameters())),
        ("max_pool2d 2", lambda: F.max_pool2d(a2, 2), [a2]),
        ("dropout 0.25", lambda: F.dropout(a3, 0.25, True), [a3]),
        ("fc1 9216->128", lambda: fc1(h), [h] + list(fc1.parameters())),
        ("fc2+log_softmax+nll", lambda: F.nll_loss(F.log_softmax(fc2(h2), dim=1), y), [h2] + list(fc2.parameters())),
    ]
    out = []
    for name, fwd, ins in specs:
        o = fwd()
        g = lib.ones_like(o)

        def bwd(o=o, g=g, ins=ins):
            lib.autograd.grad(o, ins, g, retain_graph=True)
        out.append((name, fwd, bwd))
    model = [conv1, conv2, fc1, fc2]
    params = [p for m in model for p in m.parameters()]
    for p in params:
        p.grad = lib.randn_like(p)
    opt = lib.optim.Adadelta(params, lr=1.0)
    out.append(("Adadelta step", opt.step, None))
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=512)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--no-cudnn", action="store_true",
                   help="tinytorch's GPU convolutions through im2col + cuBLAS (torch keeps cuDNN)")
    args = p.parse_args()
    tt.backends.cudnn.enabled = not args.no_cudnn
    torch = try_import_torch()
    if torch is None or not tt.cuda.is_available():
        print("needs a GPU and PyTorch")
        return
    ours = layers(tt, args.batch, "cuda")
    ref = layers(torch, args.batch, "cuda")
    print(f"MNIST CNN layers, batch {args.batch}, {torch.cuda.get_device_name()}, ms per {args.reps} calls")
    for (name, f1, b1), (_, f2, b2) in zip(ours, ref):
        def run(fn, sync):
            def go():
                for _ in range(args.reps):
                    fn()
                sync()
            return go
        compare(f"{name} fwd", run(f1, tt.cuda.synchronize), run(f2, torch.cuda.synchronize), rounds=args.rounds,
                inner=1, ref_name="torch")
        if b1 is not None:
            compare(f"{name} bwd", run(b1, tt.cuda.synchronize), run(b2, torch.cuda.synchronize),
                    rounds=args.rounds, inner=1, ref_name="torch")


if __name__ == "__main__":
    main()
