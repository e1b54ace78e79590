"""Rendezvous key-value stores: ``TCPStore``, ``FileStore``, ``PrefixStore`` (PyTorch's names).

Values are bytes (str values are UTF-8 encoded on ``set``). ``get``/``wait`` block until the keys
exist or the store's timeout passes, and then raise :class:`DistStoreError` naming the missing keys.

TCPStore: the master (``is_master=True``, normally rank 0) serves the table from a small child
process (``_store_server.py``, which says why it is not a thread); every instance is a client.
"""
from __future__ import annotations

import fcntl
import os
import socket
import struct
import subprocess
import sys
import threading
import time
from datetime import timedelta
from typing import Iterable, Optional, Union

from tinytorch.distributed._store_server import _Table, _recv_frame, _send_frame

__all__ = ["Store", "TCPStore", "FileStore", "PrefixStore", "HashStore", "DistError", "DistStoreError",
           "DistNetworkError", "DistBackendError"]

DEFAULT_TIMEOUT = timedelta(minutes=30)


class DistError(RuntimeError):
    """Base class of tinytorch.distributed errors (as torch.distributed.DistError)."""


class DistStoreError(DistError):
    """A store operation failed or timed out."""


class DistNetworkError(DistError):
    """A network error (connection refused, reset, peer gone)."""


class DistBackendError(DistError):
    """A collective failed or timed out in the backend."""


def _seconds(timeout) -> float:
    if timeout is None:
        return DEFAULT_TIMEOUT.total_seconds()
    if isinstance(timeout, timedelta):
        return timeout.total_seconds()
    return float(timeout)


def _b(v: Union[str, bytes, bytearray, memoryview, int]) -> bytes:
    if isinstance(v, str):
        return v.encode()
    if isinstance(v, int):
        return str(v).encode()
    return bytes(v)


class Store:
    """Abstract store: ``set``, ``get``, ``add``, ``wait``, ``check``, ``compare_set``,
    ``delete_key``, ``num_keys``, ``set_timeout``."""

    def __init__(self, timeout=DEFAULT_TIMEOUT) -> None:
        self._timeout = _seconds(timeout)

    @property
    def timeout(self) -> timedelta:
        return timedelta(seconds=self._timeout)

    def set_timeout(self, timeout) -> None:
        self._timeout = _seconds(timeout)

    def set(self, key: str, value) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not implement set() (Store is abstract)")

    def get(self, key: str) -> bytes:
        raise NotImplementedError(f"{type(self).__name__} does not implement get() (Store is abstract)")

    def add(self, key: str, amount: int) -> int:
        raise NotImplementedError(f"{type(self).__name__} does not implement add() (Store is abstract)")

    def compare_set(self, key: str, expected_value, desired_value) -> bytes:
        raise NotImplementedError(f"{type(self).__name__} does not implement compare_set() (Store is abstract)")

    def wait(self, keys: Iterable[str], timeout=None) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not implement wait() (Store is abstract)")

    def check(self, keys: Iterable[str]) -> bool:
        raise NotImplementedError(f"{type(self).__name__} does not implement check() (Store is abstract)")

    def delete_key(self, key: str) -> bool:
        raise NotImplementedError(f"{type(self).__name__} does not implement delete_key() (Store is abstract)")

    def num_keys(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} does not implement num_keys() (Store is abstract)")


def _timeout_error(kind: str, keys, seconds: float) -> DistStoreError:
    return DistStoreError(f"{kind}: timed out after {seconds:g} s waiting for key(s) {sorted(keys)!r} "
                          "(a rank that should have set them did not start, died or is stuck)")


