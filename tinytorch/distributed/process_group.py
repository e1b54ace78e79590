"""Process groups: the default group and subgroups, their initialization (rendezvous through a
store for NCCL, the MPI world for MPI) and queries (torch.distributed's names and semantics).

Backends: ``"mpi"`` (CPU tensors, through mpi4py; see ``_mpi.py``) and ``"nccl"`` (CUDA tensors,
through the NCCL bindings in ``tinytorch._cuda``; see ``_nccl.py``). How each forms its world:

* mpi: the MPI world itself (``MPI.COMM_WORLD``), so processes must be started by ``mpiexec``
  (directly, or by ``tinytorch.distributed.run --backend mpi``, which runs ``mpiexec`` for you).
  ``RANK``/``WORLD_SIZE`` (env or arguments), when present, are checked against MPI's. No store,
  except for a multi-node job of the launcher (``TINYTORCH_NNODES`` > 1): each node's ``mpiexec``
  makes its own MPI world, and these are joined into one communicator with MPI's dynamic-process
  API, the port name passed through the launchers' store (``_mpi.MPIBackend.joined``).
* nccl: a store (``env://``, ``tcp://``, ``file://`` or ``store=``) for rendezvous; rank 0 makes
  an NCCL unique id and publishes it through the store; every rank builds its communicator.

In a multi-node job of the launcher the store at ``MASTER_ADDR:MASTER_PORT`` is served by node
0's launcher (torchrun's agent store, ``TORCHELASTIC_USE_AGENT_STORE=True``): every rank is a
client, and the keys of each restart live under their own prefix (``worker/attempt_<n>``).

The collectives over these groups are in ``collectives.py``.
"""
from __future__ import annotations

import hashlib
import os
import sys
import uuid
from datetime import timedelta
from typing import Any, Optional
from urllib.parse import urlparse

from tinytorch._core.cuda_loader import cuda_backend
from tinytorch.cuda import is_available as _cuda_is_available
from tinytorch.distributed.store import (DEFAULT_TIMEOUT, DistStoreError, FileStore, PrefixStore, Store,
                                         TCPStore)

VALID_BACKENDS = ("mpi", "nccl")
DEFAULT_NCCL_TIMEOUT = timedelta(minutes=10)


class Backend:
    """Backend names: ``Backend.MPI``, ``Backend.NCCL``; ``Backend("NCCL") -> "nccl"``."""
    MPI = "mpi"
    NCCL = "nccl"
    UNDEFINED = "undefined"

    def __new__(cls, name: str):
        n = str(name).lower()
        if n not in VALID_BACKENDS:
            raise ValueError(f"Invalid backend: '{name}'. tinytorch.distributed supports: "
                             f"{', '.join(VALID_BACKENDS)} (gloo is not implemented: use 'mpi' for CPU tensors)")
        return n


class ProcessGroup:
    """A group of ranks with a backend. ``rank()``/``size()`` are ranks within the group."""

    def __init__(self, backend: str, rank: int, size: int, ranks: list[int], impl, timeout: float,
                 name: str) -> None:
        self._backend_name = backend
        self._rank = rank
        self._size = size
        self._ranks = ranks          # global ranks of the members, by group rank
        self._impl = impl
        self._timeout = timeout
        self.group_name = name
        self._checked: set = set()

    def rank(self) -> int:
        return self._rank

    def size(self) -> int:
        return self._size

    def name(self) -> str:
        return self._backend_name

    @property
    def timeout(self) -> timedelta:
        """How long a collective of this group may take before it is aborted with an error
        (init_process_group(timeout=) / new_group(timeout=))."""
        return timedelta(seconds=self._timeout)

    def __repr__(self) -> str:
        return f"ProcessGroup({self._backend_name}, rank={self._rank}, size={self._size}, ranks={self._ranks})"


class GroupMember:
    WORLD: Optional[ProcessGroup] = None
    NON_GROUP_MEMBER = object()


group = GroupMember   # dist.group.WORLD

_world: dict[str, Any] = {"pg": None, "store": None, "groups": 0, "debug": None, "subgroups": []}


# ---------------------------------------------------------------------------- queries
def is_available() -> bool:
    """True: the package is present (backends are checked at init_process_group)."""
    return True


def is_mpi_available() -> bool:
    try:
        import mpi4py  # noqa: F401
        return True
    except ImportError:
        return False


def is_nccl_available() -> bool:
    try:
        b = cuda_backend()
        return b is not None and hasattr(b, "NcclComm")
    except Exception:
        return False


def is_initialized() -> bool:
    return _world["pg"] is not None


