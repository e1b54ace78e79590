"""Multi-node jobs through the launcher: two launchers on this machine (``--nnodes 2 --node-rank 0/1``)
talking over the loopback only (127.0.0.1). The MPI backend joins the nodes' mpiexec worlds into
one communicator; ``--backend none`` workers use the env:// variables and the launchers' store (as
NCCL's rendezvous does). Failures on one node stop (or, with --max-restarts, restart) every node."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from dist_helpers import WORKERS, needs_mpi

MULTINODE = os.path.join(WORKERS, "multinode.py")
BACKENDS = [pytest.param("mpi", marks=needs_mpi), "none"]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Job:
    """Launchers of one job, each with its output in a file (read while they run)."""

    def __init__(self, tmp_path, script_args, nproc=1, backend="mpi", launcher_args=(), nodes=None,
                 extra_env=None, port=None):
        self.port = port or _free_port()
        self.tmp = tmp_path
        env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=os.pathsep.join([p for p in sys.path if p]))
        env.update(extra_env or {})
        nodes = nodes if nodes is not None else [["--nnodes", "2", "--node-rank", str(k)] for k in range(2)]
        self.procs, self.logs = [], []
        for i, node_args in enumerate(nodes):
            cmd = [sys.executable, "-m", "tinytorch.distributed.run", "--nproc-per-node", str(nproc),
                   "--backend", backend, "--master-addr", "127.0.0.1", "--master-port", str(self.port),
                   "--node-timeout", "5", "--join-timeout", "30", *node_args, *launcher_args, *script_args]
            log = open(tmp_path / f"launcher{i}.log", "wb")
            self.logs.append(tmp_path / f"launcher{i}.log")
            self.procs.append(subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                               stdin=subprocess.DEVNULL, cwd=str(tmp_path), start_new_session=True))
            log.close()

    def out(self, i: int) -> str:
        return self.logs[i].read_text(errors="replace")

    def wait_for(self, text: str, count: int, timeout: float = 45) -> None:
        deadline = time.monotonic() + timeout
        while sum(self.out(i).count(text) for i in range(len(self.procs))) < count:
            if time.monotonic() > deadline or all(p.poll() is not None for p in self.procs):
                self.kill()
                pytest.fail(f"no {count}x {text!r} within {timeout:g} s:\n" + self.all_out())
            time.sleep(0.05)

    def all_out(self) -> str:
        return "\n".join(f"==== launcher {i} (rc {p.poll()}) ====\n{self.out(i)[-5000:]}"
                         for i, p in enumerate(self.procs))

    def finish(self, timeout: float = 50) -> list[int]:
        deadline = time.monotonic() + timeout
        for p in self.procs:
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self.kill()
                pytest.fail(f"the launchers did not finish in {timeout:g} s:\n" + self.all_out())
        return [p.returncode for p in self.procs]

    def kill(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGCONT)
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait()


def _ppids() -> dict[int, int]:
    out = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    out[int(d)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    return out


def _descendants(pid: int) -> set[int]:
    ppid = _ppids()
    found, todo = set(), [pid]
    while todo:
        p = todo.pop()
        for c, pp in ppid.items():
            if pp == p and c not in found:
                found.add(c)
                todo.append(c)
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"    # a zombie has exited
    except OSError:
        return False


def _worker_pids(pid_dir) -> set[int]:
    return {int(n.split("-")[2].split(".")[0]) for n in os.listdir(pid_dir)}


def _assert_all_gone(pids: set[int], job: _Job, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [p for p in pids if _alive(p)]
    for p in left:
        os.kill(p, signal.SIGKILL)
    assert not left, f"processes left running: {left}\n" + job.all_out()


# ------------------------------------------------------------------------------------ jobs that succeed
@needs_mpi
@pytest.mark.parametrize("nproc", [1, 2])
def test_ddp_over_two_nodes(tmp_path, nproc):
    job = _Job(tmp_path, [os.path.join(WORKERS, "ddp.py")], nproc=nproc)
    assert job.finish() == [0, 0], job.all_out()
    # ddp.py checks every rank's parameters against each other and against one process training
    # on the concatenated batch; each node's launcher shows its own ranks
    for k in range(2):
        assert sorted(line for line in job.out(k).splitlines() if "DDP OK" in line) == \
            [f"rank {r}: DDP OK" for r in range(k * nproc, (k + 1) * nproc)], job.all_out()
    assert f"mpi backend, world size {2 * nproc}" in job.out(0), job.all_out()


@needs_mpi
def test_collectives_and_subgroups_span_both_nodes(tmp_path):
    job = _Job(tmp_path, [MULTINODE, "collectives"], nproc=2)
    assert job.finish() == [0, 0], job.all_out()
    for k in range(2):
        assert sorted(line for line in job.out(k).splitlines() if "multinode collectives OK" in line) == \
            [f"rank {r}: multinode collectives OK" for r in (2 * k, 2 * k + 1)], job.all_out()


def test_env_and_store_rendezvous_across_nodes(tmp_path):
    # the NCCL path's rendezvous (MASTER_ADDR/PORT, RANK, WORLD_SIZE, the store) without GPUs
    job = _Job(tmp_path, [MULTINODE, "store"], nproc=2, backend="none")
    assert job.finish() == [0, 0], job.all_out()
    line = next(x for x in job.out(0).splitlines() if x.startswith("ENVS "))
    envs = json.loads(line[5:])
    assert [(e["RANK"], e["LOCAL_RANK"], e["GROUP_RANK"], e["NODE_RANK"]) for e in envs] == \
        [("0", "0", "0", "0"), ("1", "1", "0", "0"), ("2", "0", "1", "1"), ("3", "1", "1", "1")]
    assert {(e["WORLD_SIZE"], e["LOCAL_WORLD_SIZE"], e["TINYTORCH_RESTART_COUNT"]) for e in envs} == {("4", "2", "0")}
    assert len({e["TINYTORCH_RUN_ID"] for e in envs}) == 1          # node 0's run id, on every node
    assert sum(job.out(k).count("store OK") for k in range(2)) == 4, job.all_out()


# ------------------------------------------------------------------------------------ failures
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("killed", [1, 0])
def test_a_killed_node_stops_the_job_on_every_node(tmp_path, backend, killed):
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    job = _Job(tmp_path, [MULTINODE, "hang"], nproc=2, backend=backend, extra_env={"TT_TEST_PID_DIR": str(pid_dir)})
    try:
        job.wait_for("joined", 4)
        everything = _descendants(job.procs[0].pid) | _descendants(job.procs[1].pid) | _worker_pids(pid_dir)
        assert len(_worker_pids(pid_dir)) == 4
        assert len(everything) >= 4 + 2 * (backend == "mpi") and all(_alive(p) for p in everything)
        other = 1 - killed
        t0 = time.monotonic()
        os.kill(job.procs[killed].pid, signal.SIGKILL)              # one launcher, only
        rc = job.procs[other].wait(timeout=30)
        secs = time.monotonic() - t0
    finally:
        job.kill()
    assert rc != 0, job.all_out()
    why = ("its launcher exited or was killed" if killed == 1 else
           f"lost the connection to the job's store at 127.0.0.1:{job.port}, which node 0's launcher serves")
    assert f"tinytorch.distributed.run: node {killed} stopped ({why}); stopped this node's workers" \
        in job.out(other), job.all_out()
    assert secs < 15, f"node {other} took {secs:.1f} s to stop\n{job.all_out()}"
    _assert_all_gone(everything, job)        # the killed node's workers too: they die with their launcher


def test_a_silent_node_is_stopped_after_the_node_timeout(tmp_path):
    # node 1's launcher freezes (SIGSTOP): its connection stays open, its heartbeat stops
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    job = _Job(tmp_path, [MULTINODE, "hang"], backend="none", extra_env={"TT_TEST_PID_DIR": str(pid_dir)},
               launcher_args=["--node-timeout", "3"])
    try:
        job.wait_for("joined", 2)
        everything = _descendants(job.procs[0].pid) | _descendants(job.procs[1].pid) | _worker_pids(pid_dir)
        t0 = time.monotonic()
        os.kill(job.procs[1].pid, signal.SIGSTOP)
        rc0 = job.procs[0].wait(timeout=30)
        secs = time.monotonic() - t0
        os.kill(job.procs[1].pid, signal.SIGCONT)                  # it finds the job gone and stops too
        rc1 = job.procs[1].wait(timeout=30)
    finally:
        job.kill()
    assert rc0 != 0 and rc1 != 0, job.all_out()
    assert "node 1 stopped (no heartbeat from its launcher for 3 s); stopped this node's workers" in job.out(0), \
        job.all_out()
    assert 3 <= secs < 15, f"{secs:.1f} s\n{job.all_out()}"
    assert "node 0 stopped (" in job.out(1) and "stopped this node's workers" in job.out(1), job.all_out()
    _assert_all_gone(everything, job)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_failing_worker_stops_every_node(tmp_path, backend):
    job = _Job(tmp_path, [MULTINODE, "fail_once", "1"], backend=backend)
    assert job.finish() == [1, 7], job.all_out()
    assert "worker rank 1 (local rank 0) failed with exit code 7" in job.out(1), job.all_out()
    assert "node 1 stopped (worker rank 1 failed with exit code 7); stopped this node's workers" in job.out(0), \
        job.all_out()


@pytest.mark.parametrize("backend", BACKENDS)
def test_max_restarts_restarts_every_node(tmp_path, backend):
    job = _Job(tmp_path, [MULTINODE, "fail_once", "1"], backend=backend, launcher_args=["--max-restarts", "1"])
    assert job.finish() == [0, 0], job.all_out()
    for k in range(2):
        out = job.out(k)
        assert "restarting the workers of every node (1/1) after node 1's failure" in out, job.all_out()
        assert f"rank {k}: attempt 1 OK" in out and "attempt 0 OK" not in out, job.all_out()
    assert "rank 1: failing on attempt 0" in job.out(1)


# ------------------------------------------------------------------------------------ bad input
def _refused_on_both(job: _Job, message: str) -> None:
    assert job.finish(timeout=40) == [2, 2], job.all_out()
    for k in range(2):
        assert message in job.out(k), job.all_out()


def test_mismatched_nnodes_is_an_error_on_both_nodes(tmp_path):
    job = _Job(tmp_path, [MULTINODE, "store"], backend="none",
               nodes=[["--nnodes", "2", "--node-rank", "0"], ["--nnodes", "3", "--node-rank", "1"]])
    _refused_on_both(job, "node 1's options differ from node 0's: --nnodes 3 here, 2 on node 0")


def test_mismatched_nproc_per_node_is_an_error_on_both_nodes(tmp_path):
    job = _Job(tmp_path, [MULTINODE, "store"], backend="none",
               nodes=[["--nnodes", "2", "--node-rank", "0"], ["--nnodes", "2", "--node-rank", "1",
                                                              "--nproc-per-node", "2"]])
    _refused_on_both(job, "--nproc-per-node 2 here, 1 on node 0")


def test_duplicate_node_rank_is_an_error_on_both_launchers(tmp_path):
    job = _Job(tmp_path, [MULTINODE, "store"], backend="none",
               nodes=[["--nnodes", "2", "--node-rank", "0"], ["--nnodes", "2", "--node-rank", "0"]])
    _refused_on_both(job, "two launchers have --node-rank 0")


def test_a_node_without_node_0_gives_up_after_the_join_timeout(tmp_path):
    job = _Job(tmp_path, [MULTINODE, "store"], backend="none", nodes=[["--nnodes", "2", "--node-rank", "1"]],
               launcher_args=["--join-timeout", "2"])
    assert job.finish(timeout=30) == [2], job.all_out()
    assert "could not reach node 0's launcher at 127.0.0.1:" in job.out(0), job.all_out()


# ------------------------------------------------------------------------------------ pieces
def test_store_sets_a_key_when_a_client_connection_closes():
    from datetime import timedelta

    from tinytorch.distributed import TCPStore
    master = TCPStore("127.0.0.1", 0, is_master=True, timeout=timedelta(seconds=10), wait_for_workers=False)
    client = TCPStore("127.0.0.1", master.port, timeout=timedelta(seconds=10), wait_for_workers=False)
    client._set_on_close("gone/1", "bye")
    assert not master.check(["gone/1"])
    client.close()
    master.wait(["gone/1"], timedelta(seconds=5))
    assert master.get("gone/1") == b"bye"
    master.close()


def test_multinode_options():
    from tinytorch.distributed.run import parse_args
    a = parse_args(["--nnodes", "2", "--node-rank", "1", "--backend", "mpi", "x.py"])
    assert (a.master_addr, a.master_port, a.node_timeout, a.join_timeout) == ("127.0.0.1", 29500, 30.0, 600.0)
    a = parse_args(["--nnodes", "2", "--node_timeout", "2.5", "--join_timeout", "7", "x.py"])
    assert (a.node_timeout, a.join_timeout) == (2.5, 7.0)
    for bad in (["--nnodes", "2", "--node-rank", "2", "x.py"], ["--node-timeout", "0", "x.py"],
                ["--join-timeout", "-1", "x.py"]):
        with pytest.raises(SystemExit):
            parse_args(bad)
