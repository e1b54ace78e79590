"""Workers of the multi-node launcher tests (two launchers on this machine, loopback only).

argv[1]:
* ``collectives``: mpi; every collective over the world joined from the nodes' MPI worlds against
  numpy, and subgroups whose ranks sit on both nodes.
* ``store``: any backend; the env:// rendezvous through the launchers' store (no process group):
  ranks, WORLD_SIZE and every rank's environment as the others see it.
* ``fail_once``: rank ``argv[2]`` exits 7 on the first attempt (TINYTORCH_RESTART_COUNT 0) while
  the others wait for it; every rank of a later attempt succeeds.
* ``hang``: joins, then runs until stopped (all_reduce every 50 ms with mpi).
With TT_TEST_PID_DIR set each worker writes its pid there (the tests check none survives)."""
import json
import os
import sys
import time
from datetime import timedelta

import numpy as np

mode = sys.argv[1]
env = {k: os.environ.get(k) for k in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK",
                                      "NODE_RANK", "TINYTORCH_RESTART_COUNT", "TINYTORCH_RUN_ID")}
rank, ws = int(env["RANK"]), int(env["WORLD_SIZE"])
attempt = int(env["TINYTORCH_RESTART_COUNT"])
if os.environ.get("TT_TEST_PID_DIR"):
    with open(os.path.join(os.environ["TT_TEST_PID_DIR"], f"{attempt}-{rank}-{os.getpid()}.pid"), "w") as f:
        f.write(str(os.getpid()))


def store_rendezvous():
    """The env:// rendezvous of init_process_group, without a backend (the nccl path's first half)."""
    from tinytorch.distributed.process_group import _rendezvous_store, _store_rendezvous
    store, r, n = _rendezvous_store("env://", -1, -1, 30.0)
    assert (r, n) == (rank, ws), (r, n, rank, ws)
    _store_rendezvous(store, r, n, 30.0)
    return store


def mpi_group():
    import tinytorch.distributed as dist
    dist.init_process_group("mpi", timeout=timedelta(seconds=30))
    assert (dist.get_rank(), dist.get_world_size()) == (rank, ws), (dist.get_rank(), dist.get_world_size(), env)
    return dist


