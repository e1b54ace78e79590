"""Multi-process tests (MPI backend, CPU) through the launcher, plus NCCL (2 GPUs) versions."""
from __future__ import annotations

import json
import os

import pytest

from dist_helpers import WORKERS, launch, launch_ok, needs_mpi


@needs_mpi
def test_collectives_mpi_3_ranks():
    rc, out, _ = launch("collectives.py", nproc=3, timeout=120)
    assert rc == 0, out
    assert sum("collectives OK" in line for line in out.splitlines()) == 3, out
    assert out.count("collective timeout 1800 s") == 1, out      # reported once, by rank 0


@needs_mpi
def test_ddp_mpi_2_ranks():
    launch_ok("ddp.py", nproc=2, ok="DDP OK")


@needs_mpi
def test_sampler_uses_process_group():
    launch_ok(os.path.join(os.path.dirname(__file__), "workers", "sampler_pg.py"), nproc=2, ok="sampler OK", timeout=60)


@needs_mpi
@pytest.mark.parametrize("backend", ["mpi", "none"])   # none: the local path; the probe starts no group
def test_launcher_env_vars(backend):
    rc, out, _ = launch("launcher_probe.py", "env", nproc=3, backend=backend)
    assert rc == 0, out
    envs = sorted((json.loads(line[4:]) for line in out.splitlines() if line.startswith("ENV ")),
                  key=lambda e: int(e["RANK"]))
    assert [e["RANK"] for e in envs] == ["0", "1", "2"]
    assert [e["LOCAL_RANK"] for e in envs] == ["0", "1", "2"]
    assert {e["WORLD_SIZE"] for e in envs} == {"3"} and {e["LOCAL_WORLD_SIZE"] for e in envs} == {"3"}
    assert {e.get("TINYTORCH_BACKEND") for e in envs} == {None if backend == "none" else backend}
    assert len({(e["MASTER_ADDR"], e["MASTER_PORT"]) for e in envs}) == 1


@needs_mpi
@pytest.mark.parametrize("backend", ["mpi", "none"])
def test_launcher_failing_worker_stops_the_others(backend):
    rc, out, secs = launch("launcher_probe.py", "fail", nproc=3, backend=backend, timeout=50)
    assert rc == 3, out
    assert secs < 20, f"took {secs:.1f} s (the others sleep 60 s)"
    assert "worker rank 1" in out and "the last words" in out.split("worker rank 1")[-1], out


def _check_raising_rank_ends_the_job(backend: str, timeout: float, max_secs: float) -> None:
    """Rank 1 raises while the group is live: the job ends with its exit code, soon, and says why."""
    rc, out, secs = launch("launcher_probe.py", "raise", nproc=2, backend=backend, timeout=timeout)
    assert rc == 1, out
    assert secs < max_secs, f"took {secs:.1f} s"
    assert "worker rank 1" in out and "rank 1 fails on purpose" in out, out


def _check_hang_is_aborted(backend: str, timeout: float, max_secs: float, message: str) -> None:
    """A collective that never completes is aborted by the timeout: a failing exit, soon, with ``message``."""
    rc, out, secs = launch("launcher_probe.py", "hang", nproc=2, backend=backend, timeout=timeout)
    assert rc != 0, out
    assert secs < max_secs, f"took {secs:.1f} s"
    assert message in out, out


@needs_mpi
def test_rank_raising_with_a_live_process_group_ends_the_job():
    _check_raising_rank_ends_the_job("mpi", timeout=50, max_secs=20)


@needs_mpi
def test_launcher_hung_collective_is_aborted_after_timeout():
    _check_hang_is_aborted("mpi", timeout=50, max_secs=25, message="timed out after 2 s")


@needs_mpi
def test_ddp_mnist_demo_mpi():
    demo = os.path.join(os.path.dirname(WORKERS), "..", "..", "demo", "ddp_mnist.py")
    if not os.path.exists(os.path.join(os.path.dirname(demo), "data", "mnist")):
        pytest.skip("no MNIST data next to the demo")
    rc, out, _ = launch(os.path.abspath(demo), "--train-limit", "256", "--test-limit", "100", "--max-steps", "3",
                        nproc=2, timeout=120)
    assert rc == 0, out
    assert "world size 2, backend mpi" in out and "Accuracy" in out, out


@needs_mpi
def test_mpiexec_directly():
    import shutil
    import subprocess
    import sys
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join([p for p in sys.path if p])
    for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "LOCAL_RANK"):
        env.pop(k, None)
    mpiexec = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    mpiexec = mpiexec if os.path.exists(mpiexec) else shutil.which("mpiexec")
    p = subprocess.run([mpiexec, "-n", "2", sys.executable, os.path.join(WORKERS, "mpi_direct.py")],
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    out = p.stdout.decode()
    assert p.returncode == 0, out
    assert out.count("direct OK") == 2, out


# ---------------------------------------------------------------- NCCL on 2 GPUs (run by hand / on GPU CI)
def _gpus() -> int:
    try:
        import tinytorch as tt
        return tt.cuda.device_count() if tt.cuda.is_available() else 0
    except Exception:
        return 0


needs_2_gpus = pytest.mark.skipif(_gpus() < 2, reason="needs 2 CUDA GPUs")


@pytest.mark.cuda
@needs_2_gpus
@pytest.mark.parametrize("script,ok", [("collectives.py", "collectives OK"), ("ddp.py", "DDP OK")])
def test_worker_nccl_2_gpus(script, ok):
    launch_ok(script, "cuda", nproc=2, ok=ok, backend="nccl", timeout=150)


@pytest.mark.cuda
@needs_2_gpus
def test_nccl_hung_collective_is_aborted_after_timeout():
    _check_hang_is_aborted("nccl", timeout=120, max_secs=60, message="timed out")


@pytest.mark.cuda
@needs_2_gpus
def test_nccl_failing_worker():
    rc, out, secs = launch("launcher_probe.py", "fail", nproc=2, backend="nccl", timeout=60)
    assert rc == 3, out


@pytest.mark.cuda
@needs_2_gpus
def test_nccl_rank_raising_with_a_live_communicator_ends_the_job():
    # The raising rank exits at once (its communicator is aborted at exit, not destroyed: a destroy
    # would wait for the peer stuck in the all_reduce); the launcher then stops the other.
    _check_raising_rank_ends_the_job("nccl", timeout=90, max_secs=30)
