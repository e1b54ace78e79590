"""GPU benchmarks against the machine's PyTorch, in one process, alternating (issue: CUDA).

GEMM 8192^3 (bf16, fp16, tf32, fp32) in TFLOP/s; elementwise add (fp32, bf16), softmax and
layer_norm bandwidth in GB/s; layer_norm forward and forward+backward (bytes of x, y, g, gx) and
softmax bf16 at widths 256-16384 over 2^26 elements ("norm"); dropout in training mode over 2^26 elements
(bytes of x, y and the bool mask; "dropout"); max_pool2d 3x3 stride 2 padding 1 on ResNet's stem
activations, forward and forward+backward ("pool"); cross_entropy over GPT-2's logits (8192 x 50304),
forward and forward+backward in ms ("loss"); host overhead of a tiny op in us; pinning and copying a batch
(DataLoader(pin_memory=True)) in us.

    python bench/gpu_bench.py [--quick] [--only gemm bandwidth norm dropout pool loss host pin]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import alternate_medians, try_import_torch  # noqa: E402
import tinytorch as tt  # noqa: E402


def gpu_time(lib, fn, reps: int) -> float:
    """Seconds per call, timed with the library's CUDA events after a warm-up."""
    fn()
    lib.cuda.synchronize()
    start, end = lib.cuda.Event(enable_timing=True), lib.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1e3 / reps


