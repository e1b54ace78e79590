"""Distributed benchmarks: all-reduce bus bandwidth (1 MiB .. 1 GiB) and DDP MNIST CNN samples/s,
tinytorch against PyTorch, alternating launches (tinytorch, torch, tinytorch, ...) for --rounds rounds.

    python bench/ddp_bench.py                                  # NCCL: 1 and 2 GPUs, batch 512 per rank
    python bench/ddp_bench.py --backend mpi --max-mib 64       # CPU: MPI (tinytorch) vs gloo (torch)

Each launch is ``python -m tinytorch.distributed.run --nproc-per-node N bench/ddp_bench.py --worker
LIB``; rank 0 prints one ``RESULT {json}`` line. Medians over rounds are reported with ratios
(tinytorch / torch, higher is better for both bandwidth and samples/s). Bus bandwidth as
nccl-tests: algbw = bytes / time, busbw = algbw * 2 (n - 1) / n.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

# Measures whatever `import tinytorch` resolves to (installed, or a PYTHONPATH you set): no sys.path edits.
HERE = os.path.dirname(os.path.abspath(__file__))


# ---------------------------------------------------------------------------- worker (one library)
def bench_allreduce(lib, dist, device, sizes, iters, sync):
    n = dist.get_world_size()
    rows = {}
    for nbytes in sizes:
        x = lib.ones(nbytes // 4, dtype=lib.float32, device=device)
        for _ in range(3):
            dist.all_reduce(x)
        sync()
        it = iters * 10 if nbytes <= (16 << 20) else iters if nbytes <= (64 << 20) else max(2, iters // 4)
        t0 = time.perf_counter()
        for _ in range(it):
            dist.all_reduce(x)
        sync()
        dt = (time.perf_counter() - t0) / it
        algbw = nbytes / dt / 1e9
        rows[nbytes] = algbw * 2 * (n - 1) / n if n > 1 else algbw
    return rows


def host_us_per_allreduce(lib, dist, device, sync, calls=300):
    """Host time to issue one all_reduce of 1 KiB (no waiting for the GPU)."""
    x = lib.ones(256, device=device)
    for _ in range(10):
        dist.all_reduce(x)
    sync()
    t0 = time.perf_counter()
    for _ in range(calls):
        dist.all_reduce(x)
    host = (time.perf_counter() - t0) / calls
    sync()
    return host * 1e6


def bench_ddp(lib, dist, device, steps, batch, ddp_cls, make_net, F, sync):
    lib.manual_seed(0)
    model = ddp_cls(make_net().to(device), device_ids=[device] if device.type == "cuda" else None)
    opt = lib.optim.SGD(model.parameters(), lr=0.01)
    x = lib.randn(batch, 1, 28, 28, device=device)
    y = lib.randint(0, 10, (batch,), device=device)
    for i in range(steps + 5):
        if i == 5:
            sync()
            t0 = time.perf_counter()
        opt.zero_grad()
        F.nll_loss(model(x), y).backward()
        opt.step()
    sync()
    return batch * dist.get_world_size() * steps / (time.perf_counter() - t0)


def worker(libname: str, args) -> None:
    if libname == "tinytorch":
        import tinytorch as lib
        import tinytorch.distributed as dist
        from tinytorch.nn.parallel import DistributedDataParallel as DDP
    else:
        import torch as lib
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP
    from mnist_bench import cnn      # demo/mnist.py's Net, built from either library
    F = lib.nn.functional
    cuda = args.backend == "nccl"
    local = int(os.environ.get("LOCAL_RANK", "0"))
    if cuda:
        lib.cuda.set_device(local)
        device = lib.device("cuda", local)
    else:
        device = lib.device("cpu")
    backend = args.backend if (cuda or libname == "tinytorch") else "gloo"
    dist.init_process_group(backend)
    sync = (lambda: lib.cuda.synchronize()) if cuda else (lambda: None)
    sizes = [1 << s for s in range(20, 31) if (1 << s) <= args.max_mib << 20]
    host = host_us_per_allreduce(lib, dist, device, sync)
    busbw = bench_allreduce(lib, dist, device, sizes, args.iters, sync)
    sps = bench_ddp(lib, dist, device, args.steps, args.batch, DDP, lambda: cnn(lib.nn, F, lib.flatten), F, sync)
    nccl = None
    if cuda:
        nccl = lib._cuda_backend().nccl_version() if libname == "tinytorch" else lib.cuda.nccl.version()
    if dist.get_rank() == 0:
        print("RESULT " + json.dumps({"busbw": busbw, "sps": sps, "host_us": host, "nccl": str(nccl)}), flush=True)
    dist.destroy_process_group()


# ---------------------------------------------------------------------------- driver
def launch(libname: str, nproc: int, args) -> dict | None:
    cmd = [sys.executable, "-m", "tinytorch.distributed.run", "--nproc-per-node", str(nproc), "--backend",
           args.backend, os.path.abspath(__file__), "--worker", libname, "--backend", args.backend,
           "--max-mib", str(args.max_mib), "--iters", str(args.iters), "--steps", str(args.steps),
           "--batch", str(args.batch)]
    try:
        # cwd=HERE: `python -m` puts the current directory first on sys.path, and the repository root's
        # tinytorch/ (no compiled extensions) must not shadow the tinytorch being measured
        p = subprocess.run(cmd, cwd=HERE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=args.timeout)
    except subprocess.TimeoutExpired as e:
        print(f"{libname} x{nproc}: timed out after {args.timeout} s\n{(e.output or b'').decode()[-2000:]}", flush=True)
        return None
    out = p.stdout.decode(errors="replace")
    for line in out.splitlines():
        if line.startswith("RESULT "):
            r = json.loads(line[7:])
            r["busbw"] = {int(k): v for k, v in r["busbw"].items()}
            return r
    print(f"{libname} x{nproc}: exit {p.returncode}, no result\n{out[-3000:]}", flush=True)
    return None


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--worker", choices=["tinytorch", "torch"], help=argparse.SUPPRESS)
    p.add_argument("--backend", default="nccl", choices=["nccl", "mpi"])
    p.add_argument("--nprocs", default="1,2", help="world sizes to run, e.g. 1,2")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--max-mib", type=int, default=1024)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--batch", type=int, default=512, help="per rank")
    p.add_argument("--timeout", type=float, default=240)
    p.add_argument("--no-torch", action="store_true")
    args = p.parse_args()
    if args.worker:
        return worker(args.worker, args)

    libs = ["tinytorch"]
    if not args.no_torch:
        try:
            import torch  # noqa: F401
            libs.append("torch")
        except ImportError:
            print("PyTorch not importable: tinytorch only")
    nprocs = [int(n) for n in args.nprocs.split(",")]
    res: dict = {(lib, n): [] for lib in libs for n in nprocs}
    try:
        from tqdm import tqdm
    except ImportError:
        def tqdm(x, **_):
            return x
    for _ in tqdm(range(args.rounds), desc="rounds"):
        for n in nprocs:
            for lib in libs:                      # alternating: tinytorch, torch, tinytorch, ...
                r = launch(lib, n, args)
                if r is not None:
                    res[(lib, n)].append(r)

    def med_sps(lib, n):
        v = [r["sps"] for r in res[(lib, n)]]
        return statistics.median(v) if v else float("nan")

    def med_bw(lib, n, size):
        v = [r["busbw"][size] for r in res[(lib, n)] if size in r["busbw"]]
        return statistics.median(v) if v else float("nan")

    print(f"\nbackend {args.backend}, batch {args.batch} per rank, medians of {args.rounds} alternating rounds")
    if args.backend == "nccl":
        print("NCCL versions: " + ", ".join(f"{lib} {rs[0]['nccl']}" for (lib, n), rs in res.items() if rs and n == 1))
    big = max(nprocs)
    if big > 1:
        print(f"\nall-reduce float32, {big} ranks: bus bandwidth GB/s")
        print(f"{'size':>8} " + " ".join(f"{lib:>10}" for lib in libs) + ("     ratio" if len(libs) > 1 else ""))
        for s in sorted({s for rs in res.values() for r in rs for s in r["busbw"]}):
            bws = [med_bw(lib, big, s) for lib in libs]
            ratio = f"  {bws[0] / bws[1]:>7.2f}x" if len(libs) > 1 else ""
            every = "  ".join("/".join(f"{r['busbw'][s]:.0f}" for r in res[(lib, big)]) for lib in libs)
            print(f"{s / 2**20:>6.0f}Mi " + " ".join(f"{b:>10.1f}" for b in bws) + ratio + f"   rounds: {every}")
        hosts = [statistics.median([r["host_us"] for r in res[(lib, big)]] or [float("nan")]) for lib in libs]
        print("host us per 1 KiB all_reduce call: " + "  ".join(f"{lib} {h:.1f}" for lib, h in zip(libs, hosts)))
    print("\nDDP MNIST CNN samples/s")
    for n in nprocs:
        sps = [med_sps(lib, n) for lib in libs]
        ratio = f"   ratio {sps[0] / sps[1]:.2f}x" if len(libs) > 1 else ""
        print(f"{n} rank(s): " + "  ".join(f"{lib} {s:>9.0f}" for lib, s in zip(libs, sps)) + ratio)
    if 1 in nprocs and big > 1:
        print(f"scaling 1 -> {big}: " + "  ".join(f"{lib} {med_sps(lib, big) / med_sps(lib, 1):.2f}x" for lib in libs))


if __name__ == "__main__":
    main()