def is_torchelastic_launched() -> bool:
    return "TINYTORCH_RUN_ID" in os.environ


def _pg(group_: Optional[ProcessGroup]) -> ProcessGroup:
    if _world["pg"] is None:
        raise RuntimeError("Default process group has not been initialized, please make sure to call "
                           "init_process_group.")
    if group_ is None or group_ is GroupMember.WORLD:
        return _world["pg"]
    if group_ is GroupMember.NON_GROUP_MEMBER:
        raise ValueError("this rank is not a member of the group")
    if group_ not in _world["subgroups"]:
        raise ValueError(f"{group_} was destroyed (destroy_process_group)")
    return group_


def get_rank(group: Optional[ProcessGroup] = None) -> int:
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return _pg(group).rank()


def get_world_size(group: Optional[ProcessGroup] = None) -> int:
    if group is GroupMember.NON_GROUP_MEMBER:
        return -1
    return _pg(group).size()


def get_backend(group: Optional[ProcessGroup] = None) -> str:
    return _pg(group).name()


def get_process_group_ranks(group: ProcessGroup) -> list[int]:
    return list(_pg(group)._ranks)


def get_global_rank(group: ProcessGroup, group_rank: int) -> int:
    return _pg(group)._ranks[group_rank]


def get_group_rank(group: ProcessGroup, global_rank: int) -> int:
    pg = _pg(group)
    if global_rank not in pg._ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {pg}")
    return pg._ranks.index(global_rank)


# ---------------------------------------------------------------------------- init
def _env_int(name: str) -> Optional[int]:
    v = os.environ.get(name)
    return int(v) if v not in (None, "") else None


def _agent_store(timeout: float) -> Optional[Store]:
    """The launcher's store (multi-node jobs: node 0's launcher serves it at MASTER_ADDR:MASTER_PORT),
    as a client under this restart's prefix; None when the launcher did not say it serves one."""
    if os.environ.get("TORCHELASTIC_USE_AGENT_STORE") != "True" or not os.environ.get("MASTER_PORT"):
        return None
    client = TCPStore(os.environ.get("MASTER_ADDR", "127.0.0.1"), int(os.environ["MASTER_PORT"]), None,
                      is_master=False, timeout=timedelta(seconds=timeout), wait_for_workers=False)
    return PrefixStore(f"worker/attempt_{os.environ.get('TINYTORCH_RESTART_COUNT', '0')}", client)


def _rendezvous_store(init_method: str, rank: int, world_size: int, timeout: float) -> tuple[Store, int, int]:
    """Creates the store for ``init_method``; returns (store, rank, world_size)."""
    url = urlparse(init_method)
    if url.scheme == "env":
        need = ["MASTER_ADDR", "MASTER_PORT"] + (["RANK"] if rank < 0 else []) + (["WORLD_SIZE"] if world_size < 0 else [])
        missing = [n for n in need if not os.environ.get(n)]
        if missing:
            raise ValueError("Error initializing tinytorch.distributed using env:// rendezvous: environment "
                             f"variable(s) {', '.join(missing)} expected, but not set (start the script with "
                             "`python -m tinytorch.distributed.run`, or set them, or pass rank=/world_size=)")
        host, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
        rank = rank if rank >= 0 else int(os.environ["RANK"])
        world_size = world_size if world_size >= 0 else int(os.environ["WORLD_SIZE"])
    elif url.scheme == "tcp":
        if not url.hostname or not url.port:
            raise ValueError(f"tcp:// init_method needs host and port: tcp://HOST:PORT, got {init_method!r}")
        host, port = url.hostname, url.port
        rank = rank if rank >= 0 else (_env_int("RANK") if _env_int("RANK") is not None else -1)
        world_size = world_size if world_size >= 0 else (_env_int("WORLD_SIZE") or -1)
    elif url.scheme == "file":
        path = url.path if not url.netloc else url.netloc + url.path
        rank = rank if rank >= 0 else (_env_int("RANK") if _env_int("RANK") is not None else -1)
        world_size = world_size if world_size >= 0 else (_env_int("WORLD_SIZE") or -1)
        if rank < 0 or world_size < 1:
            raise ValueError("file:// init_method needs rank= and world_size= (or RANK and WORLD_SIZE)")
        return FileStore(path, world_size, timedelta(seconds=timeout)), rank, world_size
    else:
        raise ValueError(f"unsupported init_method {init_method!r}: use env://, tcp://HOST:PORT or file://PATH")
    if rank < 0 or world_size < 1:
        raise ValueError(f"{url.scheme}:// init_method needs rank= and world_size= (or RANK and WORLD_SIZE)")
    if not 0 <= rank < world_size:
        raise ValueError(f"invalid rank {rank} for world_size {world_size}")
    agent = _agent_store(timeout) if url.scheme == "env" else None
    if agent is not None:
        return agent, rank, world_size
    store = TCPStore(host, port, world_size, is_master=(rank == 0), timeout=timedelta(seconds=timeout),
                     wait_for_workers=False)
    return store, rank, world_size


