"""Distributed benchmarks: all-reduce bus bandwidth (1 MiB .. 1 GiB) and DDP MNIST CNN samples/s.

    python -m tinytorch.distributed.run --nproc-per-node 2 bench/ddp_bench.py            # NCCL, 2 GPUs
    python -m tinytorch.distributed.run --nproc-per-node 1 bench/ddp_bench.py            # 1 GPU baseline
    python -m tinytorch.distributed.run --nproc-per-node 2 --backend mpi bench/ddp_bench.py --max-mib 64

With --torch (and PyTorch importable) the same measurements run through torch.distributed in the
same processes after tinytorch's (separate process group, same ranks, MASTER_PORT + 1).
Bus bandwidth as nccl-tests: algbw = bytes / time, busbw = algbw * 2 (n - 1) / n.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "demo"))


def bench_allreduce(lib, dist, device, sizes, iters, sync):
    rank, n = dist.get_rank(), dist.get_world_size()
    rows = []
    for nbytes in sizes:
        x = lib.ones(nbytes // 4, dtype=lib.float32, device=device)
        for _ in range(3):
            dist.all_reduce(x)
        sync()
        it = max(2, iters if nbytes <= (64 << 20) else iters // 4)
        t0 = time.perf_counter()
        for _ in range(it):
            dist.all_reduce(x)
        sync()
        dt = (time.perf_counter() - t0) / it
        algbw = nbytes / dt / 1e9
        rows.append((nbytes, dt * 1e6, algbw, algbw * 2 * (n - 1) / n if n > 1 else algbw))
    return rows


def bench_ddp(lib, dist, device, steps, batch, ddp_cls, net_cls, F, sync):
    lib.manual_seed(0)
    model = ddp_cls(net_cls().to(device), device_ids=[device] if device.type == "cuda" else None)
    opt = lib.optim.SGD(model.parameters(), lr=0.01)
    x = lib.randn(batch, 1, 28, 28, device=device)
    y = lib.randint(0, 10, (batch,), device=device)
    for i in range(steps + 3):
        if i == 3:
            sync()
            t0 = time.perf_counter()
        opt.zero_grad()
        F.nll_loss(model(x), y).backward()
        opt.step()
    sync()
    return batch * dist.get_world_size() * steps / (time.perf_counter() - t0)


def run(libname, args):
    if libname == "tinytorch":
        import tinytorch as lib
        import tinytorch.distributed as dist
        import tinytorch.nn.functional as F
        from tinytorch.nn.parallel import DistributedDataParallel as DDP
        from mnist import Net
    else:
        import torch as lib
        import torch.distributed as dist
        import torch.nn as tnn
        import torch.nn.functional as F
        from torch.nn.parallel import DistributedDataParallel as DDP

        class Net(tnn.Module):     # demo/mnist.py's Net
            def __init__(self):
                super().__init__()
                self.conv1, self.conv2 = tnn.Conv2d(1, 32, 3, 1), tnn.Conv2d(32, 64, 3, 1)
                self.dropout1, self.dropout2 = tnn.Dropout(0.25), tnn.Dropout(0.5)
                self.fc1, self.fc2 = tnn.Linear(9216, 128), tnn.Linear(128, 10)

            def forward(self, x):
                x = F.max_pool2d(F.relu(self.conv2(F.relu(self.conv1(x)))), 2)
                x = F.relu(self.fc1(lib.flatten(self.dropout1(x), 1)))
                return F.log_softmax(self.fc2(self.dropout2(x)), dim=1)
        os.environ["MASTER_PORT"] = str(int(os.environ["MASTER_PORT"]) + 1)
    cuda = lib.cuda.is_available() and os.environ.get("TINYTORCH_BACKEND", "nccl") == "nccl"
    local = int(os.environ.get("LOCAL_RANK", "0"))
    if cuda:
        lib.cuda.set_device(local)
        device = lib.device("cuda", local)
    else:
        device = lib.device("cpu")
    backend = "nccl" if cuda else ("mpi" if libname == "tinytorch" else "gloo")
    dist.init_process_group(backend)
    sync = (lambda: lib.cuda.synchronize()) if cuda else (lambda: None)
    sizes = [1 << s for s in range(20, 31) if (1 << s) <= args.max_mib << 20]
    rows = bench_allreduce(lib, dist, device, sizes, args.iters, sync)
    sps = bench_ddp(lib, dist, device, args.steps, args.batch, DDP, Net, F, sync)
    if dist.get_rank() == 0:
        print(f"\n== {libname}: {dist.get_world_size()} rank(s), backend {backend}, device {device.type}")
        print(f"{'size':>10} {'time (us)':>12} {'algbw GB/s':>11} {'busbw GB/s':>11}")
        for nbytes, us, alg, bus in rows:
            print(f"{nbytes / 2**20:>8.0f}Mi {us:>12.1f} {alg:>11.2f} {bus:>11.2f}")
        print(f"DDP MNIST CNN: {sps:.0f} samples/s (batch {args.batch} per rank)", flush=True)
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--max-mib", type=int, default=1024)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--torch", action="store_true", help="also run PyTorch DDP when importable")
    args = p.parse_args()
    run("tinytorch", args)
    if args.torch:
        try:
            import torch  # noqa: F401
        except ImportError:
            print("PyTorch not importable: skipped")
            return
        run("torch", args)


if __name__ == "__main__":
    main()