class HashStore(Store):
    """An in-process store (threads of one process), as torch.distributed.HashStore."""

    def __init__(self, timeout=DEFAULT_TIMEOUT) -> None:
        super().__init__(timeout)
        self._t = _Table()

    def set(self, key, value) -> None:
        self._t.set(_b(key), _b(value))

    def get(self, key) -> bytes:
        self.wait([key])
        with self._t.cond:
            return self._t.data[_b(key)]

    def add(self, key, amount) -> int:
        return self._t.add(_b(key), int(amount))

    def compare_set(self, key, expected_value, desired_value) -> bytes:
        return self._t.compare_set(_b(key), _b(expected_value), _b(desired_value))

    def wait(self, keys, timeout=None) -> None:
        keys = [keys] if isinstance(keys, (str, bytes)) else list(keys)
        secs = self._timeout if timeout is None else _seconds(timeout)
        missing = self._t.wait([_b(k) for k in keys], secs)
        if missing:
            raise _timeout_error("HashStore", [m.decode(errors="replace") for m in missing], secs)

    def check(self, keys) -> bool:
        with self._t.cond:
            return all(_b(k) in self._t.data for k in keys)

    def delete_key(self, key) -> bool:
        return self._t.delete(_b(key))

    def num_keys(self) -> int:
        with self._t.cond:
            return len(self._t.data)