def _store_rendezvous(store: Store, rank: int, world_size: int, timeout: float) -> None:
    """Checks that every rank agrees on the world size and each rank joined once; waits for all."""
    if rank == 0:
        store.set("rdzv/world_size", str(world_size))
    ws = int(store.get("rdzv/world_size"))
    if ws != world_size:
        raise ValueError(f"mismatched world sizes: this process (rank {rank}) has world_size={world_size} "
                         f"but rank 0 has world_size={ws}")
    if not 0 <= rank < world_size:
        raise ValueError(f"invalid rank {rank} for world_size {world_size}")
    token = uuid.uuid4().hex
    got = store.compare_set(f"rdzv/rank/{rank}", "", token)
    if got != token.encode():
        raise ValueError(f"rank {rank} joined the rendezvous twice (two processes have RANK={rank})")
    try:
        store.wait([f"rdzv/rank/{r}" for r in range(world_size)], timedelta(seconds=timeout))
    except DistStoreError as e:
        raise DistStoreError(f"rendezvous: not every rank joined within {timeout:g} s (missing keys "
                             f"rdzv/rank/<r> are the ranks that did not arrive): {e}") from None


def init_process_group(backend: Optional[str] = None, init_method: Optional[str] = None,
                       timeout: Optional[timedelta] = None, world_size: int = -1, rank: int = -1,
                       store: Optional[Store] = None, group_name: str = "", pg_options=None,
                       device_id=None) -> None:
    """Initializes the default process group (as torch.distributed.init_process_group)."""
    if _world["pg"] is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if backend is None:
        backend = os.environ.get("TINYTORCH_BACKEND") or ("nccl" if _cuda_available() else "mpi")
    backend = Backend(backend)
    if timeout is None:
        timeout = DEFAULT_NCCL_TIMEOUT if backend == "nccl" else DEFAULT_TIMEOUT
    secs = timeout.total_seconds() if isinstance(timeout, timedelta) else float(timeout)
    if backend == "mpi":
        from tinytorch.distributed._mpi import MPIBackend  # the chosen backend loads (mpi4py) on first use
        if store is not None or init_method not in (None, "env://") or "MASTER_ADDR" in os.environ:
            # Rendezvous information is only checked against MPI's world (see the module docstring).
            pass
        nnodes = _env_int("TINYTORCH_NNODES") or 1
        if nnodes > 1:
            # several nodes' mpiexec worlds, joined through the launcher's store
            agent = _agent_store(secs)
            if agent is None:
                raise ValueError("TINYTORCH_NNODES > 1 needs the store of tinytorch.distributed.run's multi-node "
                                 "job (TORCHELASTIC_USE_AGENT_STORE, MASTER_ADDR, MASTER_PORT)")
            impl = MPIBackend.joined(agent, nnodes, _env_int("GROUP_RANK") or 0, secs)
            store = agent if store is None else store
        else:
            impl = MPIBackend.world(secs)
        mrank, msize = impl.rank, impl.size
        env_rank, env_size = _env_int("RANK"), _env_int("WORLD_SIZE")
        want_rank = rank if rank >= 0 else env_rank
        want_size = world_size if world_size >= 0 else env_size
        if want_size is not None and want_size != msize:
            raise ValueError(f"mismatched world sizes: WORLD_SIZE/world_size={want_size} but the MPI world has "
                             f"{msize} process(es); start the processes with `mpiexec -n {want_size}` or "
                             "`python -m tinytorch.distributed.run --backend mpi`")
        if want_rank is not None and want_rank != mrank:
            raise ValueError(f"RANK/rank={want_rank} does not match this process's MPI rank {mrank}")
        pg = ProcessGroup("mpi", mrank, msize, list(range(msize)), impl, secs, "0")
        _world["store"] = store
    else:
        if store is None:
            if init_method is None:
                init_method = "env://"
            store, rank, world_size = _rendezvous_store(init_method, rank, world_size, secs)
        elif rank < 0 or world_size < 1:
            raise ValueError("init_process_group with store= needs rank= and world_size=")
        _store_rendezvous(store, rank, world_size, secs)
        from tinytorch.distributed._nccl import NCCLBackend  # the chosen backend loads on first use
        impl = NCCLBackend(PrefixStore("pg0", store), rank, world_size, secs, device_id)
        pg = ProcessGroup("nccl", rank, world_size, list(range(world_size)), impl, secs, "0")
        _world["store"] = store
    if pg.rank() == 0:      # the limit a hung collective runs into, said once, where it can be read
        print(f"tinytorch.distributed: {backend} backend, world size {pg.size()}, collective timeout "
              f"{secs:g} s (init_process_group(timeout=) and new_group(timeout=) set it; cross-rank shape/dtype "
              f"check {'on every call' if backend == 'mpi' else 'on first use of each collective'}"
              f"{'' if backend == 'mpi' else ', every call with TINYTORCH_DISTRIBUTED_DEBUG=INFO'})",
              file=sys.stderr, flush=True)
    _world["pg"] = pg
    _world["groups"] = 0
    _world["subgroups"] = []
    GroupMember.WORLD = pg


