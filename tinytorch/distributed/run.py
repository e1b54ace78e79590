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
launcher serves a TCPStore at A:P that the launchers coordinate through (:class:`_Nodes`: a
rendezvous that checks the nodes' options agree, heartbeats, the first failure of each attempt,
restarts of every node together) and that the workers use as their rendezvous store (torchrun's
agent store). Ranks are ``K * nproc-per-node + local rank``. With ``--backend mpi`` each node runs
its own ``mpiexec`` and ``init_process_group("mpi")`` joins the nodes' MPI worlds into one
communicator (``_mpi.MPIBackend.joined``). A node whose launcher exits, is killed, stops sending
heartbeats for ``--node-timeout`` seconds, or reports a failed worker stops every node's workers.
"""
from __future__ import annotations

import argparse
import collections
import json
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
from datetime import timedelta

from tinytorch.distributed import _run_logs
from tinytorch.distributed.store import DistError, DistNetworkError, TCPStore

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
    for k in ("TINYTORCH_NNODES", "TORCHELASTIC_USE_AGENT_STORE"):
        env.pop(k, None)
    if a.nnodes > 1:
        # the store at MASTER_ADDR:MASTER_PORT is node 0's launcher's: every worker is a client
        env.update(TINYTORCH_NNODES=str(a.nnodes), TORCHELASTIC_USE_AGENT_STORE="True")
        if a.backend == "mpi" and _is_loopback(a.master_addr):
            # every node on this machine: MPI's network transports listen on the loopback only
            env.setdefault("UCX_NET_DEVICES", "lo")
            env.setdefault("FI_TCP_IFACE", "lo")
    return env


def _is_loopback(addr: str) -> bool:
    return addr == "localhost" or addr == "::1" or addr.startswith("127.")


def _say_node_stopped(rec: dict, what: str) -> None:
    sys.stderr.write(f"\ntinytorch.distributed.run: node {rec['node']} stopped ({rec['reason']}); {what}\n")
    sys.stderr.flush()


class _JobError(Exception):
    """A multi-node job that can't start (options that differ between nodes, a node rank given
    twice, a node that did not join): the launcher says why and exits 2."""


class _NodeStopped(Exception):
    def __init__(self, rec: dict) -> None:
        super().__init__(rec["reason"])
        self.rec = rec


_K = "tt_run/"    # the launchers' keys in the job's store (the workers' are under worker/attempt_<n>/)


class _Nodes:
    """The launchers of a multi-node job, as one of them sees the others.

    Node 0's launcher serves a TCPStore at ``--master-addr:--master-port``; every launcher is a
    client that claims its node rank (``node/<k>``, compare_set: a second claim is an error),
    checks its options against node 0's (``config``), says ``ready/<k>`` and waits for every
    node's (a refusal goes to ``error``, which every waiting launcher reports), then, from a watcher thread, adds to its
    heartbeat counter ``hb/<k>`` every interval and watches the others' (a counter that does not
    move for ``--node-timeout`` seconds is a stopped node: no clock is compared across machines).
    The server sets ``gone/<k>`` when launcher k's connection closes, so a launcher that exits or
    is killed is seen at once. The first failure of attempt ``g`` (a failed worker, a signalled
    launcher, a node gone or silent) is ``gen/<g>/fail`` (compare_set: the first one wins, every
    launcher reports that one); a worker's failure can be restarted: every launcher stops its
    workers, says ``gen/<g+1>/arrived/<k>``, and starts them again once every node has (the
    attempt count is ``generation``). A node whose workers all exited 0 says ``gen/<g>/done/<k>``
    and waits for the others; node 0 serves the store until the others have left."""

    def __init__(self, a, sigs: "_Signals") -> None:
        self.a, self.sigs = a, sigs
        self.k, self.n = a.node_rank, a.nnodes
        self.peers = [p for p in range(self.n) if p != self.k]
        self.interval = min(1.0, max(0.05, a.node_timeout / 10))
        self.where = f"{a.master_addr}:{a.master_port}"
        self.store: TCPStore | None = None
        self.run_id = ""
        self.gen = 0
        self._problem: tuple[int, dict] | None = None      # (attempt, the first failure of that attempt)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._round_at = time.monotonic()
        self._thread: threading.Thread | None = None
        self._joined = False

    # ------------------------------------------------------------------ joining
    def _client(self, is_master: bool, timeout: float) -> TCPStore:
        st = TCPStore(self.a.master_addr, self.a.master_port, None, is_master=is_master,
                      timeout=timedelta(seconds=timeout), wait_for_workers=False)
        st._reply_s = max(5.0, self.a.node_timeout)
        return st

    def _refuse(self, msg: str) -> None:
        """Tells every launcher why the job can't start (the first reason stays), then stops."""
        try:
            self.store.compare_set(_K + "error", "", msg)
        except DistError:
            pass
        raise _JobError(msg)

    def _wait_keys(self, keys: list[str], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while True:
            if self.store.check([_K + "error"]):
                raise _JobError(self.store.get(_K + "error").decode(errors="replace"))
            if self.store.check([_K + k for k in keys]):
                return
            if self.sigs.received is not None:
                raise _JobError(f"node {self.k}: interrupted by signal {self.sigs.received} while waiting for {what}")
            if time.monotonic() > deadline:
                missing = [k for k in keys if not self.store.check([_K + k])]
                raise _JobError(f"node {self.k}: timed out after {timeout:g} s (--join-timeout) waiting for {what} "
                                f"(missing: {', '.join(missing)})")
            time.sleep(0.05)

    def join(self) -> None:
        a = self.a
        if self.k == 0:
            try:
                self.store = self._client(True, a.join_timeout)
            except DistNetworkError as e:
                self._second_node_0(e)
            self.run_id = uuid.uuid4().hex[:12]
            self.store.set(_K + "config", json.dumps(self._config()))
        else:
            try:
                self.store = self._client(False, a.join_timeout)
            except DistNetworkError as e:
                raise _JobError(f"node {self.k}: could not reach node 0's launcher at {self.where} within "
                                f"{a.join_timeout:g} s (--join-timeout): start `tinytorch-run --nnodes {self.n} "
                                f"--node-rank 0` there with the same --master-addr/--master-port ({e})") from None
        token = uuid.uuid4().hex
        if self.store.compare_set(_K + f"node/{self.k}", "", token) != token.encode():
            self._refuse(f"two launchers have --node-rank {self.k}: each node of the job needs its own "
                         f"--node-rank, 0 .. {self.n - 1}")
        self.store._set_on_close(_K + f"gone/{self.k}", "1")
        self._joined = True
        if self.k != 0:
            self._wait_keys(["config"], a.join_timeout, "node 0's options")
            theirs = json.loads(self.store.get(_K + "config"))
            mine = self._config()
            diffs = [f"--{name.replace('_', '-')} {mine[name]} here, {theirs[name]} on node 0"
                     for name in ("nnodes", "nproc_per_node", "backend", "max_restarts") if mine[name] != theirs[name]]
            if diffs:
                self._refuse(f"node {self.k}'s options differ from node 0's: {'; '.join(diffs)} (every node must "
                             "give the same --nnodes, --nproc-per-node, --backend and --max-restarts)")
            self.run_id = theirs["run_id"]
        self.store.set(_K + f"ready/{self.k}", "1")      # claimed and checked: the others may start
        if self.k == 0:
            sys.stderr.write(f"tinytorch.distributed.run: node 0 of {self.n} serves the job's store at {self.where}; "
                             "waiting for the other nodes\n")
        self._wait_keys([f"ready/{p}" for p in range(self.n)], a.join_timeout, f"all {self.n} nodes to join")
        self._thread = threading.Thread(target=self._watch, name="tinytorch-run-nodes", daemon=True)
        self._thread.start()

    def _config(self) -> dict:
        a = self.a
        return {"nnodes": a.nnodes, "nproc_per_node": a.nproc_per_node, "backend": a.backend,
                "max_restarts": a.max_restarts, "run_id": self.run_id}

    def _second_node_0(self, err: Exception) -> None:
        """Node 0 can't serve on the port: a launcher with --node-rank 0 may serve there already."""
        try:
            st = self._client(False, 3.0)
            st.wait([_K + "node/0"], timedelta(seconds=3))
        except DistError:
            raise _JobError(f"node 0 could not serve the job's store at {self.where}: {err} (is another job using "
                            "--master-port?)") from None
        self.store = st
        self._refuse("two launchers have --node-rank 0: each node of the job needs its own --node-rank, "
                     f"0 .. {self.n - 1}")

    # ------------------------------------------------------------------ watching
    def problem(self, g: int | None = None) -> dict | None:
        """The first failure of attempt ``g`` (default: the current one), once known."""
        g = self.gen if g is None else g
        with self._lock:
            p = self._problem
        return p[1] if p is not None and p[0] == g else None

    def _set_problem(self, g: int, rec: dict) -> None:
        with self._lock:
            if self._problem is None or self._problem[0] < g:
                self._problem = (g, rec)

    def fail(self, g: int, node: int, reason: str, restart: bool) -> dict:
        """Records a failure of attempt ``g``; returns the first one (maybe another node's)."""
        rec = json.dumps({"node": node, "reason": reason, "restart": restart})
        try:
            first = json.loads(self.store.compare_set(_K + f"gen/{g}/fail", "", rec))
        except (DistError, ValueError):
            first = json.loads(rec)
        self._set_problem(g, first)
        return first

    def local_failure(self, reason: str) -> dict:
        """This node's worker failed: the job's first failure (another node's when a peer that
        stopped made it fail; the watcher gets a round in first, to see such a peer)."""
        g, t0 = self.gen, time.monotonic()
        while self._round_at < t0 + 0.05 and time.monotonic() - t0 < 3 * self.interval and self._thread.is_alive():
            time.sleep(0.02)
        return self.problem(g) or self.fail(g, self.k, reason, True)

    def peer_problem(self) -> dict | None:
        p = self.problem()
        if p is None and time.monotonic() - self._round_at > self.a.node_timeout + 2 * self.interval:
            p = {"node": 0, "reason": f"its store at {self.where} did not answer for {self.a.node_timeout:g} s",
                 "restart": False}
            self._set_problem(self.gen, p)
        return p

    def check_signal(self) -> None:
        if self.sigs.received is not None and self.problem() is None:
            name = signal.Signals(self.sigs.received).name
            self.fail(self.gen, self.k, f"its launcher received {name}", False)

    def _watch(self) -> None:
        st, timeout = self.store, self.a.node_timeout
        seen = {p: (-1, time.monotonic()) for p in self.peers}
        while not self._stop.is_set():
            try:
                st.add(_K + f"hb/{self.k}", 1)
                g = self.gen
                now = time.monotonic()
                silent = []
                for p in self.peers:        # every round, so that a restart's pause is no silence
                    hb = int(st.add(_K + f"hb/{p}", 0))
                    if hb != seen[p][0]:
                        seen[p] = (hb, now)
                    elif now - seen[p][1] > timeout:
                        silent.append(p)
                if self.problem(g) is None:
                    if st.check([_K + f"gen/{g}/fail"]):
                        self._set_problem(g, json.loads(st.get(_K + f"gen/{g}/fail")))
                    else:
                        for p in self.peers:
                            if st.check([_K + f"gen/{g}/done/{p}"]):
                                continue        # its workers finished: it may leave
                            if st.check([_K + f"gone/{p}"]):
                                self.fail(g, p, "its launcher exited or was killed", False)
                                break
                            if p in silent:
                                self.fail(g, p, f"no heartbeat from its launcher for {timeout:g} s", False)
                                break
                self._round_at = time.monotonic()
            except (DistError, OSError, ValueError):
                if not self._stop.is_set():
                    self._set_problem(self.gen, {"node": 0, "restart": False, "reason": (
                        f"lost the connection to the job's store at {self.where}, which node 0's launcher serves")})
                return
            self._stop.wait(self.interval)

    # ------------------------------------------------------------------ attempts
    def _wait_all(self, key: str, g: int) -> dict | None:
        """Waits until every node has set ``gen/<g>/<key>/<node>``; returns the failure that ends
        the wait instead, if one comes first."""
        keys = [_K + f"gen/{g}/{key}/{p}" for p in range(self.n)]
        while True:
            self.check_signal()
            p = self.peer_problem()
            if p is not None:
                return p
            try:
                if self.store.check(keys):
                    return None
            except DistError:
                pass      # the watcher reports a lost store
            time.sleep(0.05)

    def begin(self, g: int) -> None:
        """Starts attempt ``g`` once every node has stopped the workers of the previous one."""
        self.gen = g
        if g > 0:
            self.store.compare_set(_K + "generation", str(g - 1), str(g))
        self.store.set(_K + f"gen/{g}/arrived/{self.k}", "1")
        p = self._wait_all("arrived", g)
        if p is not None:
            raise _NodeStopped(p)

    def finish(self, g: int) -> dict | None:
        """This node's workers finished: waits for the others'; returns the failure that came first."""
        self.store.set(_K + f"gen/{g}/done/{self.k}", "1")
        return self._wait_all("done", g)

    def close(self) -> None:
        self._stop.set()
        st = self.store
        if st is None:
            return
        if self.k == 0 and st._server is not None and self._joined:
            # serve until the others have read how the job ended (they leave when they have)
            deadline = time.monotonic() + self.a.node_timeout
            try:
                joined = [p for p in self.peers if st.check([_K + f"node/{p}"])]
                while time.monotonic() < deadline and not st.check([_K + f"gone/{p}" for p in joined]):
                    time.sleep(0.05)
            except DistError:
                pass
        st.close()


def _peer_stopped(nodes: "_Nodes | None", procs: list[subprocess.Popen]) -> bool:
    """Multi-node: when another node failed or went, stops this node's workers and says why."""
    p = nodes.peer_problem() if nodes is not None else None
    if p is None:
        return False
    _stop_all(procs)
    _say_node_stopped(p, "stopped this node's workers")
    return True


def _local_failure(nodes: "_Nodes | None", reason: str) -> dict | None:
    """Multi-node: tells the other nodes; returns the job's first failure (another node's, maybe)."""
    if nodes is None:
        return None
    first = nodes.local_failure(reason)
    return first if first["node"] != nodes.k else None


def _on_signal(nodes: "_Nodes | None") -> None:
    if nodes is not None:
        nodes.check_signal()


def _worker_failed(rank: int, rc: int) -> str:
    return f"worker rank {rank} failed with exit code {_exit_code(rc)}"


def _run_local(a, sigs: _Signals, restart: int, run_id: str, nodes: "_Nodes | None" = None) -> int:
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
                _on_signal(nodes)
                for p in procs:
                    if p.poll() is None:
                        _signal_group(p, sig)
                _stop_all(procs, sig)
                return 128 + sig
            failed = [w for w in workers if w.proc.poll() not in (None, 0)]
            if failed:
                w = failed[0]
                first = _local_failure(nodes, _worker_failed(w.rank, w.proc.returncode))
                _stop_all(procs)
                w.join(timeout=2)
                _report(w.rank, w.local_rank, w.proc.returncode, list(w.tail))
                if first is not None:
                    _say_node_stopped(first, "stopped this node's workers")
                return _exit_code(w.proc.returncode)
            if _peer_stopped(nodes, procs):
                return 1
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


def _run_mpi(a, sigs: _Signals, restart: int, run_id: str, nodes: "_Nodes | None" = None) -> int:
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
    iface = ["-iface", "lo"] if a.nnodes > 1 and _is_loopback(a.master_addr) else []
    cmd = [_mpiexec(), *iface, "-n", str(a.nproc_per_node), sys.executable, "-u", worker,
           "--no-python" if a.no_python else "--module" if a.module else "--script", a.script] + a.script_args
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True, preexec_fn=_set_pdeathsig)
    w = _Worker(0, 0, proc)
    try:
        failed_at = None
        first = None
        while proc.poll() is None:
            if sigs.received is not None:
                _on_signal(nodes)
                _signal_group(proc, sigs.received)
                _stop_all([proc], sigs.received)
                return 128 + sigs.received
            if failed_at is None and any(n.endswith(".exit") for n in os.listdir(run_dir)):
                failed_at = time.monotonic()
                rank, code = _first_exit(run_dir)
                first = _local_failure(nodes, _worker_failed(rank, code))
            if failed_at is None and _peer_stopped(nodes, [proc]):
                return 1
            if failed_at is not None and time.monotonic() - failed_at > 1.0:
                # a rank failed before (or without) MPI_Abort: mpiexec would wait for the others
                _stop_all([proc])
                break
            time.sleep(0.05)
        w.join(timeout=2)
        fail = _first_exit(run_dir)
        if fail is not None:
            rank, code = fail
            if failed_at is None:
                first = _local_failure(nodes, _worker_failed(rank, code))
            log_path = os.path.join(run_dir, f"rank{rank}.log")
            tail = open(log_path, "rb").read().splitlines(keepends=True)[-TAIL_LINES:] if os.path.exists(log_path) else []
            _report(rank, rank - a.node_rank * a.nproc_per_node, code, tail)
        elif proc.returncode != 0:
            if failed_at is None:
                first = _local_failure(nodes, f"mpiexec failed with exit code {_exit_code(proc.returncode)}")
            _report(-1, -1, proc.returncode, list(w.tail))
        if first is not None:
            _say_node_stopped(first, "stopped this node's workers")
        return _exit_code(fail[1] if fail is not None else proc.returncode)
    finally:
        if proc.poll() is None:
            _stop_all([proc], signal.SIGKILL)
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


def _main_nodes(a, sigs: _Signals) -> int:
    """One node of a multi-node job (see :class:`_Nodes`)."""
    nodes = _Nodes(a, sigs)
    runner = _run_mpi if a.backend == "mpi" else _run_local
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
                _say_node_stopped(first, "this node's workers had finished")
                rc = 1
            first = nodes.problem(restart)
            if sigs.received is not None:
                return 128 + sigs.received
            if first is None or not first["restart"] or restart >= a.max_restarts:
                return rc
            restart += 1
            sys.stderr.write(f"tinytorch.distributed.run: restarting the workers of every node ({restart}/"
                             f"{a.max_restarts}) after node {first['node']}'s failure\n")
    except _JobError as e:
        sys.stderr.write(f"tinytorch.distributed.run: {e}\n")
        return 2
    except _NodeStopped as e:
        _say_node_stopped(e.rec, "stopped this node's workers")
        return 128 + sigs.received if sigs.received is not None else 1
    finally:
        nodes.close()


def main(argv=None) -> int:
    a = parse_args(argv, check_launch=True)
    if a.nnodes > 1:
        sigs = _Signals()
        sigs.install()
        try:
            return _main_nodes(a, sigs)
        finally:
            sigs.restore()
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