def alternate(name, ours, ref, reps, rounds, metric, unit):
    ma, mb = alternate_medians(lambda: metric(ours(reps)), ref and (lambda: metric(ref(reps))), rounds)
    line = f"{name:44s} tinytorch {ma:10.1f} {unit}"
    if ref:
        line += f"   torch {mb:10.1f} {unit}   ratio {ma / mb:5.2f}x"
    print(line, flush=True)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true")
    p.add_argument("--only", nargs="+", choices=["gemm", "bandwidth", "norm", "dropout", "pool", "loss", "host", "pin"],
                   help="run only these parts")
    args = p.parse_args()
    want = lambda part: args.only is None or part in args.only  # noqa: E731
    torch = try_import_torch()
    dev = "cuda"
    print(f"device: {tt.cuda.get_device_name()}  torch {torch.__version__ if torch else '-'}")
    rounds = 3 if args.quick else 5

    # GEMM
    n = 4096 if args.quick else 8192
    gemms = (("bfloat16", False), ("float16", False), ("float32", True), ("float32", False))
    for dname, tf32 in gemms if want("gemm") else ():
        label = "tf32" if tf32 else dname
        tt.backends.cuda.matmul.allow_tf32 = tf32
        a = tt.randn(n, n, device=dev, dtype=getattr(tt, dname))
        b = tt.randn(n, n, device=dev, dtype=getattr(tt, dname))
        ours = lambda r: gpu_time(tt, lambda: a @ b, r)
        ref = None
        if torch:
            torch.backends.cuda.matmul.allow_tf32 = tf32
            ta = torch.randn(n, n, device=dev, dtype=getattr(torch, dname))
            tb = torch.randn(n, n, device=dev, dtype=getattr(torch, dname))
            ref = lambda r: gpu_time(torch, lambda: ta @ tb, r)
        alternate(f"GEMM {n}^3 {label}", ours, ref, 5, rounds, lambda s: 2 * n ** 3 / s / 1e12, "TFLOP/s")
    tt.backends.cuda.matmul.allow_tf32 = False

    # bandwidth-bound ops
    numel = 1 << 28 if not args.quick else 1 << 26
    for dname in ("float32", "bfloat16") if want("bandwidth") else ():
        x = tt.randn(numel, device=dev, dtype=getattr(tt, dname))
        y = tt.randn(numel, device=dev, dtype=getattr(tt, dname))
        nbytes = 3 * numel * x.element_size()
        ref = None
        if torch:
            tx = torch.randn(numel, device=dev, dtype=getattr(torch, dname))
            ty = torch.randn(numel, device=dev, dtype=getattr(torch, dname))
            ref = lambda r: gpu_time(torch, lambda: tx + ty, r)
        alternate(f"add {numel} {dname}", lambda r: gpu_time(tt, lambda: x + y, r), ref, 20, rounds,
                  lambda s: nbytes / s / 1e9, "GB/s")
    for dname in ("float32", "bfloat16") if want("bandwidth") else ():
        x = tt.randn(4096 * 4, 4096, device=dev, dtype=getattr(tt, dname))
        nbytes = 2 * x.numel() * x.element_size()
        w, bias = tt.ones(4096, device=dev, dtype=x.dtype), tt.zeros(4096, device=dev, dtype=x.dtype)
        ref_s = ref_l = None
        if torch:
            tx = torch.randn(4096 * 4, 4096, device=dev, dtype=getattr(torch, dname))
            tw, tbias = torch.ones(4096, device=dev, dtype=tx.dtype), torch.zeros(4096, device=dev, dtype=tx.dtype)
            ref_s = lambda r: gpu_time(torch, lambda: tx.softmax(-1), r)
            ref_l = lambda r: gpu_time(torch, lambda: torch.nn.functional.layer_norm(tx, (4096,), tw, tbias), r)
        alternate(f"softmax (16384, 4096) {dname}", lambda r: gpu_time(tt, lambda: x.softmax(-1), r), ref_s, 20,
                  rounds, lambda s: nbytes / s / 1e9, "GB/s")
        alternate(f"layer_norm (16384, 4096) {dname}",
                  lambda r: gpu_time(tt, lambda: tt.nn.functional.layer_norm(x, (4096,), w, bias), r), ref_l, 20,
                  rounds, lambda s: nbytes / s / 1e9, "GB/s")

    # layer_norm forward / forward+backward and softmax over rows of 256-16384 (2^26 elements)
    numel = 1 << 26 if not args.quick else 1 << 24
    for dname in ("bfloat16", "float16", "float32") if want("norm") else ():
        for width in (256, 1024, 4096, 16384):
            shape = (numel // width, width)
            x = tt.randn(*shape, device=dev, dtype=getattr(tt, dname))
            g = tt.randn(*shape, device=dev, dtype=x.dtype)
            w = tt.ones(width, device=dev, dtype=x.dtype).requires_grad_()
            bias = tt.zeros(width, device=dev, dtype=x.dtype).requires_grad_()
            xg = x.detach().requires_grad_()
            fwd = lambda lib, x, w, b: lib.nn.functional.layer_norm(x, (width,), w, b)  # noqa: E731
            bwd = lambda lib, x, w, b, g: lib.autograd.grad(fwd(lib, x, w, b), [x, w, b], g)  # noqa: E731
            ref_f = ref_b = None
            if torch:
                tx = torch.randn(*shape, device=dev, dtype=getattr(torch, dname))
                tg = torch.randn(*shape, device=dev, dtype=tx.dtype)
                tw = torch.ones(width, device=dev, dtype=tx.dtype, requires_grad=True)
                tb = torch.zeros(width, device=dev, dtype=tx.dtype, requires_grad=True)
                txg = tx.detach().requires_grad_()
                ref_f = lambda r: gpu_time(torch, lambda: fwd(torch, tx, tw, tb), r)  # noqa: E731
                ref_b = lambda r: gpu_time(torch, lambda: bwd(torch, txg, tw, tb, tg), r)  # noqa: E731
            esz = x.element_size()
            alternate(f"layer_norm fwd {shape} {dname}", lambda r: gpu_time(tt, lambda: fwd(tt, x, w, bias), r),
                      ref_f, 20, rounds, lambda s: 2 * numel * esz / s / 1e9, "GB/s")
            alternate(f"layer_norm fwd+bwd {shape} {dname}",
                      lambda r: gpu_time(tt, lambda: bwd(tt, xg, w, bias, g), r), ref_b, 10, rounds,
                      lambda s: 5 * numel * esz / s / 1e9, "GB/s")
            if dname == "bfloat16":
                ref_s = torch and (lambda r: gpu_time(torch, lambda: tx.softmax(-1), r))
                alternate(f"softmax {shape} {dname}", lambda r: gpu_time(tt, lambda: x.softmax(-1), r), ref_s, 20,
                          rounds, lambda s: 2 * numel * esz / s / 1e9, "GB/s")

    # dropout (training): x read, y and the bool mask written
    numel = 1 << 26 if not args.quick else 1 << 24
    for dname in ("float32", "bfloat16") if want("dropout") else ():
        x = tt.randn(numel, device=dev, dtype=getattr(tt, dname))
        ref = None
        if torch:
            tx = torch.randn(numel, device=dev, dtype=getattr(torch, dname))
            ref = lambda r: gpu_time(torch, lambda: torch.nn.functional.dropout(tx, 0.1, True), r)  # noqa: E731
        nbytes = numel * (2 * x.element_size() + 1)
        alternate(f"dropout p=0.1 {numel} {dname}",
                  lambda r: gpu_time(tt, lambda: tt.nn.functional.dropout(x, 0.1, True), r), ref, 20, rounds,
                  lambda s: nbytes / s / 1e9, "GB/s")

    # max_pool2d 3x3 / 2 / pad 1 on (32, 64, 112, 112): forward (x read, out and int64 indices
    # written) and forward+backward, in microseconds
    for dname in ("float32", "bfloat16") if want("pool") else ():
        shape = (32, 64, 112, 112)
        x = tt.randn(*shape, device=dev, dtype=getattr(tt, dname))
        xg = x.detach().requires_grad_()
        g = tt.randn(32, 64, 56, 56, device=dev, dtype=x.dtype)
        pool = lambda lib, x: lib.nn.functional.max_pool2d(x, 3, 2, 1)  # noqa: E731
        ref_f = ref_b = None
        if torch:
            tx = torch.randn(*shape, device=dev, dtype=getattr(torch, dname))
            txg = tx.detach().requires_grad_()
            tg = torch.randn(32, 64, 56, 56, device=dev, dtype=tx.dtype)
            ref_f = lambda r: gpu_time(torch, lambda: pool(torch, txg), r)  # noqa: E731
            ref_b = lambda r: gpu_time(torch, lambda: torch.autograd.grad(pool(torch, txg), [txg], tg), r)  # noqa: E731
        alternate(f"max_pool2d 3/2/1 fwd {shape} {dname}", lambda r: gpu_time(tt, lambda: pool(tt, xg), r), ref_f,
                  20, rounds, lambda s: s * 1e6, "us")
        alternate(f"max_pool2d 3/2/1 fwd+bwd {shape} {dname}",
                  lambda r: gpu_time(tt, lambda: tt.autograd.grad(pool(tt, xg), [xg], g), r), ref_b, 10, rounds,
                  lambda s: s * 1e6, "us")

    # cross_entropy over GPT-2's logits (8192 tokens x 50304 classes), forward and forward+backward, in ms
    for dname in ("float32", "bfloat16") if want("loss") else ():
        n, c = (8192, 50304) if not args.quick else (2048, 50304)
        x = tt.randn(n, c, device=dev, dtype=getattr(tt, dname)).requires_grad_()
        t = tt.randint(0, c, (n,), device=dev)
        ce = lambda lib, x, t: lib.nn.functional.cross_entropy(x, t)  # noqa: E731
        ref_f = ref_b = None
        if torch:
            tx = torch.randn(n, c, device=dev, dtype=getattr(torch, dname)).requires_grad_()
            tt_ = torch.randint(0, c, (n,), device=dev)
            ref_f = lambda r: gpu_time(torch, lambda: ce(torch, tx, tt_), r)  # noqa: E731
            ref_b = lambda r: gpu_time(torch, lambda: torch.autograd.grad(ce(torch, tx, tt_), [tx]), r)  # noqa: E731
        alternate(f"cross_entropy fwd ({n}, {c}) {dname}", lambda r: gpu_time(tt, lambda: ce(tt, x, t), r), ref_f,
                  10, rounds, lambda s: s * 1e3, "ms")
        alternate(f"cross_entropy fwd+bwd ({n}, {c}) {dname}",
                  lambda r: gpu_time(tt, lambda: tt.autograd.grad(ce(tt, x, t), [x]), r), ref_b, 10, rounds,
                  lambda s: s * 1e3, "ms")

    # host overhead of a tiny op (wall clock per call, the GPU is never the bottleneck)
    def host(lib, a, b, reps):
        t = time.perf_counter()
        for _ in range(reps):
            a + b
        lib.cuda.synchronize()
        return (time.perf_counter() - t) / reps
    a1, b1 = tt.ones(1, device=dev), tt.ones(1, device=dev)
    ref = None
    if torch:
        ta1, tb1 = torch.ones(1, device=dev), torch.ones(1, device=dev)
        ref = lambda r: host(torch, ta1, tb1, r)
    if want("host"):
        alternate("tiny op host overhead (a + b, 1 element)", lambda r: host(tt, a1, b1, r), ref, 5000, rounds,
                  lambda s: s * 1e6, "us")

    # A DataLoader batch with pin_memory=True: pinned (a cached block), then copied asynchronously.
    def pin_h2d(lib, x, reps):
        t = time.perf_counter()
        for _ in range(reps):
            x.pin_memory().to(dev, non_blocking=True)
        lib.cuda.synchronize()
        return (time.perf_counter() - t) / reps
    xb = tt.randn(512, 1, 28, 28)
    ref = None
    if torch:
        txb = torch.randn(512, 1, 28, 28)
        ref = lambda r: pin_h2d(torch, txb, r)
    if want("pin"):
        alternate("pin_memory + to(cuda, non_blocking), 1.6 MB", lambda r: pin_h2d(tt, xb, r), ref, 500, rounds,
                  lambda s: s * 1e6, "us")


if __name__ == "__main__":
    main()
