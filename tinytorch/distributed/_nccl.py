"""NCCL backend (CUDA tensors): the Python side of ``tinytorch._cuda.NcclComm``.

Rendezvous: group rank 0 creates an NCCL unique id and publishes it in the store under
``<group prefix>/nccl_uid``; the other ranks read it (the store's timeout bounds the wait), then
every rank builds its communicator on its device. Collectives run on the communicator's own
stream, ordered after the current compute stream by a CUDA event; ``Work.wait()`` makes the current
stream wait on the collective's event (no host sync), as PyTorch. A watchdog thread polls pending
collectives: past the timeout, or on an asynchronous NCCL error (e.g. a peer died), it aborts the
communicator (``ncclCommAbort``) and, as PyTorch's default async error handling, ends the process
(exit code 1) after printing the reason, unless ``TINYTORCH_NCCL_ASYNC_ERROR_HANDLING=0``: then the
next collective or ``wait()`` raises DistBackendError."""
from __future__ import annotations

import atexit
import os
import sys
import threading
import time
import weakref
from collections import deque

from tinytorch._tensor.creation import zeros
from tinytorch._core.cuda_loader import cuda_backend
from tinytorch._core.dtype import device as _device
from tinytorch.distributed.store import DistBackendError, PrefixStore


_live: "weakref.WeakSet[NCCLBackend]" = weakref.WeakSet()


@atexit.register
def _abort_at_exit() -> None:
    """Groups never destroyed (the script ended, or raised): stop their watchdogs, which would crash
    the process polling a communicator torn down under them, then abort (not destroy) their
    communicators, as PyTorch does at exit: a destroy waits for peers that may never come (a rank
    that raised would hang at exit while the others wait in a collective)."""
    backends = list(_live)
    for b in backends:
        b._stop.set()
    for b in backends:
        b._stop_watchdog(timeout=1)
        try:
            b.comm.abort()
        except Exception:
            pass


def _cuda():
    b = cuda_backend()
    if b is None:
        raise RuntimeError("the nccl backend needs tinytorch's CUDA backend (this build has none); use backend='mpi'")
    if not hasattr(b, "NcclComm"):
        raise RuntimeError("this tinytorch build has no NCCL (CMake did not find it: pip install nvidia-nccl-cu13 "
                           "before building, or install libnccl-dev); use backend='mpi' for CPU tensors")
    if b.device_count() == 0:
        raise RuntimeError("the nccl backend needs a CUDA GPU; none is available")
    return b


class _NCCLWork:
    def __init__(self, backend: "NCCLBackend", handle, what: str, seq: int, finalize=None) -> None:
        self.backend, self.handle, self.what, self.seq = backend, handle, what, seq
        self.finalize = finalize
        self.started = time.monotonic()
        self.source = None
        self.done = False

    def is_completed(self) -> bool:
        self.backend.raise_if_broken()
        return bool(self.handle.query())

    def wait(self, timeout=None) -> None:
        b = self.backend
        b.raise_if_broken()
        if not self.done:
            self.handle.wait()       # the current stream waits on the collective's event
            self.done = True
            if self.finalize is not None:
                self.finalize()


