"""CUDA runtime: device queries, copies between devices, pinned memory, streams and events, the
caching allocator (stats, reuse, OOM), and device-mixing errors."""
import collections
import gc
import threading
import time

import numpy as np
import pytest

import tinytorch as tt
from support.numeric import FLOAT_DTYPES, to_numpy

pytestmark = pytest.mark.cuda

ALL_DTYPES = FLOAT_DTYPES + ["int64", "int32", "uint8", "bool"]


def test_device_queries():
    assert tt.cuda.is_available() and tt.cuda.device_count() >= 1
    assert isinstance(tt.cuda.get_device_name(0), str)
    assert tt.cuda.current_device() == 0
    free, total = tt.cuda.mem_get_info()
    assert 0 < free <= total


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_round_trip_every_dtype(dtype):
    rng = np.random.default_rng(0)
    arr = rng.integers(0, 2, (5, 7)) if dtype == "bool" else rng.integers(0, 100, (5, 7))
    x = tt.tensor(arr, dtype=getattr(tt, dtype))
    g = x.cuda()
    assert g.device == tt.device("cuda:0") and g.is_cuda and g.dtype == x.dtype
    np.testing.assert_array_equal(to_numpy(g.cpu()), to_numpy(x))


def test_non_contiguous_copies_both_ways():
    x = tt.arange(60.).reshape(3, 4, 5)
    g = x.permute(2, 0, 1).cuda()           # strided source
    np.testing.assert_array_equal(g.cpu().numpy(), x.permute(2, 0, 1).numpy())
    gt = tt.zeros(4, 3, device="cuda").t()  # strided destination on the GPU
    gt.copy_(tt.arange(12.).reshape(3, 4))
    np.testing.assert_array_equal(gt.cpu().numpy(), np.arange(12.).reshape(3, 4))
    h = tt.zeros(4, 3).t()
    h.copy_(gt)                             # strided destination on the host
    np.testing.assert_array_equal(h.numpy(), np.arange(12.).reshape(3, 4))
    c = tt.ones(3, dtype=tt.float16, device="cuda")
    c.copy_(tt.tensor([1.5, 2.5, 3.5], dtype=tt.float64))  # cast while copying
    np.testing.assert_array_equal(c.cpu().float().numpy(), [1.5, 2.5, 3.5])


def test_pinned_memory_and_non_blocking():
    x = tt.arange(1 << 20, dtype=tt.float32)
    p = x.pin_memory()
    assert p.is_pinned() and not x.is_pinned()
    g = p.to("cuda", non_blocking=True)
    back = tt.empty(1 << 20).pin_memory()
    back.copy_(g, non_blocking=True)
    tt.cuda.synchronize()
    np.testing.assert_array_equal(back.numpy(), x.numpy())


def test_pinned_blocks_are_cached_and_reused():
    a = tt.empty(1000).pin_memory()
    ptr = a.data_ptr()
    del a
    b = tt.empty(900).pin_memory()             # the same size class (4 KiB): the cached block
    assert b.data_ptr() == ptr and b.is_pinned()


def test_pinned_block_is_not_reused_while_an_async_copy_reads_it():
    n = 1 << 24
    src = tt.full((n,), 1.0).pin_memory()
    ptr = src.data_ptr()
    a = tt.randn(2048, 2048, device="cuda")
    b = a
    for _ in range(100):                       # tens of ms of GEMMs ahead of the copy on the stream
        b = (a @ b) * 1e-3
    g = src.to("cuda", non_blocking=True)
    del src                                    # freed while the copy has not run yet
    other = tt.full((n,), 2.0).pin_memory()
    assert other.data_ptr() != ptr, "a pinned block was handed out again before its copy ran"
    assert g.sum().item() == n
    other_ptr = other.data_ptr()
    del other
    again = tt.empty(n).pin_memory()           # a cached block: no new cudaHostAlloc
    assert again.data_ptr() in (ptr, other_ptr)
    del again
    c, d = tt.empty(n).pin_memory(), tt.empty(n).pin_memory()
    assert {c.data_ptr(), d.data_ptr()} == {ptr, other_ptr}, "the block the copy read was never reused"


_Pair = collections.namedtuple("_Pair", "x y")      # module level: worker processes pickle it


class _Records:
    """Samples as a dict holding a namedtuple, a tensor and a string (nested, as real datasets)."""
    Pair = _Pair

    def __len__(self):
        return 10

    def __getitem__(self, i):
        return {"pair": self.Pair(tt.full((3,), float(i)), tt.tensor(i)), "img": tt.ones(2, 2) * i, "id": f"s{i}"}


@pytest.mark.parametrize("num_workers", [0, 2])
def test_dataloader_pin_memory_pins_every_tensor(num_workers):
    from tinytorch.utils.data import DataLoader
    plain = list(DataLoader(_Records(), batch_size=4, num_workers=num_workers))
    pinned = list(DataLoader(_Records(), batch_size=4, num_workers=num_workers, pin_memory=True))
    assert len(pinned) == len(plain) == 3
    for p, q in zip(pinned, plain):
        tensors = [p["pair"].x, p["pair"].y, p["img"]]
        assert isinstance(p["pair"], _Records.Pair) and p["id"] == q["id"]
        assert all(t.is_pinned() for t in tensors) and not q["img"].is_pinned()
        for t, u in zip(tensors, [q["pair"].x, q["pair"].y, q["img"]]):
            np.testing.assert_array_equal(t.to("cuda", non_blocking=True).cpu().numpy(), u.numpy())


