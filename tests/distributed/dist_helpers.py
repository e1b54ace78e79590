"""Helpers for the multi-process tests: run a worker script under the launcher and check it."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
WORKERS = os.path.join(HERE, "workers")


def _have_mpi() -> bool:
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return bool(shutil.which("mpiexec") or os.path.exists(os.path.join(os.path.dirname(sys.executable), "mpiexec")))


HAVE_MPI = _have_mpi()
needs_mpi = pytest.mark.skipif(not HAVE_MPI, reason="needs mpi4py and mpiexec (pip install mpi4py mpich)")


def launch(script: str, *args: str, nproc: int = 2, backend: str = "mpi", timeout: float = 60,
           extra_env: dict | None = None, launcher_args=()) -> tuple[int, str, float]:
    """Runs ``python -m tinytorch.distributed.run --nproc-per-node N --backend B script args``;
    returns (exit code, combined output, seconds)."""
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "1")
    env["PYTHONPATH"] = os.pathsep.join([p for p in sys.path if p] + [env.get("PYTHONPATH", "")])
    env.update(extra_env or {})
    cmd = [sys.executable, "-m", "tinytorch.distributed.run", "--nproc-per-node", str(nproc), "--backend", backend,
           *launcher_args, os.path.join(WORKERS, script) if not os.path.isabs(script) else script, *args]
    t0 = time.monotonic()
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    return p.returncode, p.stdout.decode(errors="replace"), time.monotonic() - t0
