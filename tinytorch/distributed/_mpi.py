"""MPI backend (CPU tensors) through mpi4py.

Buffers are zero-copy numpy views of the tensors' memory (``_impl.numpy()``; bfloat16, which numpy
lacks, through a uint16 view of ``_impl.data_ptr``). Data movement (broadcast, all_gather, send/recv)
sends raw bytes; reductions of float16/bfloat16 go through a float32 copy (MPI has no 16-bit float
reductions) and round back once. Every operation is a nonblocking MPI request (Iallreduce, Ibcast,
...) wrapped in a work object; waiting polls the request with backoff until the group's timeout,
then raises DistBackendError and makes the process call MPI_Abort at exit (so a stuck peer never
leaves survivors hanging in MPI_Finalize)."""
from __future__ import annotations

import atexit
import ctypes
import sys
import time

import numpy as np

from tinytorch._core.dtype import device as _device
from tinytorch.distributed.store import DistBackendError

_META_LEN = 3 + 16
_abort_code = [None]


def _mpi():
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise RuntimeError("the mpi backend needs mpi4py and an MPI library: pip install mpi4py mpich "
                           "(the [dist] extra of tinytorch's checkout)") from e
    return MPI


def _abort_at_exit() -> None:
    if _abort_code[0] is not None:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:
            pass
        _mpi().COMM_WORLD.Abort(_abort_code[0])


def _raw(t) -> np.ndarray:
    """1-D numpy view of a contiguous CPU tensor's memory, in its own dtype (uint16 for bfloat16)."""
    if t.dtype.name == "bfloat16":
        n = t.numel()
        if n == 0:
            return np.empty(0, np.uint16)
        return np.ctypeslib.as_array((ctypes.c_uint16 * n).from_address(t._impl.data_ptr))
    return t._impl.numpy().reshape(-1)


def _bytes(t) -> np.ndarray:
    return _raw(t).view(np.uint8)


class _MPIWork:
    def __init__(self, backend: "MPIBackend", reqs, what: str, finalize=None, keep=(), status=None) -> None:
        self.backend, self.reqs, self.what = backend, reqs, what
        self.finalize, self.keep, self.status = finalize, keep, status
        self.done = False
        self.source = None

    def _complete(self) -> None:
        self.done = True
        if self.status is not None:
            self.source = self.status.Get_source()
        if self.finalize is not None:
            self.finalize()
        self.keep = ()

    def _test(self) -> bool:
        MPI = _mpi()
        if self.status is not None:
            ok = self.reqs[0].Test(self.status)
        else:
            ok = MPI.Request.Testall(self.reqs)
        return bool(ok)

    def is_completed(self) -> bool:
        if not self.done and self._test():
            self._complete()
        return self.done

    def wait(self, timeout=None) -> None:
        if self.done:
            return
        b = self.backend
        if b.broken:
            raise DistBackendError(b.broken)
        secs = b.timeout if timeout is None else timeout.total_seconds()
        deadline = time.monotonic() + secs
        spins, delay = 0, 1e-5
        while not self._test():
            spins += 1
            if spins > 200:
                time.sleep(delay)
                delay = min(delay * 2, 1e-3)
            if time.monotonic() > deadline:
                msg = (f"[rank {b.world_rank}] MPI {self.what} timed out after {secs:g} s: a peer is stuck, "
                       "died, or called a different collective; the job will be aborted")
                b.broken = msg
                _abort_code[0] = 1
                raise DistBackendError(msg)
        self._complete()


class _Done:
    source = None

    def wait(self, timeout=None):
        pass

    def is_completed(self):
        return True


def _avg(arr: np.ndarray, n: int) -> None:
    if arr.dtype.kind == "f":
        np.divide(arr, n, out=arr)
    else:
        np.floor_divide(arr, n, out=arr)


def _op(op):
    MPI = _mpi()
    return {0: MPI.SUM, 1: MPI.PROD, 2: MPI.MAX, 3: MPI.MIN, 4: MPI.SUM}[int(op)]