if mode == "collectives":
    import tinytorch as tt
    dist = mpi_group()
    from tinytorch.distributed import ReduceOp

    def val(r, shape=(3, 4)):
        return np.random.default_rng(100 + r).uniform(0.5, 2.0, shape)

    vals = [val(r) for r in range(ws)]
    for dtype, tol in (("float64", 1e-12), ("float32", 1e-5)):
        for op, ref in ((ReduceOp.SUM, sum(vals)), (ReduceOp.MAX, np.max(vals, axis=0)),
                        (ReduceOp.AVG, sum(vals) / ws)):
            t = tt.tensor(vals[rank], dtype=getattr(tt, dtype))
            dist.all_reduce(t, op=op)
            np.testing.assert_allclose(t.double().numpy(), ref, rtol=tol, atol=tol, err_msg=f"all_reduce {op.name}")
    t = tt.tensor(np.full(5, rank), dtype=tt.int64)
    dist.all_reduce(t)
    assert t.tolist() == [ws * (ws - 1) // 2] * 5, t
    t = tt.tensor(vals[rank])
    dist.broadcast(t, src=ws - 1)                     # from the last rank, on the other node
    np.testing.assert_array_equal(t.numpy(), vals[ws - 1])
    out = tt.zeros(ws * 3, 4, dtype=tt.float64)
    dist.all_gather_into_tensor(out, tt.tensor(vals[rank]))
    np.testing.assert_array_equal(out.numpy(), np.concatenate(vals))
    big = [val(r, (ws * 2, 4)) for r in range(ws)]
    out = tt.zeros(2, 4, dtype=tt.float64)
    dist.reduce_scatter_tensor(out, tt.tensor(big[rank]))
    np.testing.assert_allclose(out.numpy(), sum(big)[rank * 2:rank * 2 + 2], rtol=1e-12)
    t = tt.tensor(vals[rank])
    dist.reduce(t, dst=0)
    if rank == 0:
        np.testing.assert_allclose(t.numpy(), sum(vals), rtol=1e-12)
    # a ring of send/recv: every message from rank ws/2 - 1 on crosses to the other node
    got = tt.zeros(3, 4, dtype=tt.float64)
    nxt, prv = (rank + 1) % ws, (rank - 1) % ws
    if rank % 2 == 0:
        dist.send(tt.tensor(vals[rank]), nxt)
        dist.recv(got, prv)
    else:
        w = dist.irecv(got, prv)
        dist.isend(tt.tensor(vals[rank]), nxt).wait()
        w.wait()
    np.testing.assert_array_equal(got.numpy(), vals[prv])
    objs = [None] * ws
    dist.all_gather_object(objs, {"rank": rank, "node": env["GROUP_RANK"]})
    nproc = int(env["LOCAL_WORLD_SIZE"])
    assert objs == [{"rank": r, "node": str(r // nproc)} for r in range(ws)], objs
    # subgroups with members on both nodes: the last rank of node 0 and the first of node 1, and
    # the first rank of each node
    for members in ([nproc - 1, nproc], [0, nproc]):
        g = dist.new_group(members)
        if rank in members:
            t = tt.tensor(np.full(4, float(rank + 1)))
            dist.all_reduce(t, group=g)
            assert t.tolist() == [float(sum(m + 1 for m in members))] * 4, (members, t)
            t = tt.tensor(np.full(2, float(rank)))
            dist.broadcast(t, src=members[1], group=g)
            assert t.tolist() == [float(members[1])] * 2, (members, t)
            assert dist.get_world_size(g) == 2 and dist.get_rank(g) == members.index(rank)
        else:
            assert g is dist.GroupMember.NON_GROUP_MEMBER
    dist.barrier()
    dist.destroy_process_group()
    print(f"rank {rank}: multinode collectives OK", flush=True)
elif mode == "store":
    store = store_rendezvous()
    store.set(f"env/{rank}", json.dumps(env))
    store.wait([f"env/{r}" for r in range(ws)], timedelta(seconds=30))
    if rank == 0:
        envs = [json.loads(store.get(f"env/{r}")) for r in range(ws)]
        print("ENVS " + json.dumps(envs), flush=True)
    store.add("finished", 1)
    while int(store.add("finished", 0)) < ws:   # rank 0's reads done before anyone leaves
        time.sleep(0.01)
    print(f"rank {rank}: store OK", flush=True)
elif mode == "fail_once":
    backend = os.environ.get("TINYTORCH_BACKEND")
    if backend == "mpi":
        import tinytorch as tt
        dist = mpi_group()
        t = tt.ones(3)
        dist.all_reduce(t)
    else:
        store = store_rendezvous()
    if attempt == 0 and rank == int(sys.argv[2]):
        print(f"rank {rank}: failing on attempt {attempt}", flush=True)
        sys.exit(7)
    if backend == "mpi":
        time.sleep(0.5)
        t = tt.ones(3)
        dist.all_reduce(t)                     # on attempt 0 this waits for the rank that failed
        assert t.tolist() == [float(ws)] * 3, t
        dist.destroy_process_group()
    else:
        store.add("alive", 1)
        while int(store.add("alive", 0)) < ws:
            time.sleep(0.05)
    print(f"rank {rank}: attempt {attempt} OK", flush=True)
elif mode == "hang":
    if os.environ.get("TINYTORCH_BACKEND") == "mpi":
        import tinytorch as tt
        dist = mpi_group()
        print(f"rank {rank}: joined", flush=True)
        while True:
            dist.all_reduce(tt.ones(2))
            time.sleep(0.05)
    else:
        store_rendezvous()
        print(f"rank {rank}: joined", flush=True)
        while True:
            time.sleep(0.05)
else:
    raise SystemExit(f"unknown mode {mode!r}")
