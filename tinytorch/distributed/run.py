"""Launcher: ``python -m tinytorch.distributed.run [options] script.py [args...]`` (``tinytorch-run``).

Starts ``--nproc-per-node`` workers on this node with RANK, LOCAL_RANK, WORLD_SIZE,
LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT and TINYTORCH_BACKEND set (so scripts call
``init_process_group()`` with env:// rendezvous), streams their output, forwards SIGINT/SIGTERM,
and when one worker fails stops the others (each runs in its own process group; the launcher
signals the group, then kills it after a grace period) and exits with the failing rank's exit code,
printing the tail of its output. ``--max-restarts N`` restarts the whole node's workers up to N
times (single node). As torchrun: ``--standalone`` (one node on a free local port),
``--nproc-per-node auto|gpu|cpu|N``, and ``--log-dir`` with ``--redirects``/``--tee`` to send
workers' stdout/stderr to per-rank files (``_run_logs.py``).

``--backend mpi``: MPI (mpich) cannot join processes it did not start, so the launcher runs the
workers through ``mpiexec -n NPROC`` (the mpiexec of the mpich wheel, or the PATH's). Each MPI
process is a small bootstrap (``tinytorch.distributed._mpi_worker``) that sets RANK etc. from MPI's
own rank (PMI_RANK) and runs the script as its child, recording a failing exit code and the output
tail for the launcher; a failing script calls MPI_Abort, so mpiexec stops the others.
"""
from __future__ import annotations

import argparse
import collections
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid

from tinytorch.distributed import _run_logs

GRACE_S = 5.0
TAIL_LINES = 40


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
                   help="restart all of this node's workers up to this many times when one fails")
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


def _cmd(a) -> list[str]:
    if a.no_python:
        return [a.script] + a.script_args
    if a.module:
        return [sys.executable, "-u", "-m", a.script] + a.script_args
    return [sys.executable, "-u", a.script] + a.script_args


def _set_pdeathsig() -> None:
    """Child side (preexec): die with the launcher, so a killed launcher leaves no orphans."""
    try:
        import ctypes
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG
    except Exception:
        pass


class _Worker:
    def __init__(self, rank: int, local_rank: int, proc: subprocess.Popen,
                 route: "_run_logs.Route | None" = None) -> None:
        self.rank, self.local_rank, self.proc = rank, local_rank, proc
        self.tail: collections.deque = collections.deque(maxlen=TAIL_LINES)
        if route is not None and route.splits_streams:
            self.readers = [route.pump(proc.stdout, _run_logs.STDOUT, self.tail),
                            route.pump(proc.stderr, _run_logs.STDERR, self.tail)]
        else:
            self.readers = [threading.Thread(target=self._pump, daemon=True)]
            self.readers[0].start()

    def join(self, timeout: float) -> None:
        for r in self.readers:
            r.join(timeout=timeout)

    def _pump(self) -> None:
        out = sys.stdout.buffer
        for line in iter(self.proc.stdout.readline, b""):
            self.tail.append(line)
            try:
                out.write(line)
                out.flush()
            except (BrokenPipeError, ValueError):
                pass
        self.proc.stdout.close()


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _stop_all(procs: list[subprocess.Popen], sig: int = signal.SIGTERM) -> None:
    for p in procs:
        if p.poll() is None:
            _signal_group(p, sig)
    deadline = time.monotonic() + GRACE_S
    for p in procs:
        left = deadline - time.monotonic()
        try:
            p.wait(timeout=max(left, 0.01))
        except subprocess.TimeoutExpired:
            pass
    for p in procs:
        _signal_group(p, signal.SIGKILL)   # the whole group: the worker and anything it started
        if p.poll() is None:
            p.wait()


def _exit_code(rc: int) -> int:
    return 128 - rc if rc < 0 else rc


def _report(rank: int, local_rank: int, rc: int, tail) -> None:
    err = sys.stderr
    err.write(f"\ntinytorch.distributed.run: worker rank {rank} (local rank {local_rank}) failed with exit code "
              f"{_exit_code(rc)}{' (signal %d)' % -rc if rc < 0 else ''}; stopped the other workers\n")
    if tail:
        err.write(f"---- last {len(tail)} line(s) of rank {rank}'s output ----\n")
        for line in tail:
            err.write(line.decode(errors="replace") if isinstance(line, bytes) else line)
        err.write("-" * 40 + "\n")
    err.flush()


class _Signals:
    def __init__(self) -> None:
        self.received = None
        self.prev = {}

    def install(self) -> None:
        for s in (signal.SIGINT, signal.SIGTERM):
            self.prev[s] = signal.signal(s, self._handler)

    def _handler(self, signum, frame) -> None:
        self.received = signum

    def restore(self) -> None:
        for s, h in self.prev.items():
            signal.signal(s, h)


def _env(a, rank: int, local_rank: int, restart: int, run_id: str) -> dict:
    env = dict(os.environ)
    env.update(RANK=str(rank), LOCAL_RANK=str(local_rank), WORLD_SIZE=str(a.nproc_per_node * a.nnodes),
               LOCAL_WORLD_SIZE=str(a.nproc_per_node), GROUP_RANK=str(a.node_rank), NODE_RANK=str(a.node_rank),
               MASTER_ADDR=a.master_addr, MASTER_PORT=str(a.master_port), TINYTORCH_BACKEND=a.backend,
               TINYTORCH_RESTART_COUNT=str(restart), TINYTORCH_RUN_ID=run_id, PYTHONUNBUFFERED="1")
    if a.backend == "none":
        env.pop("TINYTORCH_BACKEND")
    return env