class MPIBackend:
    def __init__(self, comm, timeout: float) -> None:
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self.world_rank = _mpi().COMM_WORLD.Get_rank()
        self.timeout = timeout
        self.broken = None
        self.device = _device("cpu")

    @classmethod
    def world(cls, timeout: float) -> "MPIBackend":
        MPI = _mpi()
        atexit.register(_abort_at_exit)   # runs before mpi4py's MPI_Finalize
        return cls(MPI.COMM_WORLD, timeout)

    def _work(self, req, what, finalize=None, keep=()):
        w = _MPIWork(self, [req] if not isinstance(req, list) else req, what, finalize, keep)
        return w

    # reduction buffers: (array to reduce in place, finalize) for dtype/op
    def _reduce_buf(self, t, op):
        name = t.dtype.name
        if name in ("float16", "bfloat16"):
            tmp = t.detach().float().contiguous()
            arr = tmp._impl.numpy().reshape(-1)

            def fin():
                if int(op) == 4:
                    _avg(arr, self.size)
                t._impl.copy_(tmp._impl, False)
            return arr, _op(op), fin, (tmp,)
        arr = _raw(t)
        if name == "bool":
            if int(op) == 4:
                raise ValueError("ReduceOp.AVG is not supported for bool tensors")
            MPI = _mpi()
            return arr.view(np.uint8), (MPI.MAX if int(op) in (0, 2) else MPI.MIN), None, ()
        if int(op) == 4:
            def fin():
                _avg(arr, self.size)
            return arr, _op(op), fin, ()
        return arr, _op(op), None, ()

    def exchange_meta(self, what: str, desc: list[int]) -> list[list[int]]:
        mine = np.zeros(_META_LEN, np.int64)
        d = desc[:_META_LEN]
        mine[:len(d)] = d
        rows = np.zeros((self.size, _META_LEN), np.int64)
        self._work(self.comm.Iallgather(mine, rows), f"{what} (shape check)").wait()
        return [list(map(int, r)) for r in rows]

    def all_reduce(self, t, op):
        MPI = _mpi()
        arr, mop, fin, keep = self._reduce_buf(t, op)
        return self._work(self.comm.Iallreduce(MPI.IN_PLACE, arr, mop), "all_reduce", fin, (t, arr) + keep)

    def broadcast(self, t, root):
        arr = _bytes(t)
        return self._work(self.comm.Ibcast(arr, root), "broadcast", None, (t, arr))

    def reduce(self, t, root, op):
        MPI = _mpi()
        arr, mop, fin, keep = self._reduce_buf(t, op)
        if self.rank == root:
            req = self.comm.Ireduce(MPI.IN_PLACE, arr, mop, root)
        else:
            req, fin = self.comm.Ireduce(arr, None, mop, root), None
        return self._work(req, "reduce", fin, (t, arr) + keep)

    def all_gather(self, out, inp):
        a, b = _bytes(inp), _bytes(out)
        return self._work(self.comm.Iallgather(a, b), "all_gather", None, (out, inp, a, b))

    def reduce_scatter(self, out, inp, op):
        if inp.dtype.name in ("float16", "bfloat16"):
            src_t = inp.detach().float().contiguous()
            src, keep_in = src_t._impl.numpy().reshape(-1), (src_t,)
        else:
            src, keep_in = (_raw(inp).view(np.uint8) if inp.dtype.name == "bool" else _raw(inp)), ()
        if out.dtype.name in ("float16", "bfloat16"):
            tmp = out.detach().float().contiguous()
            dst = tmp._impl.numpy().reshape(-1)

            def fin():
                if int(op) == 4:
                    _avg(dst, self.size)
                out._impl.copy_(tmp._impl, False)
            keep = (tmp,)
        else:
            dst = _raw(out) if out.dtype.name != "bool" else _raw(out).view(np.uint8)
            keep = ()

            def fin():
                if int(op) == 4:
                    _avg(dst, self.size)
        if out.dtype.name == "bool":
            mop = _mpi().MAX if int(op) in (0, 2) else _mpi().MIN
        else:
            mop = _op(op)
        req = self.comm.Ireduce_scatter_block(src, dst, mop)
        return self._work(req, "reduce_scatter", fin, (out, inp, src, dst) + keep + keep_in)

    def send(self, t, peer, tag):
        arr = _bytes(t)
        return self._work(self.comm.Isend(arr, peer, tag), "send", None, (t, arr))

    def recv(self, t, peer, tag):
        MPI = _mpi()
        arr = _bytes(t)
        st = MPI.Status()
        req = self.comm.Irecv(arr, MPI.ANY_SOURCE if peer is None else peer, tag)
        return _MPIWork(self, [req], "recv", None, (t, arr), status=st)

    def barrier(self):
        return self._work(self.comm.Ibarrier(), "barrier")

    def new_group(self, ranks, gid, timeout):
        MPI = _mpi()
        color = 0 if self.rank in ranks else MPI.UNDEFINED
        sub = self.comm.Split(color, self.rank)
        if sub == MPI.COMM_NULL:
            return None
        return MPIBackend(sub, timeout)

    def shutdown(self) -> None:
        MPI = _mpi()
        if self.comm != MPI.COMM_WORLD and self.comm != MPI.COMM_NULL and self.broken is None:
            try:
                self.comm.Free()
            except Exception:
                pass