def _start_server(host: str, port: int, timeout: float) -> subprocess.Popen:
    """Starts the store's server process; returns it once it listens (its port is in
    ``proc.port``). It exits when our end of its stdin closes, so it never outlives us."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_store_server.py")
    proc = subprocess.Popen([sys.executable, "-I", "-S", script, host, str(port)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    line = proc.stdout.readline().decode(errors="replace").strip()
    if not line.startswith("PORT "):
        proc.kill()
        rest = proc.stdout.read().decode(errors="replace")
        raise DistNetworkError(f"TCPStore: the master could not start its server on {host}:{port}: {line} {rest}".strip())
    proc.port = int(line.split()[1])
    return proc


class TCPStore(Store):
    """A TCP-based distributed key-value store (as torch.distributed.TCPStore).

    ``TCPStore(host_name, port, world_size=None, is_master=False, timeout=timedelta(minutes=30),
    wait_for_workers=True)``: the master serves on ``port`` (0 picks a free one: read ``.port``);
    every instance is a client. With ``wait_for_workers`` and a ``world_size``, construction
    returns once ``world_size`` clients have connected (or raises after ``timeout``)."""

    def __init__(self, host_name: str, port: int, world_size: Optional[int] = None, is_master: bool = False,
                 timeout=DEFAULT_TIMEOUT, wait_for_workers: bool = True, multi_tenant: bool = False) -> None:
        super().__init__(timeout)
        self.host = host_name
        self._server = _start_server(host_name, port, self._timeout) if is_master else None
        self.port = self._server.port if self._server else port
        self.world_size = world_size
        self._lock = threading.Lock()
        self._reply_s = 60.0      # how long a plain request may wait for its reply (a dead master)
        self._sock = self._connect()
        if world_size is not None and wait_for_workers:
            self.add("__tt_store_workers__", 1)
            deadline = time.monotonic() + self._timeout
            while True:
                n = self.add("__tt_store_workers__", 0)
                if n >= world_size:
                    break
                if time.monotonic() > deadline:
                    raise DistStoreError(f"TCPStore: timed out after {self._timeout:g} s waiting for "
                                         f"{world_size} workers at {host_name}:{self.port}; {n} connected")
                time.sleep(0.01)

    def _connect(self) -> socket.socket:
        deadline = time.monotonic() + self._timeout
        delay = 0.01
        last = None
        while True:
            try:
                s = socket.create_connection((self.host, self.port), timeout=max(0.1, min(5.0, self._timeout)))
                s.settimeout(None)
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                return s
            except OSError as e:
                last = e
            if time.monotonic() + delay > deadline:
                raise DistNetworkError(f"TCPStore: could not connect to {self.host}:{self.port} within "
                                       f"{self._timeout:g} s ({last}); is the master (rank 0) running and "
                                       "MASTER_ADDR/MASTER_PORT right?")
            time.sleep(delay)
            delay = min(delay * 2, 0.5)

    def _call(self, fields: list[bytes], wait_s: float = 0.0) -> list[bytes]:
        with self._lock:
            try:
                # the reply may legitimately take wait_s (server-side wait); guard against a dead master
                self._sock.settimeout(wait_s + 30.0 if wait_s else self._reply_s)
                _send_frame(self._sock, fields)
                rep = _recv_frame(self._sock)
            except (ConnectionError, OSError) as e:
                raise DistNetworkError(f"TCPStore: lost the connection to {self.host}:{self.port} "
                                       f"({type(e).__name__}: {e}); the master (rank 0) probably exited") from e
        if rep[0] == b"error":
            raise DistStoreError(rep[1].decode(errors="replace"))
        return rep

    def set(self, key, value) -> None:
        self._call([b"set", _b(key), _b(value)])

    def get(self, key) -> bytes:
        rep = self._call([b"get", _b(key), repr(self._timeout).encode()], self._timeout)
        if rep[0] == b"timeout":
            raise _timeout_error("TCPStore.get", [_b(key).decode(errors="replace")], self._timeout)
        return rep[1]

    def add(self, key, amount) -> int:
        return int(self._call([b"add", _b(key), str(int(amount)).encode()])[1])

    def compare_set(self, key, expected_value, desired_value) -> bytes:
        return self._call([b"cas", _b(key), _b(expected_value), _b(desired_value)])[1]

    def wait(self, keys, timeout=None) -> None:
        keys = [keys] if isinstance(keys, (str, bytes)) else list(keys)
        secs = self._timeout if timeout is None else _seconds(timeout)
        rep = self._call([b"wait", repr(secs).encode()] + [_b(k) for k in keys], secs)
        if rep[0] == b"timeout":
            raise _timeout_error("TCPStore.wait", [m.decode(errors="replace") for m in rep[1:]], secs)

    def check(self, keys) -> bool:
        return self._call([b"check"] + [_b(k) for k in keys])[1] == b"1"

    def delete_key(self, key) -> bool:
        return self._call([b"del", _b(key)])[1] == b"1"

    def num_keys(self) -> int:
        return int(self._call([b"num"])[1])

    def _set_on_close(self, key, value) -> None:
        """Has the server set ``key`` to ``value`` when this client's connection closes (it exited,
        was killed, or called ``close``): how the launchers of a multi-node job see a peer go."""
        self._call([b"on_close", _b(key), _b(value)])

    def close(self) -> None:
        try:
            self._sock.close()
        except OSError:
            pass
        if self._server is not None:
            try:
                self._server.stdin.close()      # the server exits at EOF
                self._server.wait(timeout=5)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                self._server.kill()
            self._server = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


# ---------------------------------------------------------------------------- FileStore
class FileStore(Store):
    """A store backed by a file every process can open (as torch.distributed.FileStore).

    The file is an append-only log of records (``u8 op, u32 klen, key, u32 vlen, value``; op 1 =
    set, 2 = delete) guarded by ``flock``; every read replays the log. Waits poll the file."""

    def __init__(self, file_name: str, world_size: int = -1, timeout=DEFAULT_TIMEOUT) -> None:
        super().__init__(timeout)
        self.path = file_name
        self.world_size = world_size
        fd = os.open(file_name, os.O_RDWR | os.O_CREAT, 0o644)
        os.close(fd)

    def _locked(self, fn):
        with open(self.path, "r+b") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                data = self._parse(f.read())
                return fn(f, data)
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    @staticmethod
    def _parse(raw: bytes) -> dict[bytes, bytes]:
        data: dict[bytes, bytes] = {}
        i = 0
        while i + 9 <= len(raw):
            op = raw[i]
            (kl,) = struct.unpack_from("<I", raw, i + 1)
            k = raw[i + 5:i + 5 + kl]
            (vl,) = struct.unpack_from("<I", raw, i + 5 + kl)
            v = raw[i + 9 + kl:i + 9 + kl + vl]
            i += 9 + kl + vl
            if op == 1:
                data[k] = v
            else:
                data.pop(k, None)
        return data

    @staticmethod
    def _append(f, op: int, k: bytes, v: bytes = b"") -> None:
        f.seek(0, os.SEEK_END)
        f.write(bytes([op]) + struct.pack("<I", len(k)) + k + struct.pack("<I", len(v)) + v)
        f.flush()

    def set(self, key, value) -> None:
        self._locked(lambda f, d: self._append(f, 1, _b(key), _b(value)))

    def get(self, key) -> bytes:
        self.wait([key])
        return self._locked(lambda f, d: d[_b(key)])

    def add(self, key, amount) -> int:
        def fn(f, d):
            v = int(d.get(_b(key), b"0")) + int(amount)
            self._append(f, 1, _b(key), str(v).encode())
            return v
        return self._locked(fn)

    def compare_set(self, key, expected_value, desired_value) -> bytes:
        k, exp, des = _b(key), _b(expected_value), _b(desired_value)

        def fn(f, d):
            cur = d.get(k)
            if (cur is None and exp == b"") or cur == exp:
                self._append(f, 1, k, des)
                return des
            return exp if cur is None else cur
        return self._locked(fn)

    def wait(self, keys, timeout=None) -> None:
        keys = [keys] if isinstance(keys, (str, bytes)) else list(keys)
        secs = self._timeout if timeout is None else _seconds(timeout)
        deadline = time.monotonic() + secs
        delay = 0.001
        while True:
            missing = self._locked(lambda f, d: [k for k in keys if _b(k) not in d])
            if not missing:
                return
            if time.monotonic() > deadline:
                raise _timeout_error("FileStore.wait", missing, secs)
            time.sleep(delay)
            delay = min(delay * 2, 0.05)

    def check(self, keys) -> bool:
        return self._locked(lambda f, d: all(_b(k) in d for k in keys))

    def delete_key(self, key) -> bool:
        def fn(f, d):
            if _b(key) in d:
                self._append(f, 2, _b(key))
                return True
            return False
        return self._locked(fn)

    def num_keys(self) -> int:
        return self._locked(lambda f, d: len(d))


class PrefixStore(Store):
    """Prepends ``prefix + "/"`` to every key of an underlying store."""

    def __init__(self, prefix: str, store: Store) -> None:
        super().__init__(store.timeout)
        self.prefix = prefix
        self.underlying_store = store

    def _k(self, key) -> bytes:
        return _b(self.prefix) + b"/" + _b(key)

    @property
    def timeout(self) -> timedelta:
        return self.underlying_store.timeout

    def set_timeout(self, timeout) -> None:
        self.underlying_store.set_timeout(timeout)

    def set(self, key, value) -> None:
        self.underlying_store.set(self._k(key), value)

    def get(self, key) -> bytes:
        return self.underlying_store.get(self._k(key))

    def add(self, key, amount) -> int:
        return self.underlying_store.add(self._k(key), amount)

    def compare_set(self, key, expected_value, desired_value) -> bytes:
        return self.underlying_store.compare_set(self._k(key), expected_value, desired_value)

    def wait(self, keys, timeout=None) -> None:
        keys = [keys] if isinstance(keys, (str, bytes)) else list(keys)
        try:
            self.underlying_store.wait([self._k(k) for k in keys], timeout)
        except DistStoreError as e:
            raise DistStoreError(str(e).replace(self.prefix + "/", "")) from None

    def check(self, keys) -> bool:
        return self.underlying_store.check([self._k(k) for k in keys])

    def delete_key(self, key) -> bool:
        return self.underlying_store.delete_key(self._k(key))

    def num_keys(self) -> int:
        return self.underlying_store.num_keys()
