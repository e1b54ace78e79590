"""MNIST training throughput, tinytorch vs PyTorch CPU in one process, alternating runs.

The CNN of demo/mnist.py (batch 64, Adadelta) and an MLP 784-512-256-10 (SGD momentum 0.9,
lr 0.05, batch 128), data held in memory, N steps per run. Prints samples/s and the ratio
(tinytorch / PyTorch; > 1 means tinytorch is faster).

    python bench/mnist_bench.py [--steps 30] [--rounds 5] [--threads 2] [--device cpu|cuda] [--graphs]

--graphs (CUDA): tinytorch's whole training step (forward, backward, optimizer step) is captured
once in a CUDA graph and replayed each step, new batches copied into the captured inputs;
PyTorch stays eager.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402

from _harness import alternate_medians, load_script, try_import_torch  # noqa: E402
import tinytorch as tt  # noqa: E402

net_class = load_script("demo/mnist.py", "mnist_demo").net_class


def cnn(nn, F, flatten):
    """demo/mnist.py's Net, built from either library."""
    return net_class(nn, F, flatten)()


def mlp(nn):
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 10))


def graphed_step(lib, model, opt, loss_fn, x, y):
    """The training step captured in a CUDA graph (PyTorch's whole-network capture recipe):
    warm-up on a side stream, grads set to None so backward allocates them from the graph's pool.
    Returns (replay, static_x, static_y)."""
    cuda = lib.cuda
    static_x, static_y = x.clone(), y.clone()
    side = cuda.Stream()
    side.wait_stream(cuda.current_stream())
    with cuda.stream(side):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            loss_fn(model(static_x), static_y).backward()
            opt.step()
    cuda.current_stream().wait_stream(side)
    g = cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with cuda.graph(g):
        loss_fn(model(static_x), static_y).backward()
        opt.step()
    return g, static_x, static_y


def make_run(lib, kind: str, batch: int, steps: int, device: str, data, graphs: bool = False):
    nn, F, optim = lib.nn, lib.nn.functional, lib.optim
    images, labels = data
    x_all = lib.tensor(images).to(device)
    y_all = lib.tensor(labels).to(device)
    if kind == "cnn":
        model = cnn(nn, F, lib.flatten).to(device)
        opt = optim.Adadelta(model.parameters(), lr=1.0)
        x_all = x_all.reshape(-1, 1, 28, 28)
        loss_fn = F.nll_loss
    else:
        model = mlp(nn).to(device)
        opt = optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        x_all = x_all.reshape(-1, 784)
        loss_fn = F.cross_entropy
    n = x_all.shape[0]
    batches = [(x_all[i:i + batch], y_all[i:i + batch]) for i in range(0, n - batch + 1, batch)]
    sync = (lambda: lib.cuda.synchronize()) if device.startswith("cuda") else (lambda: None)
    if graphs:
        g, static_x, static_y = graphed_step(lib, model, opt, loss_fn, *batches[0])

        def replay(x, y) -> None:
            static_x.copy_(x)
            static_y.copy_(y)
            g.replay()
        return samples_per_second(replay, batches, steps, batch, sync)

    def eager(x, y) -> None:
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
    return samples_per_second(eager, batches, steps, batch, sync)


def samples_per_second(step, batches, steps: int, batch: int, sync):
    """A run: ``step(x, y)`` on ``steps`` batches in turn, then ``sync()``; returns samples/s."""
    def run() -> float:
        t = time.perf_counter()
        for s in range(steps):
            step(*batches[s % len(batches)])
        sync()
        return steps * batch / (time.perf_counter() - t)
    return run


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--device", default="cpu")
    p.add_argument("--batch", type=int, default=None, help="override both batch sizes")
    p.add_argument("--only", choices=["cnn", "mlp"], default=None)
    p.add_argument("--graphs", action="store_true",
                   help="replay tinytorch's training step from a CUDA graph (torch stays eager)")
    p.add_argument("--no-cudnn", action="store_true",
                   help="tinytorch's GPU convolutions through im2col + cuBLAS (torch keeps cuDNN)")
    p.add_argument("--cudnn-benchmark", action="store_true",
                   help="backends.cudnn.benchmark = True in both libraries (engines timed once per shape)")
    args = p.parse_args()
    tt.backends.cudnn.enabled = not args.no_cudnn
    tt.backends.cudnn.benchmark = args.cudnn_benchmark
    torch = try_import_torch()
    if torch is not None:
        torch.backends.cudnn.benchmark = args.cudnn_benchmark
    tt.set_num_threads(args.threads)
    if torch is not None:
        torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    images = rng.random((8192, 28, 28), dtype=np.float32)
    labels = rng.integers(0, 10, 8192)
    for kind, batch in (("cnn", 64), ("mlp", 128)):
        if args.only and kind != args.only:
            continue
        batch = args.batch or batch
        ours = make_run(tt, kind, batch, args.steps, args.device, (images, labels), graphs=args.graphs)
        ref = make_run(torch, kind, batch, args.steps, args.device, (images, labels)) if torch else None
        ours()
        if ref:
            ref()
        ma, mb = alternate_medians(ours, ref, args.rounds)
        mode = " (CUDA graph)" if args.graphs else ""
        line = (f"{kind.upper()} batch {batch} on {args.device}, {args.threads} threads: tinytorch{mode} "
                f"{ma:9.0f} samples/s")
        if ref:
            line += f"   torch {mb:9.0f} samples/s   ratio {ma / mb:5.2f}x"
        print(line, flush=True)


if __name__ == "__main__":
    main()
