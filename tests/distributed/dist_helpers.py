"""Helpers for the multi-process tests: run a worker script under the launcher and check it."""
from __future__ import annotations

import os
import shutil
import signal
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
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        # SIGTERM lets the launcher stop its workers; then make sure nothing of the group survives.
        p.terminate()
        try:
            out, _ = p.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, _ = p.communicate()
        pytest.fail(f"{' '.join(cmd[2:])} did not finish in {timeout:g} s; its output:\n"
                    f"{out.decode(errors='replace')[-6000:]}")
    return p.returncode, out.decode(errors="replace"), time.monotonic() - t0


def launch_ok(script: str, *args: str, nproc: int, ok: str, timeout: float = 120, **kwargs) -> str:
    """:func:`launch`, checking that it exits 0 and that each of the ``nproc`` ranks printed ``ok``;
    returns the output."""
    rc, out, _ = launch(script, *args, nproc=nproc, timeout=timeout, **kwargs)
    assert rc == 0, out
    assert out.count(ok) == nproc, out
    return out
