"""The launcher's MPI path (``--backend mpi``): MPI (mpich) cannot join processes it did not
start, so one attempt is one ``mpiexec -n NPROC`` of the bootstrap ``_mpi_worker.py``, which runs
the script as each rank's child and records a failing rank's exit code and output tail in a run
directory that the launcher watches (:func:`run_mpi`)."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from tinytorch.distributed import _run_logs
from tinytorch.distributed._run_nodes import Nodes, say_node_stopped
from tinytorch.distributed._run_workers import (TAIL_LINES, Signals, Worker, exit_code, is_loopback, local_failure,
                                                on_signal, peer_stopped, report_failure, set_pdeathsig, signal_group,
                                                stop_all, worker_env, worker_failed)


def _mpiexec() -> str:
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    for c in (here, shutil.which("mpiexec"), shutil.which("mpiexec.hydra")):
        if c and os.path.exists(c):
            return c
    raise SystemExit("tinytorch.distributed.run --backend mpi: no mpiexec found; pip install mpi4py mpich "
                     "(tinytorch's 'dist' extra)")


def run_mpi(a, sigs: Signals, restart: int, run_id: str, nodes: Nodes | None = None) -> int:
    run_dir = tempfile.mkdtemp(prefix="tinytorch-run-")
    env = worker_env(a, 0, 0, restart, run_id)
    for k in ("RANK", "LOCAL_RANK"):
        env.pop(k)
    env["TINYTORCH_RUN_DIR"] = run_dir
    if a.log_dir is not None:   # the bootstrap of each rank routes its streams (_run_logs.route_from_env)
        env["TINYTORCH_RUN_LOGS"] = _run_logs.env_value(_run_logs.attempt_dir(a.log_dir, run_id, restart),
                                                        a.redirects, a.tee)
    # the bootstrap by path, not with -m: -m would put the current directory (the repository root, say,
    # a source tree without compiled extensions) first on the workers' sys.path
    worker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_mpi_worker.py")
    iface = ["-iface", "lo"] if a.nnodes > 1 and is_loopback(a.master_addr) else []
    cmd = [_mpiexec(), *iface, "-n", str(a.nproc_per_node), sys.executable, "-u", worker,
           "--no-python" if a.no_python else "--module" if a.module else "--script", a.script] + a.script_args
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True, preexec_fn=set_pdeathsig)
    w = Worker(0, 0, proc)
    try:
        failed_at = None
        first = None
        while proc.poll() is None:
            if sigs.received is not None:
                on_signal(nodes)
                signal_group(proc, sigs.received)
                stop_all([proc], sigs.received)
                return 128 + sigs.received
            if failed_at is None and any(n.endswith(".exit") for n in os.listdir(run_dir)):
                failed_at = time.monotonic()
                rank, code = _first_exit(run_dir)
                first = local_failure(nodes, worker_failed(rank, code))
            if failed_at is None and peer_stopped(nodes, [proc]):
                return 1
            if failed_at is not None and time.monotonic() - failed_at > 1.0:
                # a rank failed before (or without) MPI_Abort: mpiexec would wait for the others
                stop_all([proc])
                break
            time.sleep(0.05)
        w.join(timeout=2)
        fail = _first_exit(run_dir)
        if fail is not None:
            rank, code = fail
            if failed_at is None:
                first = local_failure(nodes, worker_failed(rank, code))
            log_path = os.path.join(run_dir, f"rank{rank}.log")
            tail = open(log_path, "rb").read().splitlines(keepends=True)[-TAIL_LINES:] if os.path.exists(log_path) else []
            report_failure(rank, rank - a.node_rank * a.nproc_per_node, code, tail)
        elif proc.returncode != 0:
            if failed_at is None:
                first = local_failure(nodes, f"mpiexec failed with exit code {exit_code(proc.returncode)}")
            report_failure(-1, -1, proc.returncode, list(w.tail))
        if first is not None:
            say_node_stopped(first, "stopped this node's workers")
        return exit_code(fail[1] if fail is not None else proc.returncode)
    finally:
        if proc.poll() is None:
            stop_all([proc], signal.SIGKILL)
        shutil.rmtree(run_dir, ignore_errors=True)


def _first_exit(run_dir: str) -> tuple[int, int] | None:
    """The (global rank, exit code) of the first MPI rank that recorded a failure, if any."""
    fails = []
    for name in os.listdir(run_dir):
        if name.endswith(".exit"):
            with open(os.path.join(run_dir, name)) as f:
                t, rank, code = f.read().split()
            fails.append((float(t), int(rank), int(code)))
    return min(fails)[1:] if fails else None
