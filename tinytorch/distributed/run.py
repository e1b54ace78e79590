"""Launcher: ``python -m tinytorch.distributed.run [options] script.py [args...]`` (``tinytorch-run``).

Starts ``--nproc-per-node`` workers on this node with RANK, LOCAL_RANK, WORLD_SIZE,
LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT and TINYTORCH_BACKEND set (so scripts call
``init_process_group()`` with env:// rendezvous), streams their output, forwards SIGINT/SIGTERM,
and when one worker fails stops the others (each runs in its own process group; the launcher
signals the group, then kills it after a grace period) and exits with the failing rank's exit code,
printing the tail of its output. ``--max-restarts N`` restarts all the workers up to N times
(every node's together, in a multi-node job). As torchrun: ``--standalone`` (one node on a free local port),
``--nproc-per-node auto|gpu|cpu|N``, and ``--log-dir`` with ``--redirects``/``--tee`` to send
workers' stdout/stderr to per-rank files (``_run_logs.py``).

``--backend mpi``: MPI (mpich) cannot join processes it did not start, so the launcher runs the
workers through ``mpiexec -n NPROC`` (the mpiexec of the mpich wheel, or the PATH's). Each MPI
process is a small bootstrap (``tinytorch.distributed._mpi_worker``) that sets RANK etc. from MPI's
own rank (PMI_RANK) and runs the script as its child, recording a failing exit code and the output
tail for the launcher; a failing script calls MPI_Abort, so mpiexec stops the others.

Several nodes (``--nnodes N --node-rank K --master-addr A --master-port P`` on each): node 0's
launcher serves a TCPStore at A:P that the launchers coordinate through (``_run_nodes.py``: a
rendezvous that checks the nodes' options agree, heartbeats, the first failure of each attempt,
restarts of every node together) and that the workers use as their rendezvous store (torchrun's
agent store). Ranks are ``K * nproc-per-node + local rank``. With ``--backend mpi`` each node runs
its own ``mpiexec`` and ``init_process_group("mpi")`` joins the nodes' MPI worlds into one
communicator (``_mpi.MPIBackend.joined``). A node whose launcher exits, is killed, stops sending
heartbeats for ``--node-timeout`` seconds, or reports a failed worker stops every node's workers.
"""
from __future__ import annotations

import argparse
import os
import shutil
import socket
import sys
import tempfile
import uuid

from tinytorch.distributed import _run_logs
from tinytorch.distributed._run_mpi import run_mpi
from tinytorch.distributed._run_nodes import JobError, Nodes, NodeStopped, say_node_stopped
from tinytorch.distributed._run_workers import Signals, run_local


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def _default_backend() -> str:
    try:
        import tinytorch.cuda
        return "nccl" if tinytorch.cuda.is_available() else "mpi"
    except Exception:
        return "mpi"


def _cuda_devices() -> int:
    try:
        import tinytorch.cuda
        return tinytorch.cuda.device_count() if tinytorch.cuda.is_available() else 0
    except Exception:
        return 0


def _nproc(value: str) -> int:
    """torchrun's --nproc-per-node: a number, 'gpu' (the CUDA devices), 'cpu' (the CPU cores) or
    'auto' (the CUDA devices when there are any, else the CPU cores)."""
    if value in ("auto", "gpu"):
        gpus = _cuda_devices()
        if gpus:
            return gpus
        if value == "gpu":
            raise ValueError("--nproc-per-node gpu: CUDA is not available")
        return os.cpu_count() or 1
    if value == "cpu":
        return os.cpu_count() or 1
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"--nproc-per-node: expected a number, 'auto', 'gpu' or 'cpu', got {value!r}") from None