def _run_local(a, sigs: _Signals, restart: int, run_id: str) -> int:
    workers: list[_Worker] = []
    logs = _run_logs.attempt_dir(a.log_dir, run_id, restart)
    for lr in range(a.nproc_per_node):
        rank = a.node_rank * a.nproc_per_node + lr
        route = _run_logs.Route(logs, lr, _run_logs.streams_for(a.redirects, lr), _run_logs.streams_for(a.tee, lr))
        proc = subprocess.Popen(_cmd(a), env=_env(a, rank, lr, restart, run_id), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE if route.splits_streams else subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=_set_pdeathsig)
        workers.append(_Worker(rank, lr, proc, route))
    procs = [w.proc for w in workers]
    try:
        while True:
            if sigs.received is not None:
                sig = sigs.received
                for p in procs:
                    if p.poll() is None:
                        _signal_group(p, sig)
                _stop_all(procs, sig)
                return 128 + sig
            failed = [w for w in workers if w.proc.poll() not in (None, 0)]
            if failed:
                w = failed[0]
                _stop_all(procs)
                w.join(timeout=2)
                _report(w.rank, w.local_rank, w.proc.returncode, list(w.tail))
                return _exit_code(w.proc.returncode)
            if all(w.proc.poll() == 0 for w in workers):
                for w in workers:
                    w.join(timeout=2)
                return 0
            time.sleep(0.05)
    finally:
        _stop_all(procs, signal.SIGKILL) if any(p.poll() is None for p in procs) else None


def _mpiexec() -> str:
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    for c in (here, shutil.which("mpiexec"), shutil.which("mpiexec.hydra")):
        if c and os.path.exists(c):
            return c
    raise SystemExit("tinytorch.distributed.run --backend mpi: no mpiexec found; pip install mpi4py mpich "
                     "(tinytorch's 'dist' extra)")


def _run_mpi(a, sigs: _Signals, restart: int, run_id: str) -> int:
    if a.nnodes != 1:
        raise SystemExit("tinytorch.distributed.run --backend mpi runs a single node; for several nodes call "
                         "mpiexec with a host file directly (init_process_group('mpi') takes the MPI world)")
    run_dir = tempfile.mkdtemp(prefix="tinytorch-run-")
    env = _env(a, 0, 0, restart, run_id)
    for k in ("RANK", "LOCAL_RANK"):
        env.pop(k)
    env["TINYTORCH_RUN_DIR"] = run_dir
    if a.log_dir is not None:   # the bootstrap of each rank routes its streams (_run_logs.route_from_env)
        env["TINYTORCH_RUN_LOGS"] = _run_logs.env_value(_run_logs.attempt_dir(a.log_dir, run_id, restart),
                                                        a.redirects, a.tee)
    # the bootstrap by path, not with -m: -m would put the current directory (the repository root, say,
    # a source tree without compiled extensions) first on the workers' sys.path
    worker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_mpi_worker.py")
    cmd = [_mpiexec(), "-n", str(a.nproc_per_node), sys.executable, "-u", worker,
           "--no-python" if a.no_python else "--module" if a.module else "--script", a.script] + a.script_args
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True, preexec_fn=_set_pdeathsig)
    w = _Worker(0, 0, proc)
    try:
        failed_at = None
        while proc.poll() is None:
            if sigs.received is not None:
                _signal_group(proc, sigs.received)
                _stop_all([proc], sigs.received)
                return 128 + sigs.received
            if failed_at is None and any(n.endswith(".exit") for n in os.listdir(run_dir)):
                failed_at = time.monotonic()
            if failed_at is not None and time.monotonic() - failed_at > 1.0:
                # a rank failed before (or without) MPI_Abort: mpiexec would wait for the others
                _stop_all([proc])
                break
            time.sleep(0.05)
        w.join(timeout=2)
        fails = []
        for name in os.listdir(run_dir):
            if name.endswith(".exit"):
                with open(os.path.join(run_dir, name)) as f:
                    t, rank, code = f.read().split()
                fails.append((float(t), int(rank), int(code)))
        if fails:
            _, rank, code = min(fails)
            log_path = os.path.join(run_dir, f"rank{rank}.log")
            tail = open(log_path, "rb").read().splitlines(keepends=True)[-TAIL_LINES:] if os.path.exists(log_path) else []
            _report(rank, rank, code, tail)
            return _exit_code(code)
        if proc.returncode != 0:
            _report(-1, -1, proc.returncode, list(w.tail))
        return _exit_code(proc.returncode)
    finally:
        if proc.poll() is None:
            _stop_all([proc], signal.SIGKILL)
        shutil.rmtree(run_dir, ignore_errors=True)


def main(argv=None) -> int:
    a = parse_args(argv, check_launch=True)
    run_id = uuid.uuid4().hex[:12]
    if a.log_dir is not None:
        sys.stderr.write(f"tinytorch.distributed.run: worker logs in {os.path.join(a.log_dir, run_id)}\n")
    sigs = _Signals()
    sigs.install()
    try:
        restart = 0
        while True:
            rc = (_run_mpi if a.backend == "mpi" else _run_local)(a, sigs, restart, run_id)
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
