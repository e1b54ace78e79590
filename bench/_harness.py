"""Shared benchmark harness: alternate tinytorch and the reference in one process, report
medians and the ratio (tinytorch time / reference time; < 1 means tinytorch is faster)."""
from __future__ import annotations

import statistics
import time


def timed(fn, inner: int = 1) -> float:
    t = time.perf_counter()
    for _ in range(inner):
        fn()
    return (time.perf_counter() - t) / inner


def compare(name: str, ours, ref, rounds: int = 15, inner: int = 1, warmup: int = 2, unit: str = "ms",
            ref_name: str = "numpy") -> dict:
    """Times ours() and ref() alternately; prints and returns medians and their ratio."""
    for _ in range(warmup):
        ours()
        ref()
    a, b = [], []
    for _ in range(rounds):
        a.append(timed(ours, inner))
        b.append(timed(ref, inner))
    ma, mb = statistics.median(a), statistics.median(b)
    scale = {"ms": 1e3, "us": 1e6, "s": 1.0}[unit]
    ratio = ma / mb
    print(f"{name:48s} tinytorch {ma * scale:9.3f} {unit}   {ref_name} {mb * scale:9.3f} {unit}   ratio {ratio:5.2f}x",
          flush=True)
    return {"name": name, "ours": ma, "ref": mb, "ratio": ratio}


def alternate_medians(ours, ref, rounds: int) -> tuple:
    """Calls ours() and ref() (when given) alternately ``rounds`` times; returns the medians of what
    they return (ref's None without ref)."""
    a, b = [], []
    for _ in range(rounds):
        a.append(ours())
        if ref:
            b.append(ref())
    return statistics.median(a), (statistics.median(b) if ref else None)


def alternate_all(runs: dict, rounds: int) -> dict:
    """Calls each of ``runs`` (name -> function returning a time) in turn, ``rounds`` times; returns
    the median of each one's results by name."""
    times = {name: [] for name in runs}
    for _ in range(rounds):
        for name, fn in runs.items():
            times[name].append(fn())
    return {name: statistics.median(t) for name, t in times.items()}


def try_import_torch():
    try:
        import torch
        return torch
    except ImportError:
        print("PyTorch is not installed here: PyTorch comparisons skipped "
              "(python -m venv v && v/bin/pip install torch==2.13.0, then run with v/bin/python)")
        return None