def _cuda_available() -> bool:
    try:
        return _cuda_is_available()
    except Exception:
        return False


_serving_until_exit: list = []   # master stores of destroyed groups (their server process ends with us)


def destroy_process_group(group: Optional[ProcessGroup] = None) -> None:
    """Destroys a group (the default one and every group with it, when ``group`` is None)."""
    if group is GroupMember.NON_GROUP_MEMBER:
        return
    pg = _pg(group)
    if group is None or pg is _world["pg"]:
        for sub in _world["subgroups"]:   # as PyTorch: every group goes with the default one
            sub._impl.shutdown()
        _world["subgroups"] = []
        pg._impl.shutdown()
        st = _world["store"]
        _world.update(pg=None, store=None, groups=0)
        GroupMember.WORLD = None
        if isinstance(st, TCPStore) and st._server is None:
            st.close()
        elif isinstance(st, TCPStore):
            # rank 0 keeps serving the store until it exits: others may still be reading from it
            _serving_until_exit.append(st)
    else:
        if pg in _world["subgroups"]:
            _world["subgroups"].remove(pg)
            pg._impl.shutdown()


def _check_same_ranks(world: "ProcessGroup", ranks: list[int]) -> None:
    """Every rank must pass new_group the same ranks (otherwise the groups' collectives pair the wrong
    processes, or hang): the lists are compared across the default group first, by their length, a
    digest and their first ranks, and a difference raises on every rank, naming each rank's list."""
    digest = int.from_bytes(hashlib.blake2b(repr(ranks).encode(), digest_size=7).digest(), "little")
    shown = 16
    rows = world._impl.exchange_meta("new_group", [len(ranks), digest] + ranks[:shown])
    if any(r[:2] != rows[0][:2] for r in rows):
        def fmt(r):
            return str(r[2:2 + min(r[0], shown)])[:-1] + (", ...]" if r[0] > shown else "]")
        detail = ", ".join(f"rank {i} passed {fmt(r)}" for i, r in enumerate(rows))
        raise ValueError(f"new_group: every rank must pass the same ranks, in the same order of calls: {detail}")


def new_group(ranks: Optional[list[int]] = None, timeout: Optional[timedelta] = None, backend=None,
              pg_options=None, use_local_synchronization: bool = False):
    """Creates a group of ``ranks`` (every rank of the default group must call it, in the same order).
    Non-members get ``GroupMember.NON_GROUP_MEMBER``."""
    world = _pg(None)
    _world["groups"] += 1
    gid = _world["groups"]
    ranks = sorted(set(range(world.size()) if ranks is None else ranks))
    for r in ranks:
        if not 0 <= r < world.size():
            raise ValueError(f"new_group: rank {r} is out of range for world size {world.size()}")
    if backend is not None and Backend(backend) != world.name():
        raise ValueError(f"new_group: backend {backend} differs from the default group's {world.name()}")
    secs = world._timeout if timeout is None else timeout.total_seconds()
    me = world.rank()
    _check_same_ranks(world, ranks)
    impl = world._impl.new_group(ranks, gid, secs)
    if me not in ranks:
        return GroupMember.NON_GROUP_MEMBER
    pg = ProcessGroup(world.name(), ranks.index(me), len(ranks), ranks, impl, secs, str(gid))
    _world["subgroups"].append(pg)
    return pg


__all__ = ["Backend", "ProcessGroup", "GroupMember", "group", "is_available", "is_mpi_available",
           "is_nccl_available", "is_initialized", "is_torchelastic_launched", "init_process_group",
           "destroy_process_group", "new_group", "get_rank", "get_world_size", "get_backend",
           "get_process_group_ranks", "get_global_rank", "get_group_rank"]
