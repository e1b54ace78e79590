"""Dev loop for the Hopper attention kernels (cuda/src/attention/attention_wgmma*.cuh) on an H100/H200:
builds dev/attention_wgmma_dev.cu alone with nvcc (seconds, instead of the project's build),
checks forward and backward against a float64 torch reference on odd shapes (GQA, L != S, E = 80,
strided q/k/v), then times them against torch's scaled_dot_product_attention (its flash / cuDNN
kernels), alternating, medians, on B=4 H=16 T=4096 causal bf16.

    timeout 300 python3 dev/attention_wgmma_dev.py [--fwd 0 1] [--bwd 0 1 2 3] [--no-check] [--no-time] [-D X=1]
    python3 dev/attention_wgmma_dev.py --so A=a.so --so B=b.so ...   # variants built elsewhere

`--so NAME=PATH` loads prebuilt builds of the .cu (e.g. compiled here with different -D macros
and carried to the GPU machine) instead of building; each is checked, and all are timed in the
same rounds, alternating with torch.

Profile: `ncu --set full --import-source yes -k regex:wgmma -o /tmp/attn python3
dev/attention_wgmma_dev.py --once --lineinfo`, then `ncu -i /tmp/attn.ncu-rep --page source --csv
--print-source sass` (per-instruction stall reasons).

Forward configurations (wg_forward in the .cu): 0 as the library (warp-specialized, TMA, 128-key
tiles, 2 stages, persistent blocks, three consumer warpgroups at D = 64 and two at 128), 1 two
consumers and 3 stages, 2 the same with one block per tile, 3 two consumers and 2 stages.
Backward: 0 the two-kernel backward the library runs under deterministic mode (dQ key tiles of
128, dK/dV query steps of 64; D = rowsum(dO O) computed in torch, timed with it), 1 dQ key tiles
of 64, 2 the warp-specialized one-pass backward with query steps of 64 (dQ tiles bulk-added into
a float32 accumulator; its preparation kernel and attention_dq_store are timed with it), 3 the
same with query steps of 128 at D = 64 (the library's choice: cfg 3 at D = 64, cfg 2 at D =
128); 4 and 5: 2 and 3 with one block per tile instead of persistent blocks; 12 and 13: 2 and 3
without the main kernel (the preparation and the dQ store, timed alone). `-D NAME` passes a
macro to nvcc, for experiments. Run under `timeout`: a barrier-phase mistake in an experiment
hangs, and so does a setmaxnreg split that asks for more registers than the block was launched
with (e.g. 32 / 240 at 384 threads; 24 / 240 and 40 / 232 fit).

Needs nvcc and torch with CUDA; tinytorch itself need not be built. The backward here launches dQ
and dK/dV back to back on one stream (tinytorch runs dQ on a side stream beside dK/dV).
"""
from __future__ import annotations

import argparse
import ctypes
import math
import os
import statistics
import subprocess

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
L = ctypes.c_long


def build(out: str = "/tmp/attention_wgmma_dev.so", lineinfo: bool = False, defines: tuple = ()) -> ctypes.CDLL:
    subprocess.run(["nvcc", "-O3", "-std=c++17", "-arch=sm_90a", f"-I{ROOT}/cpp/include", f"-I{ROOT}/cuda/include",
                    "--expt-relaxed-constexpr", "-shared", "-Xcompiler", "-fPIC"] + (["-lineinfo"] if lineinfo else []) + [f"-D{d}" for d in defines]
                   + [f"{ROOT}/dev/attention_wgmma_dev.cu", "-o", out], check=True)
    return load(out)


def load(path: str) -> ctypes.CDLL:
    lib = ctypes.CDLL(os.path.abspath(path))
    lib.wg_forward.argtypes = [ctypes.c_int] * 3 + [ctypes.c_void_p] * 5 + [L] * 6 + [ctypes.c_double, ctypes.c_int,
                                                                                       ctypes.POINTER(L)]
    lib.wg_backward.argtypes = [ctypes.c_int] * 3 + [ctypes.c_void_p] * 11 + [L] * 6 + [ctypes.c_double, ctypes.c_int,
                                                                                        ctypes.POINTER(L)]
    return lib


def strides(*ts) -> ctypes.Array:
    st = [s for t in ts for s in (t.stride(0), t.stride(1), t.stride(2))]
    return (L * len(st))(*st)


def dims(q, k):
    B, H, Lq, E = q.shape
    return B, H, k.shape[1], Lq, k.shape[2], E, 1 / math.sqrt(E), 64 if E <= 64 else 128


