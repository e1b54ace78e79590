"""TCPStore / FileStore / PrefixStore semantics, timeouts naming keys, and rendezvous checks."""
from __future__ import annotations

import os
import threading
import time
from datetime import timedelta

import pytest

import tinytorch.distributed as dist
from tinytorch.distributed import FileStore, HashStore, PrefixStore, TCPStore
from tinytorch.distributed.process_group import _store_rendezvous


def _tcp_pair(timeout=5.0):
    master = TCPStore("127.0.0.1", 0, world_size=2, is_master=True, timeout=timedelta(seconds=timeout),
                      wait_for_workers=False)
    client = TCPStore("127.0.0.1", master.port, world_size=2, is_master=False, timeout=timedelta(seconds=timeout),
                      wait_for_workers=False)
    return master, client


@pytest.fixture(params=["tcp", "file", "hash", "prefix"])
def stores(request, tmp_path):
    if request.param == "tcp":
        a, b = _tcp_pair()
        yield a, b
        b.close()
        a.close()
    elif request.param == "file":
        p = str(tmp_path / "store")
        yield FileStore(p, 2, timedelta(seconds=5)), FileStore(p, 2, timedelta(seconds=5))
    elif request.param == "hash":
        s = HashStore(timedelta(seconds=5))
        yield s, s
    else:
        a, b = _tcp_pair()
        yield PrefixStore("p", a), PrefixStore("p", b)
        b.close()
        a.close()


def test_store_semantics(stores):
    a, b = stores
    a.set("k", "v")
    assert b.get("k") == b"v"
    binary = bytes(range(256)) + b"\n\x00end"
    b.set("bin", binary)
    assert a.get("bin") == binary
    assert a.add("ctr", 3) == 3 and b.add("ctr", -1) == 2 and a.get("ctr") == b"2"
    assert a.compare_set("cas", "", "first") == b"first"           # missing key + empty expected: set
    assert b.compare_set("cas", "nope", "second") == b"first"      # mismatch: current value
    assert b.compare_set("cas", "first", "second") == b"second"
    assert a.check(["k", "bin"]) and not a.check(["k", "missing"])
    n = a.num_keys()
    assert b.delete_key("k") and not b.delete_key("k")
    assert a.num_keys() == n - 1
    # wait blocks until another client sets the key
    timer = threading.Timer(0.2, lambda: b.set("late", "x"))
    timer.start()
    t0 = time.monotonic()
    a.wait(["late"])
    timer.join()
    assert 0.1 < time.monotonic() - t0 < 3


def test_store_timeouts_name_missing_keys(stores):
    a, b = stores
    a.set("present", "1")
    with pytest.raises(dist.DistStoreError, match=r"missing_one.*|.*missing_one"):
        b.wait(["present", "missing_one"], timedelta(seconds=0.3))
    b.set_timeout(timedelta(seconds=0.3))
    t0 = time.monotonic()
    with pytest.raises(dist.DistStoreError, match="never_set"):
        b.get("never_set")
    assert time.monotonic() - t0 < 3


def test_tcpstore_waits_for_workers_and_reports_dead_master():
    with pytest.raises(dist.DistStoreError, match="2 workers"):
        TCPStore("127.0.0.1", 0, world_size=2, is_master=True, timeout=timedelta(seconds=0.5))
    master, client = _tcp_pair()
    master.close()
    master._sock.close()
    time.sleep(0.1)
    with pytest.raises((dist.DistNetworkError, dist.DistStoreError)):
        client.get("x")
    with pytest.raises(dist.DistNetworkError, match="could not connect"):
        TCPStore("127.0.0.1", master.port, timeout=timedelta(seconds=0.3))


def test_rendezvous_checks_world_size_and_duplicate_ranks():
    s = HashStore(timedelta(seconds=2))
    errs = {}

    def go(rank, ws):
        try:
            _store_rendezvous(s, rank, ws, 2.0)
        except Exception as e:  # noqa: BLE001
            errs[rank] = e
    t = [threading.Thread(target=go, args=(0, 2)), threading.Thread(target=go, args=(1, 3))]
    for x in t:
        x.start()
    for x in t:
        x.join()
    assert isinstance(errs[1], ValueError) and "mismatched world sizes" in str(errs[1])
    assert isinstance(errs[0], dist.DistStoreError) and "rdzv/rank/1" in str(errs[0])   # rank 1 never joined
    s2 = HashStore(timedelta(seconds=1))
    s2.set("rdzv/world_size", "2")
    s2.compare_set("rdzv/rank/1", "", "someone-else")
    with pytest.raises(ValueError, match="twice"):
        _store_rendezvous(s2, 1, 2, 1.0)


def test_init_errors(monkeypatch):
    with pytest.raises(ValueError, match="mpi, nccl"):
        dist.init_process_group("gloo")
    for k in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE"):
        monkeypatch.delenv(k, raising=False)
    with pytest.raises(ValueError, match="MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE"):
        dist.init_process_group("nccl", init_method="env://")
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", "1")
    with pytest.raises(ValueError, match="RANK, WORLD_SIZE"):
        dist.init_process_group("nccl")
    assert not dist.is_initialized()
    with pytest.raises(RuntimeError, match="init_process_group"):
        dist.get_rank()


def test_tcpstore_server_is_a_process_that_never_outlives_its_master():
    # The master's table is served by a child process (so a rank holding the GIL in a blocking
    # CUDA call can still answer its peers); it must exit when the master dies, even by SIGKILL.
    import signal
    import subprocess
    import sys
    code = ("import time; from tinytorch.distributed import TCPStore; s = TCPStore('127.0.0.1', 0, 1, True); "
            "s.set('k', 'v'); print(s._server.pid, s.port, flush=True); time.sleep(60)")
    master = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        server_pid, port = map(int, master.stdout.readline().split())
        assert TCPStore("127.0.0.1", port, timeout=timedelta(seconds=5)).get("k") == b"v"
        os.kill(master.pid, signal.SIGKILL)
        master.wait()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                os.kill(server_pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            os.kill(server_pid, signal.SIGKILL)
            pytest.fail("the store server outlived its master")
    finally:
        master.kill()