class NCCLBackend:
    def __init__(self, store, rank: int, size: int, timeout: float, device_id=None, ranks=None) -> None:
        C = _cuda()
        self.C = C
        self.store = store
        self.rank, self.size, self.timeout = rank, size, timeout
        if device_id is None:
            lr = os.environ.get("LOCAL_RANK")
            idx = int(lr) if lr is not None else rank % C.device_count()
        else:
            idx = _device(device_id).index if not isinstance(device_id, int) else device_id
            idx = 0 if idx is None else idx
        self.device_index = idx
        self.device = _device("cuda", idx)
        C.set_device(idx)
        if rank == 0:
            store.set("nccl_uid", C.nccl_unique_id())
        uid = store.get("nccl_uid")
        self.comm = C.NcclComm(uid, size, rank, idx)
        self.seq = 0
        self.broken = None
        self._pending: deque[tuple[_NCCLWork, float]] = deque()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._meta_seq = 0
        self._watchdog_thread = threading.Thread(target=self._watchdog, name=f"nccl-watchdog-{rank}", daemon=True)
        self._watchdog_thread.start()
        _live.add(self)

    # ------------------------------------------------------------ watchdog
    def _watchdog(self) -> None:
        # A new thread's current device is cuda:0. Its first CUDA call would create a context on
        # GPU 0 from every rank (~165 ms, blocking this rank's training, and GPU 0 memory).
        self.C.set_device(self.device_index)
        while not self._stop.wait(0.1):
            if not self._pending:
                continue
            reason = None
            try:
                err = self.comm.async_error()
            except Exception as e:  # noqa: BLE001
                err = str(e)
            if err:
                reason = f"asynchronous NCCL error: {err}"
            if reason is None:
                reason = self._retire_finished()
            if reason is not None:
                self._fail(reason)
                return

    def _retire_finished(self):
        """Drops the collectives that have finished; returns why the communicator is broken, or None.

        Collectives of one communicator finish in order (one stream), so the finished ones are a
        prefix of the queue: a binary search finds it in a few event queries. (Querying them one by
        one walked hundreds of entries in Python, holding the GIL for milliseconds while the
        training thread waited for it.) Only the oldest unfinished one can be the first to time out."""
        with self._lock:
            items = list(self._pending)
        lo, hi = 0, len(items)            # items[:lo] finished, items[hi:] not
        while lo < hi:
            mid = (lo + hi) // 2
            w = items[mid][0]
            try:
                done = w.handle.query()
            except Exception as e:  # noqa: BLE001
                return f"{w.what} failed: {e}"
            lo, hi = (mid + 1, hi) if done else (lo, mid)
        with self._lock:
            for _ in range(lo):
                self._pending.popleft()
        if lo < len(items):
            w, deadline = items[lo]
            if time.monotonic() > deadline:
                return (f"{w.what} (seq {w.seq}) timed out after {self.timeout:g} s: a peer is stuck, died, "
                        "or called a different collective")
        return None

    def _fail(self, reason: str) -> None:
        msg = f"[rank {self.rank}] NCCL watchdog: {reason}; aborting the communicator"
        self.broken = msg
        print(msg, file=sys.stderr, flush=True)
        try:
            self.comm.abort()
        except Exception:
            pass
        if os.environ.get("TINYTORCH_NCCL_ASYNC_ERROR_HANDLING", "1") != "0":
            os._exit(1)

    def raise_if_broken(self) -> None:
        if self.broken:
            raise DistBackendError(self.broken)

    def _launch(self, what: str, handle, finalize=None) -> _NCCLWork:
        self.seq += 1
        w = _NCCLWork(self, handle, what, self.seq, finalize)
        with self._lock:
            self._pending.append((w, time.monotonic() + self.timeout))
        return w

    def _check_dev(self, *ts) -> None:
        for t in ts:
            if t.device.index != self.device_index:
                raise ValueError(f"NCCL backend: tensor on {t.device}, but this process group's device is {self.device} "
                                 "(call tinytorch.cuda.set_device(LOCAL_RANK) before init_process_group, or pass device_id)")

    # ------------------------------------------------------------ collectives
    def exchange_meta(self, what: str, desc: list[int]) -> list[list[int]]:
        self._meta_seq += 1
        k = f"meta/{self._meta_seq}"
        self.store.set(f"{k}/{self.rank}", ",".join(map(str, desc)))
        rows = []
        for r in range(self.size):
            rows.append([int(x) for x in self.store.get(f"{k}/{r}").decode().split(",")])
        return rows

    def all_reduce(self, t, op):
        self.raise_if_broken()
        self._check_dev(t)
        return self._launch("all_reduce", self.comm.all_reduce(t._impl, int(op)))

    def broadcast(self, t, root):
        self.raise_if_broken()
        self._check_dev(t)
        return self._launch("broadcast", self.comm.broadcast(t._impl, root))

    def reduce(self, t, root, op):
        self.raise_if_broken()
        self._check_dev(t)
        return self._launch("reduce", self.comm.reduce(t._impl, root, int(op)))

    def all_gather(self, out, inp):
        self.raise_if_broken()
        self._check_dev(out, inp)
        return self._launch("all_gather", self.comm.all_gather(inp._impl, out._impl))

    def reduce_scatter(self, out, inp, op):
        self.raise_if_broken()
        self._check_dev(out, inp)
        return self._launch("reduce_scatter", self.comm.reduce_scatter(inp._impl, out._impl, int(op)))

    def send(self, t, peer, tag):
        self.raise_if_broken()
        self._check_dev(t)
        return self._launch("send", self.comm.send(t._impl, peer))

    def recv(self, t, peer, tag):
        if peer is None:
            raise ValueError("the NCCL backend cannot receive from any source: pass src=")
        self.raise_if_broken()
        self._check_dev(t)
        w = self._launch("recv", self.comm.recv(t._impl, peer))
        w.source = peer
        return w

    def barrier(self):
        x = zeros(1, device=self.device)
        w = self.all_reduce(x, 0)

        class _Sync:
            def wait(s, timeout=None):
                w.wait(timeout)
                x.cpu()      # host-side sync, as PyTorch's NCCL barrier

            def is_completed(s):
                return w.is_completed()
        return _Sync()

    def new_group(self, ranks, gid, timeout):
        if self.rank not in ranks:
            return None
        store = PrefixStore(f"group{gid}", self.store.underlying_store if isinstance(self.store, PrefixStore) else self.store)
        return NCCLBackend(store, ranks.index(self.rank), len(ranks), timeout, self.device_index, ranks)

    def _stop_watchdog(self, timeout: float) -> None:
        self._stop.set()
        if threading.current_thread() is not self._watchdog_thread:
            self._watchdog_thread.join(timeout=timeout)

    def shutdown(self) -> None:
        self._stop_watchdog(timeout=10)  # it polls the communicator: gone before the communicator is
        try:
            self.comm.destroy()
        except Exception:
            pass
