"""The NCCL watchdog's bookkeeping (pure Python, no GPU): finished collectives leave the queue in a
few event queries, and only the oldest unfinished one can time out."""
from __future__ import annotations

import threading
import time
from collections import deque

import pytest

from tinytorch.distributed._nccl import NCCLBackend


class FakeHandle:
    def __init__(self, done: bool, counter: list[int]) -> None:
        self.done, self.counter = done, counter

    def query(self) -> bool:
        self.counter[0] += 1
        return self.done


class FakeWork:
    def __init__(self, seq: int, done: bool, counter: list[int]) -> None:
        self.seq, self.what, self.handle = seq, "all_reduce", FakeHandle(done, counter)


def backend_with(n: int, finished: int, deadline: float, timeout: float = 5.0):
    """A backend (no communicator) whose queue holds n collectives, the first `finished` done."""
    b = NCCLBackend.__new__(NCCLBackend)
    b._lock, b.timeout = threading.Lock(), timeout
    counter = [0]
    b._pending = deque((FakeWork(i, i < finished, counter), deadline) for i in range(n))
    return b, counter


@pytest.mark.parametrize("n,finished", [(1, 0), (1, 1), (7, 3), (300, 0), (300, 299), (300, 300), (1000, 517)])
def test_finished_prefix_leaves_in_a_few_queries(n, finished):
    b, queries = backend_with(n, finished, deadline=time.monotonic() + 60)
    assert b._retire_finished() is None
    assert len(b._pending) == n - finished
    if n > finished:
        assert b._pending[0][0].seq == finished
    assert queries[0] <= n.bit_length() + 1, queries[0]


def test_oldest_unfinished_past_its_deadline_times_out():
    b, _ = backend_with(10, 4, deadline=time.monotonic() - 1)
    reason = b._retire_finished()
    assert reason is not None and "all_reduce (seq 4) timed out after 5 s" in reason
    assert len(b._pending) == 6


def test_a_failing_query_names_the_collective():
    b, _ = backend_with(4, 0, deadline=time.monotonic() + 60)

    def broken():
        raise RuntimeError("an illegal memory access was encountered")
    for w, _ in b._pending:
        w.handle.query = broken
    assert b._retire_finished() == "all_reduce failed: an illegal memory access was encountered"