def test_streams_and_events_order_work():
    s = tt.cuda.Stream()
    x = tt.zeros(1 << 22, device="cuda")
    e = tt.cuda.Event(enable_timing=True)
    done = tt.cuda.Event(enable_timing=True)
    e.record()
    with tt.cuda.stream(s):
        assert tt.cuda.current_stream() == s
        s.wait_event(e)
        x.fill_(3.0)
        done.record(s)
    tt.cuda.current_stream().wait_event(done)
    assert tt.cuda.current_stream() != s
    done.synchronize()
    assert done.query() and e.elapsed_time(done) >= 0
    assert float(x.cpu()[-1].item()) == 3.0


def test_allocator_reuses_blocks_and_reports_stats():
    tt.cuda.empty_cache()
    base = tt.cuda.memory_allocated()
    x = tt.empty(1024, 1024, device="cuda")      # 4 MiB
    assert tt.cuda.memory_allocated() == base + 4 * 1024 * 1024
    assert tt.cuda.memory_reserved() >= tt.cuda.memory_allocated()
    small = tt.empty(333, device="cuda")    # a small-pool segment too
    del x, small
    assert tt.cuda.memory_allocated() == base
    mallocs = tt.cuda.memory_stats()["num_device_alloc"]
    for _ in range(50):
        a = tt.empty(1024, 1024, device="cuda")
        b = tt.empty(333, device="cuda")
        del a, b
    assert tt.cuda.memory_stats()["num_device_alloc"] == mallocs
    tt.cuda.reset_peak_memory_stats()
    assert tt.cuda.max_memory_allocated() == tt.cuda.memory_allocated()
    tt.cuda.empty_cache()
    assert tt.cuda.memory_reserved() <= tt.cuda.memory_stats()["reserved_bytes.all.peak"]


def test_memory_recorded_on_another_stream_is_reused_only_after_that_work():
    side = tt.cuda.Stream()
    a = tt.randn(2048, 2048, device="cuda")
    x = tt.empty(1 << 22, device="cuda")
    ptr = x.data_ptr()
    side.wait_stream(tt.cuda.current_stream())
    with tt.cuda.stream(side):
        for _ in range(30):
            a = a @ a * 1e-3            # keep the side stream busy for a while
        x.fill_(7.0)                   # the last work on x, on the side stream
    x.record_stream(side)
    del x                              # freed while the side stream may still write it
    y = tt.zeros(1 << 22, device="cuda")   # must not get x's memory until the side work is done
    side.synchronize()
    tt.cuda.synchronize()
    if y.data_ptr() == ptr:
        pytest.fail("a block recorded on another stream was reused before that stream's work finished")
    assert float(y.abs().sum().item()) == 0.0
    y_ptr = y.data_ptr()
    del y
    mallocs = tt.cuda.memory_stats()["num_device_alloc"]
    z1 = tt.empty(1 << 22, device="cuda")  # once done, the deferred block is back in the pool
    z2 = tt.empty(1 << 22, device="cuda")
    assert {z1.data_ptr(), z2.data_ptr()} == {ptr, y_ptr}
    assert tt.cuda.memory_stats()["num_device_alloc"] == mallocs


def test_tensor_recorded_on_a_stream_outlives_the_stream():
    # Freeing a tensor recorded on a stream that was destroyed meanwhile must not touch that stream
    # (an NCCL communicator's stream crashed ranks at exit that way); its memory is reusable.
    side = tt.cuda.Stream()
    x = tt.ones(1 << 20, device="cuda")
    side.wait_stream(tt.cuda.current_stream())   # outside the block: inside, current_stream() is side
    with tt.cuda.stream(side):
        x.mul_(3.0)
    x.record_stream(side)
    del side                           # waits for its work, then the allocator forgets it
    gc.collect()
    assert float(x.sum().item()) == 3.0 * (1 << 20)
    before = tt.cuda.memory_allocated()
    del x                              # must not record an event on the destroyed stream
    assert tt.cuda.memory_allocated() == before - 4 * (1 << 20)
    y = tt.full((1 << 20,), 2.0, device="cuda")
    assert float(y.sum().item()) == 2.0 * (1 << 20)


def test_blocking_copy_lets_other_python_threads_run():
    # A device-to-host copy may wait behind a collective that waits for another process, which may
    # first need this process's Python threads (the TCPStore server): it must not hold the GIL.
    a = tt.randn(4096, 4096, device="cuda")
    (a @ a).sum().item()
    ticks: list[float] = []
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)
    t = threading.Thread(target=spin)
    t.start()
    try:
        time.sleep(0.02)
        b = a
        for _ in range(200):                # ~0.5 s of float32 GEMMs queued on the GPU
            b = (a @ b) * 1e-3
        t0 = time.perf_counter()
        b.sum().item()
        t1 = time.perf_counter()
    finally:
        stop.set()
        t.join()
    assert t1 - t0 > 0.1, f"the copy waited only {t1 - t0:.3f} s: the test needs a longer queue"
    inside = [x for x in ticks if t0 + 0.02 < x < t1 - 0.02]
    assert inside, f"no other thread ran during a {t1 - t0:.2f} s blocking copy: the GIL was held"


def test_out_of_memory_is_a_python_error_and_recoverable():
    free, total = tt.cuda.mem_get_info()
    with pytest.raises(RuntimeError, match="out of memory.*Tried to allocate"):
        tt.empty(int(total * 2) // 4, device="cuda")
    tt.cuda.empty_cache()
    y = tt.ones(1024, device="cuda")        # the allocator still works
    assert y.cpu().numpy().sum() == 1024


def test_mixing_devices_names_the_op_and_devices():
    with pytest.raises(RuntimeError, match="same device.*cpu.*cuda:0|cuda:0.*cpu"):
        tt.ones(2) + tt.ones(2, device="cuda")


def test_bad_device_index():
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        tt.ones(2, device=f"cuda:{tt.cuda.device_count()}")