def _first_problem(a) -> str | None:
    """What would make every worker fail in its first second, checked before any starts: a script
    that isn't there, or the nccl backend without CUDA GPUs."""
    if a.no_python:
        if shutil.which(a.script) is None:
            return f"--no-python: {a.script!r} is not an executable file or a command on PATH"
    elif a.module:
        import importlib.util
        try:
            found = importlib.util.find_spec(a.script) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            return f"-m: no module named {a.script!r}"
    elif not os.path.isfile(a.script):
        return f"can't open the script {a.script!r} (from {os.getcwd()}): no such file"
    if a.backend == "nccl":
        gpus = _cuda_devices()
        if gpus == 0:
            return ("--backend nccl needs CUDA GPUs and this machine has none (or tinytorch was built without "
                    "CUDA); --backend mpi runs the workers on CPUs (pip install mpi4py mpich)")
        if a.nproc_per_node > gpus:
            return (f"--backend nccl runs one worker per GPU: --nproc-per-node {a.nproc_per_node} but this "
                    f"machine has {gpus} CUDA GPU(s); use --nproc-per-node {gpus} (or gpu), or --backend mpi on CPUs")
    return None


def parse_args(argv=None, check_launch: bool = False):
    """The launcher's options; with ``check_launch``, also refuses (exit 2) what would make every
    worker fail at once (see :func:`_first_problem`)."""
    p = argparse.ArgumentParser(prog="tinytorch-run",
                                description="Start distributed tinytorch workers (as torchrun).")
    p.add_argument("--nproc-per-node", "--nproc_per_node", default="1",
                   help="workers per node: a number, 'gpu', 'cpu' or 'auto' (GPUs if any, else CPU cores)")
    p.add_argument("--nnodes", type=int, default=1, help="number of nodes")
    p.add_argument("--node-rank", "--node_rank", type=int, default=0, help="this node's rank, 0 .. nnodes-1")
    p.add_argument("--master-addr", "--master_addr", default="127.0.0.1", help="address of rank 0's node")
    p.add_argument("--master-port", "--master_port", type=int, default=None,
                   help="default: a free port (single node) or 29500 (several nodes)")
    p.add_argument("--standalone", action="store_true",
                   help="a single-node job on a free local port (sets --nnodes 1, --master-addr 127.0.0.1)")
    p.add_argument("--max-restarts", "--max_restarts", type=int, default=0,
                   help="restart all the workers (every node's, in a multi-node job) up to this many times "
                        "when one fails")
    p.add_argument("--node-timeout", "--node_timeout", type=float, default=30.0,
                   help="multi-node: seconds without a heartbeat from a node's launcher after which the job "
                        "stops (a launcher that exits or is killed is seen at once)")
    p.add_argument("--join-timeout", "--join_timeout", type=float, default=600.0,
                   help="multi-node: seconds to wait for every node's launcher to join")
    p.add_argument("--backend", choices=["nccl", "mpi", "none"], default=None,
                   help="nccl (one worker per CUDA GPU) or mpi (CPUs, through mpiexec); none starts the workers "
                        "with the env:// variables but no TINYTORCH_BACKEND, for scripts that pick their own or "
                        "start no process group. Default: nccl when a CUDA GPU is available, else mpi")
    p.add_argument("--log-dir", "--log_dir", default=None,
                   help="directory for the workers' log files: <log-dir>/<run id>/attempt_<n>/<local rank>/"
                        "{stdout,stderr}.log (default with --redirects/--tee: a new temporary directory)")
    p.add_argument("-r", "--redirects", default="0",
                   help="send the workers' streams to the log files instead of the console: 0 none, 1 stdout, "
                        "2 stderr, 3 both; or per local rank, e.g. 0:1,1:3")
    p.add_argument("-t", "--tee", default="0",
                   help="copy the workers' streams to the log files as well as the console (values as --redirects)")
    p.add_argument("-m", "--module", action="store_true", help="run the script argument as a module (python -m)")
    p.add_argument("--no-python", action="store_true", help="run the script argument as an executable")
    p.add_argument("script", help="the training script (or module with -m)")
    p.add_argument("script_args", nargs=argparse.REMAINDER, help="the script's own arguments")
    a = p.parse_args(argv)
    try:
        a.nproc_per_node = _nproc(a.nproc_per_node)
        a.redirects = _run_logs.parse_std_spec(a.redirects, "--redirects")
        a.tee = _run_logs.parse_std_spec(a.tee, "--tee")
    except ValueError as e:
        p.error(str(e))
    if a.standalone:
        if a.nnodes != 1:
            p.error("--standalone runs a single node; it can't be combined with --nnodes > 1")
        a.node_rank, a.master_addr, a.master_port = 0, "127.0.0.1", None
    if a.nproc_per_node < 1 or a.nnodes < 1 or not 0 <= a.node_rank < a.nnodes:
        p.error("need --nproc-per-node >= 1, --nnodes >= 1 and 0 <= --node-rank < --nnodes")
    if a.node_timeout <= 0 or a.join_timeout <= 0:
        p.error("--node-timeout and --join-timeout must be positive")
    if a.master_port is None:
        a.master_port = _free_port() if a.nnodes == 1 else 29500
    if a.backend is None:
        a.backend = _default_backend()
    problem = _first_problem(a) if check_launch else None
    if problem:
        p.error(problem)
    if a.log_dir is None and any(v for d in (a.redirects, a.tee) for v in d.values()):
        a.log_dir = tempfile.mkdtemp(prefix="tinytorch-run-logs-")
    if a.log_dir is not None:
        os.makedirs(a.log_dir, exist_ok=True)
    return a


