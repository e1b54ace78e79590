"""MPI backend (CPU tensors) through mpi4py.

Buffers are zero-copy numpy views of the tensors' memory (``_impl.numpy()``; bfloat16, which numpy
lacks, through a uint16 view of ``_impl.data_ptr``). Data movement (broadcast, all_gather, send/recv)
sends raw bytes; reductions of float16/bfloat16 go through a float32 copy (MPI has no 16-bit float
reductions) and round back once. Every operation is a nonblocking MPI request (Iallreduce, Ibcast,
...) wrapped in a work object; waiting polls the request with backoff until the group's timeout,
then raises DistBackendError and makes the process call MPI_Abort at exit (so a stuck peer never
leaves survivors hanging in MPI_Finalize).

Several nodes (the launcher's ``--nnodes`` > 1): each node's ``mpiexec`` starts an MPI world of its
own, and :meth:`MPIBackend.joined` merges them into one communicator with MPI's dynamic-process
API (``Open_port``/``Comm.Accept``/``Comm.Connect``/``Intercomm.Merge``), so the data moves over
MPI's own transport; the launchers' store only carries the port name."""
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
_joined_world = [None]     # the merged communicator of a multi-node job (else COMM_WORLD is the world)


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


def _float32_copy(t):
    """A contiguous float32 copy of ``t`` and its 1-D numpy view (MPI has no 16-bit float reductions)."""
    tmp = t.detach().float().contiguous()
    return tmp, tmp._impl.numpy().reshape(-1)