def forward(lib, cfg, q, k, v, causal):
    B, H, Hkv, Lq, Lk, E, scale, D = dims(q, k)
    out = torch.empty_like(q)
    lse = torch.empty(B, H, Lq, device=q.device, dtype=torch.float32)
    rc = lib.wg_forward(cfg, int(q.dtype == torch.bfloat16), D, q.data_ptr(), k.data_ptr(), v.data_ptr(),
                        out.data_ptr(), lse.data_ptr(), B, H, Hkv, Lq, Lk, E, scale, int(causal), strides(q, k, v, out))
    assert rc == 0, f"launch failed: {rc}"
    return out, lse


def backward(lib, cfg, q, k, v, out, lse, go, causal):
    B, H, Hkv, Lq, Lk, E, scale, D = dims(q, k)
    gq, gk, gv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
    # cfgs 2, 3: dQ through a float32 accumulator, zeroed with D = rowsum(dO O) computed by the kernel's
    # preparations (timed with it, as the dQ store); 12, 13: those without the main kernel
    fused = cfg % 10 in (2, 3, 4, 5)
    dvec = out if fused else (go.float() * out.float()).sum(-1).contiguous()
    bq = 128 if cfg % 10 in (3, 5) and D == 64 else 64
    rows = (Lq + bq - 1) // bq * bq
    acc = torch.empty(B, H, rows, D, device=q.device, dtype=torch.float32) if fused else None
    stats = torch.empty(B, H, rows, 2, device=q.device, dtype=torch.float32) if fused else None
    rc = lib.wg_backward(cfg, int(q.dtype == torch.bfloat16), D, q.data_ptr(), k.data_ptr(), v.data_ptr(),
                         go.data_ptr(), lse.data_ptr(), dvec.data_ptr(), gq.data_ptr(), gk.data_ptr(), gv.data_ptr(),
                         acc.data_ptr() if fused else None, stats.data_ptr() if fused else None, B, H, Hkv, Lq, Lk, E, scale, int(causal),
                         strides(q, k, v, go, gq, gk, gv, out))
    assert rc == 0, f"launch failed: {rc}"
    return gq, gk, gv