def _main_nodes(a, sigs: Signals) -> int:
    """One node of a multi-node job (see :class:`Nodes`)."""
    nodes = Nodes(a, sigs)
    runner = run_mpi if a.backend == "mpi" else run_local
    try:
        nodes.join()
        if a.log_dir is not None:
            sys.stderr.write(f"tinytorch.distributed.run: worker logs in {os.path.join(a.log_dir, nodes.run_id)}\n")
        restart = 0
        while True:
            nodes.begin(restart)
            rc = runner(a, sigs, restart, nodes.run_id, nodes)
            if rc == 0:
                first = nodes.finish(restart)
                if first is None:
                    return 0
                say_node_stopped(first, "this node's workers had finished")
                rc = 1
            first = nodes.problem(restart)
            if sigs.received is not None:
                return 128 + sigs.received
            if first is None or not first["restart"] or restart >= a.max_restarts:
                return rc
            restart += 1
            sys.stderr.write(f"tinytorch.distributed.run: restarting the workers of every node ({restart}/"
                             f"{a.max_restarts}) after node {first['node']}'s failure\n")
    except JobError as e:
        sys.stderr.write(f"tinytorch.distributed.run: {e}\n")
        return 2
    except NodeStopped as e:
        say_node_stopped(e.rec, "stopped this node's workers")
        return 128 + sigs.received if sigs.received is not None else 1
    finally:
        nodes.close()


def main(argv=None) -> int:
    a = parse_args(argv, check_launch=True)
    if a.nnodes > 1:
        sigs = Signals()
        sigs.install()
        try:
            return _main_nodes(a, sigs)
        finally:
            sigs.restore()
    run_id = uuid.uuid4().hex[:12]
    if a.log_dir is not None:
        sys.stderr.write(f"tinytorch.distributed.run: worker logs in {os.path.join(a.log_dir, run_id)}\n")
    sigs = Signals()
    sigs.install()
    try:
        restart = 0
        while True:
            rc = (run_mpi if a.backend == "mpi" else run_local)(a, sigs, restart, run_id)
            if rc == 0 or sigs.received is not None or restart >= a.max_restarts:
                return rc
            restart += 1
            sys.stderr.write(f"tinytorch.distributed.run: restarting the workers ({restart}/{a.max_restarts})\n")
    finally:
        sigs.restore()


def _console() -> None:
    sys.exit(main())


if __name__ == "__main__":
    sys.exit(main())
