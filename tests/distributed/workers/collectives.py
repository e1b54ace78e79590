"""Every collective and reduce op against numpy, on CPU (mpi) or GPU (nccl, argv[1] == 'cuda')."""
import faulthandler
import os

import numpy as np

import tinytorch as tt
import tinytorch.distributed as dist
from tinytorch.distributed import ReduceOp

from _worker_setup import init_worker

faulthandler.dump_traceback_later(100, exit=True)   # a hang shows where, well inside the test's timeout
device, dev, rank, ws = init_worker()
assert dist.is_initialized() and dist.get_backend() == ("nccl" if device == "cuda" else "mpi")


def val(r, shape=(3, 4), dtype="float32"):
    rng = np.random.default_rng(100 + r)
    if dtype in ("int32", "int64", "uint8"):
        return rng.integers(1, 5, shape).astype(dtype)
    return rng.uniform(0.5, 2.0, shape).astype(np.float64)


def T(a, dtype="float32"):
    return tt.tensor(a, dtype=getattr(tt, dtype), device=dev)


def close(t, ref, dtype, what):
    got = t.cpu().double().numpy() if t.dtype.is_floating_point else t.cpu().numpy()
    tol = {"float32": 1e-5, "float64": 1e-12, "float16": 4e-3, "bfloat16": 3e-2}.get(dtype, 0)
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol, err_msg=f"rank {rank}: {what}")


def rounded(a, dtype):
    return tt.tensor(a, dtype=getattr(tt, dtype)).double().numpy() if dtype not in ("int32", "int64", "uint8") else a


dtypes = ["float32", "float64", "float16", "bfloat16", "int32", "int64"]
for dtype in dtypes:
    vals = [rounded(val(r, dtype=dtype), dtype) for r in range(ws)]
    refs = {ReduceOp.SUM: sum(vals), ReduceOp.PRODUCT: np.prod(vals, axis=0), ReduceOp.MAX: np.max(vals, axis=0),
            ReduceOp.MIN: np.min(vals, axis=0)}
    refs[ReduceOp.AVG] = sum(vals) / ws if dtype.startswith(("float", "bfloat")) else sum(vals) // ws
    for op, ref in refs.items():
        t = T(vals[rank], dtype)
        dist.all_reduce(t, op=op)
        close(t, ref, dtype, f"all_reduce {op.name} {dtype}")
        t = T(vals[rank], dtype)
        w = dist.all_reduce(t, op=op, async_op=True)
        assert w.wait() and w.is_completed()
        close(t, ref, dtype, f"async all_reduce {op.name} {dtype}")
        t = T(vals[rank], dtype)
        dist.reduce(t, dst=ws - 1, op=op)
        close(t, ref if rank == ws - 1 else vals[rank], dtype, f"reduce {op.name} {dtype}")
        # reduce_scatter_tensor: input (ws*2, 4) -> output (2, 4)
        big = [rounded(val(r, (ws * 2, 4), dtype), dtype) for r in range(ws)]
        bref = {ReduceOp.SUM: sum(big), ReduceOp.PRODUCT: np.prod(big, axis=0), ReduceOp.MAX: np.max(big, axis=0),
                ReduceOp.MIN: np.min(big, axis=0)}
        bref[ReduceOp.AVG] = sum(big) / ws if dtype.startswith(("float", "bfloat")) else sum(big) // ws
        out = T(np.zeros((2, 4)), dtype)
        w = dist.reduce_scatter_tensor(out, T(big[rank], dtype), op=op, async_op=True)
        w.wait()
        close(out, bref[op][rank * 2:rank * 2 + 2], dtype, f"reduce_scatter {op.name} {dtype}")
    # broadcast from the last rank
    t = T(vals[rank], dtype)
    dist.broadcast(t, src=ws - 1)
    close(t, vals[ws - 1], dtype, f"broadcast {dtype}")
    # all_gather (list) and all_gather_into_tensor
    outs = [T(np.zeros((3, 4)), dtype) for _ in range(ws)]
    dist.all_gather(outs, T(vals[rank], dtype))
    for r in range(ws):
        close(outs[r], vals[r], dtype, f"all_gather {dtype}")
    out = T(np.zeros((ws * 3, 4)), dtype)
    w = dist.all_gather_into_tensor(out, T(vals[rank], dtype), async_op=True)
    w.wait()
    close(out, np.concatenate(vals), dtype, f"all_gather_into_tensor {dtype}")

# send / recv in a ring
for dtype in ("float32", "bfloat16"):
    t = T(val(rank), dtype)
    got = T(np.zeros((3, 4)), dtype)
    nxt, prv = (rank + 1) % ws, (rank - 1) % ws
    if rank % 2 == 0:
        dist.send(t, nxt)
        src = dist.recv(got, prv)
    else:
        w = dist.irecv(got, prv)
        dist.isend(t, nxt).wait()
        w.wait()
        src = prv
    assert src == prv
    close(got, rounded(val(prv), dtype), dtype, f"send/recv {dtype}")

