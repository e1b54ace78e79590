"""Shared benchmark harness: alternate tinytorch and the reference in one process, report
medians and the ratio (tinytorch time / reference time; < 1 means tinytorch is faster).

Every bench imports this module before tinytorch. It keeps the repository root off ``sys.path``
(unless PYTHONPATH names it), so ``python bench/X.py`` run from the root measures the installed
tinytorch, not the source tree beside it, which has no compiled extensions unless built and linked
(scripts/dev_link.sh; then ``PYTHONPATH=$PWD python bench/X.py`` measures it). Files outside bench/
that a bench needs (demo/gpt.py, demo/mnist.py) are loaded by path with ``load_script``.
"""
from __future__ import annotations

import os
import statistics
import sys
import time
import types

ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
# The environment the bench was started with, before a bench sets defaults in os.environ (some set
# OMP_WAIT_POLICY=PASSIVE for torch's OpenMP pool): for other programs a bench runs (llama.cpp), so
# that they run as they would on their own.
USER_ENV = dict(os.environ)


def _drop_source_tree_from_path() -> None:
    """Removes the repository root from sys.path (``python -m``/``-c`` put the working directory
    there) unless PYTHONPATH names it."""
    wanted = {os.path.realpath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p}
    if ROOT in wanted:
        return
    sys.path[:] = [p for p in sys.path if os.path.realpath(p or os.curdir) != ROOT]


_drop_source_tree_from_path()


def load_script(relative_path: str, name: str, replace: dict | None = None) -> types.ModuleType:
    """Executes ``relative_path`` (from the repository root) as module ``name`` and returns it,
    registered in sys.modules (dataclasses look their module up). ``replace`` maps source text to
    the text it becomes first (e.g. a demo's ``import tinytorch as torch`` to ``import torch``);
    each key must occur in the file."""
    path = os.path.join(ROOT, relative_path)
    with open(path, encoding="utf-8") as f:
        src = f.read()
    for old, new in (replace or {}).items():
        if old not in src:
            raise ValueError(f"load_script: {relative_path} has no {old!r} to replace")
        src = src.replace(old, new)
    mod = types.ModuleType(name)
    mod.__file__ = path
    sys.modules[name] = mod
    exec(compile(src, path, "exec"), mod.__dict__)
    return mod


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


def cpu_description() -> str:
    """This machine's CPU as a bench header names it: model, logical CPUs, the ISA tinytorch's kernels use."""
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), model)
    except OSError:
        pass
    import tinytorch as tt
    return f"{model}, {os.cpu_count()} logical CPUs, {tt.backends.cpu.get_cpu_capability()}"