def reference(q, k, v, go, causal):
    """float64 output, logsumexp and q/k/v gradients."""
    H, Hkv = q.shape[1], k.shape[1]
    qd, kd, vd = (t.detach().double().requires_grad_() for t in (q, k, v))
    s = qd @ kd.repeat_interleave(H // Hkv, 1).transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).triu(1), float("-inf"))
    out = torch.softmax(s, -1) @ vd.repeat_interleave(H // Hkv, 1)
    out.backward(go.double())
    return out.detach(), torch.logsumexp(s, -1).detach(), qd.grad, kd.grad, vd.grad


CASES = [  # B, H, Hkv, Lq, Lk, E, causal, (B, L, H, E) storage
    (2, 4, 4, 256, 256, 64, True, False), (1, 2, 2, 200, 333, 64, False, False), (2, 4, 2, 300, 300, 128, True, True),
    (1, 3, 1, 129, 129, 80, True, False), (1, 2, 2, 1000, 1000, 128, False, False), (1, 2, 2, 77, 500, 64, True, True),
    (1, 2, 2, 500, 77, 64, True, False)]


def check(lib, fwd_cfgs, bwd_cfgs) -> int:
    torch.manual_seed(0)
    bad = 0
    for cfg in sorted(set(fwd_cfgs) | {c for c in bwd_cfgs if c < 10}):  # 12, 13 compute no gradients
        for dt in (torch.bfloat16, torch.float16):
            for B, H, Hkv, Lq, Lk, E, causal, trans in CASES:
                def make(h, n):
                    if trans:
                        return torch.randn(B, n, h, E, device="cuda", dtype=dt).transpose(1, 2)
                    return torch.randn(B, h, n, E, device="cuda", dtype=dt)
                q, k, v, go = make(H, Lq), make(Hkv, Lk), make(Hkv, Lk), make(H, Lq)
                out, lse = forward(lib, cfg if cfg in fwd_cfgs else 0, q, k, v, causal)
                grads = backward(lib, cfg, q, k, v, out, lse, go, causal) if cfg in bwd_cfgs else (q, k, v)
                ro, rl, *rg = reference(q, k, v, go, causal)
                fin = torch.isfinite(rl)
                errs = [(out.double() - ro).abs().max().item(), (lse.double()[fin] - rl[fin]).abs().max().item()]
                errs += [((g.double() - r).abs().max() / r.abs().max()).item() if cfg in bwd_cfgs else 0.0
                         for g, r in zip(grads, rg)]
                ok = errs[0] < 2e-2 and errs[1] < 1e-3 and max(errs[2:]) < 2e-2
                bad += not ok
                print(f"cfg {cfg} {str(dt)[6:]:8s} B{B} H{H}/{Hkv} {Lq}x{Lk} E{E} causal={causal:d} strided={trans:d}: "
                      f"out {errs[0]:.1e} lse {errs[1]:.1e} dq/dk/dv (relative) {errs[2]:.1e} {errs[3]:.1e} "
                      f"{errs[4]:.1e} {'ok' if ok else 'BAD'}", flush=True)
    print("checks:", "all ok" if not bad else f"{bad} BAD")
    return bad


def cuda_ms(fn, reps: int = 10) -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    fn()
    torch.cuda.synchronize()
    start.record()
    for _ in range(reps):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / reps


def time_all(libs: dict, fwd_cfgs, bwd_cfgs, rounds: int) -> None:
    """libs: name -> library (one per build variant; timed alternating with torch and each other)."""
    lib = next(iter(libs.values()))
    B, H, T = 4, 16, 4096
    for E in (64, 128):
        q, k, v, go = (torch.randn(B, H, T, E, device="cuda", dtype=torch.bfloat16) for _ in range(4))
        qr, kr, vr = (t.clone().requires_grad_() for t in (q, k, v))
        ref_out = F.scaled_dot_product_attention(qr, kr, vr, is_causal=True)
        out, lse = forward(lib, 0, q, k, v, True)
        fwd_flops = 4 * B * H * T * T * E / 2
        for label, flops, torch_fn, ours, cfgs in (
                ("forward", fwd_flops, lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                 lambda m, c: lambda: forward(m, c, q, k, v, True), fwd_cfgs),
                ("backward", 2.5 * fwd_flops, lambda: torch.autograd.grad(ref_out, (qr, kr, vr), go, retain_graph=True),
                 lambda m, c: lambda: backward(m, c, q, k, v, out, lse, go, True), bwd_cfgs)):
            times = {}
            for _ in range(rounds):
                for name, fn in [("torch", torch_fn)] + [(f"{n}cfg {c}", ours(m, c)) for n, m in libs.items()
                                                         for c in cfgs]:
                    times.setdefault(name, []).append(cuda_ms(fn))
            med = {n: statistics.median(t) for n, t in times.items()}
            print(f"D={E} {label:8s} bf16 B4 H16 T4096 causal: " + ", ".join(
                f"{n} {t:.3f} ms ({flops / t / 1e9:.0f} TFLOP/s, {t / med['torch']:.2f}x torch)" for n, t in med.items()),
                flush=True)


def once(lib, fwd_cfgs, bwd_cfgs) -> None:
    """One launch of each configuration on the timing shapes, for a profiler (ncu)."""
    for E in (64, 128):
        q, k, v, go = (torch.randn(4, 16, 4096, E, device="cuda", dtype=torch.bfloat16) for _ in range(4))
        for c in fwd_cfgs:
            out, lse = forward(lib, c, q, k, v, True)
        out, lse = forward(lib, 0, q, k, v, True)
        for c in bwd_cfgs:
            backward(lib, c, q, k, v, out, lse, go, True)
    torch.cuda.synchronize()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fwd", type=int, nargs="*", default=[0], help="forward configurations")
    ap.add_argument("--bwd", type=int, nargs="*", default=[0, 2, 3], help="backward configurations")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--no-check", action="store_true")
    ap.add_argument("--no-time", action="store_true")
    ap.add_argument("--once", action="store_true",
                    help="launch each configuration once and exit (for ncu; build with --lineinfo for source views)")
    ap.add_argument("--lineinfo", action="store_true", help="nvcc -lineinfo (ncu's source-level counters)")
    ap.add_argument("-D", dest="defines", action="append", default=[], help="a macro for nvcc (experiments)")
    ap.add_argument("--so", action="append", default=[], metavar="NAME=PATH",
                    help="load prebuilt variants of the .cu (e.g. built elsewhere with -D macros) instead of building;"
                         " each is checked and timed")
    args = ap.parse_args()
    if args.so:
        libs = {n + " ": load(path) for n, path in (a.split("=", 1) for a in args.so)}
    else:
        libs = {"": build(lineinfo=args.lineinfo, defines=tuple(args.defines))}
        print("defines:", args.defines)
    lib = next(iter(libs.values()))
    if args.once:
        once(lib, args.fwd, args.bwd)
        return
    print(torch.cuda.get_device_name(), "torch", torch.__version__)
    if not args.no_check:
        for name, m in libs.items():
            print("checking", name or "the build")
            check(m, args.fwd, args.bwd)
    if not args.no_time:
        time_all(libs, args.fwd, args.bwd, args.rounds)


if __name__ == "__main__":
    main()