# objects (JSON), barrier
objs = [None] * ws
dist.all_gather_object(objs, {"rank": rank, "name": f"r{rank}", "x": [1.5, None]})
assert objs == [{"rank": r, "name": f"r{r}", "x": [1.5, None]} for r in range(ws)], objs
lst = [rank, "hello", {"k": [1, 2]}] if rank == 0 else [None, None, None]
dist.broadcast_object_list(lst, src=0)
assert lst == [0, "hello", {"k": [1, 2]}], lst
try:
    dist.all_gather_object(objs, object())
    raise AssertionError("expected TypeError")
except TypeError as e:
    assert "JSON" in str(e)
dist.barrier()

# subgroups
g = dist.new_group([0, ws - 1])
if rank in (0, ws - 1):
    t = T(np.full((2,), float(rank)))
    dist.all_reduce(t, group=g)
    close(t, np.full((2,), float(ws - 1)), "float32", "subgroup all_reduce")
    assert dist.get_world_size(g) == 2 and dist.get_rank(g) == (0 if rank == 0 else 1)
else:
    assert g is dist.GroupMember.NON_GROUP_MEMBER

# Each rank touches only its own GPU: no thread of ours (the NCCL watchdog) creates a context on
# another one (it would stall this rank and take that GPU's memory). Let the watchdog poll first.
if device == "cuda":
    import ctypes
    import time
    dist.all_reduce(T(np.ones(4)))
    time.sleep(0.35)
    cu = ctypes.CDLL("libcuda.so.1")
    n = ctypes.c_int()
    assert cu.cuDeviceGetCount(ctypes.byref(n)) == 0
    for i in range(n.value):
        d, flags, active = ctypes.c_int(), ctypes.c_uint(), ctypes.c_int()
        assert cu.cuDeviceGet(ctypes.byref(d), i) == 0
        assert cu.cuDevicePrimaryCtxGetState(d, ctypes.byref(flags), ctypes.byref(active)) == 0
        assert bool(active.value) == (i == dev.index), f"rank {rank} (cuda:{dev.index}) has a context on GPU {i}"

# errors: wrong device, shapes differing across ranks (checked on first use of reduce via a new op name)
try:
    dist.all_reduce(tt.zeros(2, device="cpu") if device == "cuda" else tt.zeros(2, 3).T)
    raise AssertionError("expected a device/contiguity error")
except ValueError as e:
    assert ("CUDA tensors" in str(e)) if device == "cuda" else ("contiguous" in str(e)), e
g2 = dist.new_group(list(range(ws)))
try:
    dist.all_reduce(T(np.zeros((rank + 1, 2))), group=g2)
    raise AssertionError("expected a shape mismatch error")
except ValueError as e:
    assert "differ across ranks" in str(e) and "rank 1 has" in str(e), e
# the fingerprint is checked on every call (MPI; NCCL with TINYTORCH_DISTRIBUTED_DEBUG=INFO), not just
# the first: after a matching all_reduce, a mismatched one on the same group is still caught
if device == "cpu" or os.environ.get("TINYTORCH_DISTRIBUTED_DEBUG", "").upper() in ("INFO", "DETAIL"):
    dist.all_reduce(T(np.zeros(3)), group=g2)
    try:
        dist.all_reduce(T(np.zeros(3 + rank)), group=g2)
        raise AssertionError("expected a per-call shape mismatch error")
    except ValueError as e:
        assert "differ across ranks" in str(e), e
assert g2.timeout == dist.GroupMember.WORLD.timeout
# ranks that pass new_group different lists are told so on every rank (not paired wrongly or hung)
try:
    dist.new_group([0, 1] if rank == 0 else [0, ws - 1] if ws > 2 else [1])
    raise AssertionError("expected a new_group mismatch error")
except ValueError as e:
    assert "new_group: every rank must pass the same ranks" in str(e) and "rank 0 passed [0, 1]" in str(e), e
# a recv into a buffer of another size than what was sent (MPI: the message is consumed, the group usable)
if device == "cpu":
    for sent, buf, why in ((8, 4, "larger than the buffer of float32 [4] (16 bytes)"),
                           (4, 8, "sent 16 bytes into a buffer of float32 [8] (32 bytes)")):
        if rank == 0:
            dist.send(T(np.arange(sent)), 1)
        elif rank == 1:
            try:
                dist.recv(T(np.zeros(buf)), 0)
                raise AssertionError("expected a recv size error")
            except RuntimeError as e:
                assert why in str(e) and "same size and dtype" in str(e), e
    dist.barrier()
dist.barrier()
dist.destroy_process_group(g2)          # one group alone; using it afterwards is an error
try:
    dist.all_reduce(T(np.zeros(2)), group=g2)
    raise AssertionError("expected an error for a destroyed group")
except ValueError as e:
    assert "destroyed" in str(e), e
dist.destroy_process_group()            # the default group and every group left with it
assert not dist.is_initialized()
print(f"rank {rank}: collectives OK", flush=True)
