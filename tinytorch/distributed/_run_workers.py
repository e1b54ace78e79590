"""The launcher's workers on this node: each a child process in its own process group (signalled
as a group, killed after a grace period, dying with the launcher), its output streamed to the
console or routed by ``_run_logs.py``, the tail kept for the failure report; the launcher's
SIGINT/SIGTERM handling; and the local run of one attempt (:func:`run_local`), which stops every
worker when one fails. In a multi-node job the run also reports to and hears from the other
nodes (``_run_nodes.py``)."""
from __future__ import annotations

import collections
import os
import signal
import subprocess
import sys
import threading
import time

from tinytorch.distributed import _run_logs
from tinytorch.distributed._run_nodes import Nodes, say_node_stopped

GRACE_S = 5.0
TAIL_LINES = 40


def _cmd(a) -> list[str]:
    if a.no_python:
        return [a.script] + a.script_args
    if a.module:
        return [sys.executable, "-u", "-m", a.script] + a.script_args
    return [sys.executable, "-u", a.script] + a.script_args


def set_pdeathsig() -> None:
    """Child side (preexec): die with the launcher, so a killed launcher leaves no orphans."""
    try:
        import ctypes
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG
    except Exception:
        pass


class Worker:
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


def signal_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def stop_all(procs: list[subprocess.Popen], sig: int = signal.SIGTERM) -> None:
    for p in procs:
        if p.poll() is None:
            signal_group(p, sig)
    deadline = time.monotonic() + GRACE_S
    for p in procs:
        left = deadline - time.monotonic()
        try:
            p.wait(timeout=max(left, 0.01))
        except subprocess.TimeoutExpired:
            pass
    for p in procs:
        signal_group(p, signal.SIGKILL)   # the whole group: the worker and anything it started
        if p.poll() is None:
            p.wait()


def exit_code(rc: int) -> int:
    return 128 - rc if rc < 0 else rc


def report_failure(rank: int, local_rank: int, rc: int, tail) -> None:
    err = sys.stderr
    err.write(f"\ntinytorch.distributed.run: worker rank {rank} (local rank {local_rank}) failed with exit code "
              f"{exit_code(rc)}{' (signal %d)' % -rc if rc < 0 else ''}; stopped the other workers\n")
    if tail:
        err.write(f"---- last {len(tail)} line(s) of rank {rank}'s output ----\n")
        for line in tail:
            err.write(line.decode(errors="replace") if isinstance(line, bytes) else line)
        err.write("-" * 40 + "\n")
    err.flush()


class Signals:
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


def worker_env(a, rank: int, local_rank: int, restart: int, run_id: str) -> dict:
    env = dict(os.environ)
    env.update(RANK=str(rank), LOCAL_RANK=str(local_rank), WORLD_SIZE=str(a.nproc_per_node * a.nnodes),
               LOCAL_WORLD_SIZE=str(a.nproc_per_node), GROUP_RANK=str(a.node_rank), NODE_RANK=str(a.node_rank),
               MASTER_ADDR=a.master_addr, MASTER_PORT=str(a.master_port), TINYTORCH_BACKEND=a.backend,
               TINYTORCH_RESTART_COUNT=str(restart), TINYTORCH_RUN_ID=run_id, PYTHONUNBUFFERED="1")
    if a.backend == "none":
        env.pop("TINYTORCH_BACKEND")
    for k in ("TINYTORCH_NNODES", "TORCHELASTIC_USE_AGENT_STORE"):
        env.pop(k, None)
    if a.nnodes > 1:
        # the store at MASTER_ADDR:MASTER_PORT is node 0's launcher's: every worker is a client
        env.update(TINYTORCH_NNODES=str(a.nnodes), TORCHELASTIC_USE_AGENT_STORE="True")
        if a.backend == "mpi" and is_loopback(a.master_addr):
            # every node on this machine: MPI's network transports listen on the loopback only
            env.setdefault("UCX_NET_DEVICES", "lo")
            env.setdefault("FI_TCP_IFACE", "lo")
    return env


def is_loopback(addr: str) -> bool:
    return addr == "localhost" or addr == "::1" or addr.startswith("127.")


# ------------------------------------------------------- what a run tells the other nodes and hears
# (``nodes`` is None on a single node)
def peer_stopped(nodes: Nodes | None, procs: list[subprocess.Popen]) -> bool:
    """Multi-node: when another node failed or went, stops this node's workers and says why."""
    p = nodes.peer_problem() if nodes is not None else None
    if p is None:
        return False
    stop_all(procs)
    say_node_stopped(p, "stopped this node's workers")
    return True


def local_failure(nodes: Nodes | None, reason: str) -> dict | None:
    """Multi-node: tells the other nodes; returns the job's first failure (another node's, maybe)."""
    if nodes is None:
        return None
    first = nodes.local_failure(reason)
    return first if first["node"] != nodes.k else None


def on_signal(nodes: Nodes | None) -> None:
    if nodes is not None:
        nodes.check_signal()


def worker_failed(rank: int, rc: int) -> str:
    return f"worker rank {rank} failed with exit code {exit_code(rc)}"


def run_local(a, sigs: Signals, restart: int, run_id: str, nodes: Nodes | None = None) -> int:
    workers: list[Worker] = []
    logs = _run_logs.attempt_dir(a.log_dir, run_id, restart)
    for lr in range(a.nproc_per_node):
        rank = a.node_rank * a.nproc_per_node + lr
        route = _run_logs.Route(logs, lr, _run_logs.streams_for(a.redirects, lr), _run_logs.streams_for(a.tee, lr))
        proc = subprocess.Popen(_cmd(a), env=worker_env(a, rank, lr, restart, run_id), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE if route.splits_streams else subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=set_pdeathsig)
        workers.append(Worker(rank, lr, proc, route))
    procs = [w.proc for w in workers]
    try:
        while True:
            if sigs.received is not None:
                sig = sigs.received
                on_signal(nodes)
                for p in procs:
                    if p.poll() is None:
                        signal_group(p, sig)
                stop_all(procs, sig)
                return 128 + sig
            failed = [w for w in workers if w.proc.poll() not in (None, 0)]
            if failed:
                w = failed[0]
                first = local_failure(nodes, worker_failed(w.rank, w.proc.returncode))
                stop_all(procs)
                w.join(timeout=2)
                report_failure(w.rank, w.local_rank, w.proc.returncode, list(w.tail))
                if first is not None:
                    say_node_stopped(first, "stopped this node's workers")
                return exit_code(w.proc.returncode)
            if peer_stopped(nodes, procs):
                return 1
            if all(w.proc.poll() == 0 for w in workers):
                for w in workers:
                    w.join(timeout=2)
                return 0
            time.sleep(0.05)
    finally:
        stop_all(procs, signal.SIGKILL) if any(p.poll() is None for p in procs) else None