class _MPIWork:
    def __init__(self, backend: "MPIBackend", reqs, what: str, finalize=None, keep=(), status=None,
                 buffer: str = "", nbytes: int = 0) -> None:
        self.backend, self.reqs, self.what = backend, reqs, what
        self.finalize, self.keep, self.status = finalize, keep, status
        self.buffer, self.nbytes = buffer, nbytes   # a recv's tensor ("float32 [4] (16 bytes)") and its size
        self.done = False
        self.source = None

    def _complete(self) -> None:
        self.done = True
        if self.status is not None:
            self.source = self.status.Get_source()
            got = self.status.Get_count(_mpi().BYTE)
            if self.buffer and got != self.nbytes:
                raise RuntimeError(f"recv: the sender (group rank {self.source}) sent {got} bytes into a "
                                   f"buffer of {self.buffer}; send and recv need tensors of the same size and dtype")
        if self.finalize is not None:
            self.finalize()
        self.keep = ()

    def _test(self) -> bool:
        MPI = _mpi()
        if self.status is not None:
            try:
                ok = self.reqs[0].Test(self.status)
            except MPI.Exception as e:
                if not self.buffer or e.Get_error_class() != MPI.ERR_TRUNCATE:
                    raise
                self.done = True    # the message is consumed (truncated): the communicator stays usable
                raise RuntimeError(f"recv: the message is larger than the buffer of {self.buffer}; send and recv "
                                   "need tensors of the same size and dtype") from None
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
        self.world_rank = (_joined_world[0] or _mpi().COMM_WORLD).Get_rank()
        self.timeout = timeout
        self.broken = None
        self.device = _device("cpu")
        self._intercomms: list = []     # joined(): the links to the other nodes, disconnected at shutdown

    @classmethod
    def world(cls, timeout: float) -> "MPIBackend":
        MPI = _mpi()
        atexit.register(_abort_at_exit)   # runs before mpi4py's MPI_Finalize
        return cls(MPI.COMM_WORLD, timeout)

    @classmethod
    def joined(cls, store, nnodes: int, node_rank: int, timeout: float) -> "MPIBackend":
        """One communicator over ``nnodes`` MPI worlds (one per node's ``mpiexec``), ranked
        ``node_rank * nproc + local rank``. Global rank 0 opens an MPI port; for k = 1 .. nnodes-1 in
        order it publishes the port name as ``mpi/port/<k>`` in ``store`` once nodes 0 .. k-1 are
        one communicator, which then accepts node k's connection (``Comm.Accept``), node k
        connecting with its own world (``Comm.Connect``), and the two merge, node k's ranks last.
        A node waits for its own key, so no connection reaches the port out of turn."""
        MPI = _mpi()
        atexit.register(_abort_at_exit)
        local = MPI.COMM_WORLD
        nproc = local.Get_size()
        inters = []
        if node_rank == 0:
            port = MPI.Open_port() if local.Get_rank() == 0 else None
            comm = local
            for k in range(1, nnodes):
                if comm.Get_rank() == 0:
                    store.set(f"mpi/port/{k}", port)
                inter = comm.Accept(port, root=0)
                merged = inter.Merge(high=False)
                inters.append(inter)
                if comm is not local:
                    inters.append(comm)
                comm = merged
            if local.Get_rank() == 0:
                MPI.Close_port(port)
        else:
            port = store.get(f"mpi/port/{node_rank}").decode() if local.Get_rank() == 0 else None
            inter = local.Connect(port, root=0)
            comm = inter.Merge(high=True)
            inters.append(inter)
            for k in range(node_rank + 1, nnodes):     # the later nodes join the merged communicator
                inter = comm.Accept(None, root=0)
                merged = inter.Merge(high=False)
                inters += [inter, comm]
                comm = merged
        want = node_rank * nproc + local.Get_rank()
        if comm.Get_rank() != want or comm.Get_size() != nnodes * nproc:
            raise DistBackendError(f"MPI join of {nnodes} nodes: this process (node {node_rank}, local rank "
                                   f"{local.Get_rank()}) got rank {comm.Get_rank()} of {comm.Get_size()}, expected "
                                   f"{want} of {nnodes * nproc} (every node needs the same --nproc-per-node)")
        _joined_world[0] = comm
        b = cls(comm, timeout)
        b._intercomms = inters
        return b

    def _work(self, req, what, finalize=None, keep=()):
        w = _MPIWork(self, [req] if not isinstance(req, list) else req, what, finalize, keep)
        return w

    def _float32_dst(self, t, op):
        """A float32 copy of 16-bit ``t`` to reduce into, and the finalize that averages it (AVG)
        and rounds it back into ``t`` once: (array, finalize, tensors to keep alive)."""
        tmp, arr = _float32_copy(t)

        def fin():
            if int(op) == 4:
                _avg(arr, self.size)
            t._impl.copy_(tmp._impl, False)
        return arr, fin, (tmp,)

    # reduction buffers: (array to reduce in place, finalize) for dtype/op
    def _reduce_buf(self, t, op):
        name = t.dtype.name
        if name in ("float16", "bfloat16"):
            arr, fin, keep = self._float32_dst(t, op)
            return arr, _op(op), fin, keep
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
            src_t, src = _float32_copy(inp)
            keep_in = (src_t,)
        else:
            src, keep_in = (_raw(inp).view(np.uint8) if inp.dtype.name == "bool" else _raw(inp)), ()
        if out.dtype.name in ("float16", "bfloat16"):
            dst, fin, keep = self._float32_dst(out, op)
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
        buffer = f"{t.dtype.name} {list(t.shape)} ({arr.nbytes} bytes)"
        return _MPIWork(self, [req], "recv", None, (t, arr), status=st, buffer=buffer, nbytes=arr.nbytes)

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
        if self.broken is not None:
            return
        if self.comm is _joined_world[0]:
            # disconnect (not free) every link between the nodes, so that MPI_Finalize at exit
            # does not wait for the other nodes' processes
            for c in [self.comm] + self._intercomms[::-1]:
                try:
                    c.Disconnect()
                except Exception:
                    pass
            self._intercomms = []
            _joined_world[0] = None
        elif self.comm != MPI.COMM_WORLD and self.comm != MPI.COMM_NULL:
            try:
                self.comm.Free()
            except Exception:
                pass
