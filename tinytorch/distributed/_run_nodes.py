"""The rendezvous of a multi-node job's launchers (``--nnodes N``), through the TCPStore that node
0's launcher serves: joining with options checked against node 0's, heartbeats, the first failure
of each attempt, every node's restart together (:class:`Nodes`)."""
from __future__ import annotations

import json
import signal
import sys
import threading
import time
import uuid
from datetime import timedelta

from tinytorch.distributed.store import DistError, DistNetworkError, TCPStore


def say_node_stopped(rec: dict, what: str) -> None:
    sys.stderr.write(f"\ntinytorch.distributed.run: node {rec['node']} stopped ({rec['reason']}); {what}\n")
    sys.stderr.flush()


class JobError(Exception):
    """A multi-node job that can't start (options that differ between nodes, a node rank given
    twice, a node that did not join): the launcher says why and exits 2."""


class NodeStopped(Exception):
    def __init__(self, rec: dict) -> None:
        super().__init__(rec["reason"])
        self.rec = rec


_K = "tt_run/"    # the launchers' keys in the job's store (the workers' are under worker/attempt_<n>/)


class Nodes:
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
    and waits for the others; node 0 serves the store until the others have left. ``a`` is the
    launcher's options, ``sigs`` its ``_run_workers.Signals`` (a signal it receives is a failure)."""

    def __init__(self, a, sigs) -> None:
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
        raise JobError(msg)

    def _wait_keys(self, keys: list[str], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while True:
            if self.store.check([_K + "error"]):
                raise JobError(self.store.get(_K + "error").decode(errors="replace"))
            if self.store.check([_K + k for k in keys]):
                return
            if self.sigs.received is not None:
                raise JobError(f"node {self.k}: interrupted by signal {self.sigs.received} while waiting for {what}")
            if time.monotonic() > deadline:
                missing = [k for k in keys if not self.store.check([_K + k])]
                raise JobError(f"node {self.k}: timed out after {timeout:g} s (--join-timeout) waiting for {what} "
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
                raise JobError(f"node {self.k}: could not reach node 0's launcher at {self.where} within "
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
            raise JobError(f"node 0 could not serve the job's store at {self.where}: {err} (is another job using "
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
            raise NodeStopped(p)

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
