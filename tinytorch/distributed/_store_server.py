"""The TCPStore's server: a key-value table with blocking waits, served over TCP.

Standard library only, so that it runs as its own small process: ``TCPStore(is_master=True)``
starts ``python _store_server.py HOST PORT``, which prints ``PORT <n>`` once listening and serves
until its stdin closes (its parent exited or closed the store). Why a process and not a thread of
rank 0: a rank's main thread can hold Python's GIL inside a CUDA call that waits behind a
collective (a lazily loaded kernel's first launch synchronizes the context, for one), and that
collective needs a peer that is itself waiting for the store: a server thread needing the GIL
would deadlock them. One thread per client connection; blocking ``get``/``wait`` wait server-side
on a condition variable with the client's timeout, so there is no polling over the network.

Protocol (binary safe): every message is a frame ``u32 nfields`` followed by ``nfields`` fields,
each ``u32 length`` + bytes (little endian). Requests are ``[command, args...]``; replies are
``[status, values...]`` with status ``b"ok"``, ``b"timeout"`` or ``b"error"``.

``[b"on_close", key, value]`` asks the server to set ``key`` to ``value`` when this connection
closes: the launchers of a multi-node job learn at once that a peer's launcher exited or was
killed (its kernel closes the socket), without waiting for its heartbeat to go stale.
"""
from __future__ import annotations

import errno
import os
import socket
import struct
import sys
import threading
import time


class _Table:
    """The key-value table with blocking waits (used by the TCPStore server and HashStore)."""

    def __init__(self) -> None:
        self.data: dict[bytes, bytes] = {}
        self.cond = threading.Condition()

    def set(self, k: bytes, v: bytes) -> None:
        with self.cond:
            self.data[k] = v
            self.cond.notify_all()

    def wait(self, keys: list[bytes], seconds: float) -> list[bytes]:
        """Waits until every key exists; returns the missing keys on timeout ([] on success)."""
        deadline = time.monotonic() + seconds
        with self.cond:
            while True:
                missing = [k for k in keys if k not in self.data]
                if not missing:
                    return []
                left = deadline - time.monotonic()
                if left <= 0:
                    return missing
                self.cond.wait(min(left, 1.0))

    def add(self, k: bytes, amount: int) -> int:
        with self.cond:
            v = int(self.data.get(k, b"0")) + amount
            self.data[k] = str(v).encode()
            self.cond.notify_all()
            return v

    def compare_set(self, k: bytes, expected: bytes, desired: bytes) -> bytes:
        with self.cond:
            cur = self.data.get(k)
            if (cur is None and expected == b"") or cur == expected:
                self.data[k] = desired
                self.cond.notify_all()
                return desired
            return expected if cur is None else cur

    def delete(self, k: bytes) -> bool:
        with self.cond:
            return self.data.pop(k, None) is not None


def _send_frame(sock: socket.socket, fields: list[bytes]) -> None:
    parts = [struct.pack("<I", len(fields))]
    for f in fields:
        parts.append(struct.pack("<I", len(f)))
        parts.append(f)
    sock.sendall(b"".join(parts))


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("connection closed by peer")
        buf += chunk
    return bytes(buf)


def _recv_frame(sock: socket.socket) -> list[bytes]:
    (n,) = struct.unpack("<I", _recv_exact(sock, 4))
    if n > 1 << 20:
        raise ConnectionError(f"bad frame ({n} fields)")
    out = []
    for _ in range(n):
        (ln,) = struct.unpack("<I", _recv_exact(sock, 4))
        out.append(_recv_exact(sock, ln) if ln else b"")
    return out


class TCPServer:
    """The master's server: an accept thread plus one daemon thread per connection."""

    def __init__(self, host: str, port: int) -> None:
        self.table = _Table()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.sock.bind((host if host not in ("localhost",) else "127.0.0.1", port))
        except OSError as e:
            if e.errno == errno.EADDRINUSE:   # someone serves there already: never fall back to all interfaces
                raise
            self.sock.bind(("", port))
        self.sock.listen(1024)
        self.port = self.sock.getsockname()[1]
        self.closed = False
        threading.Thread(target=self._accept, name="TCPStore-server", daemon=True).start()

    def _accept(self) -> None:
        while not self.closed:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        t = self.table
        on_close: list[tuple[bytes, bytes]] = []
        try:
            while True:
                req = _recv_frame(conn)
                cmd, args = req[0], req[1:]
                if cmd == b"set":
                    t.set(args[0], args[1])
                    rep = [b"ok"]
                elif cmd == b"get":
                    missing = t.wait([args[0]], float(args[1]))
                    if missing:
                        rep = [b"timeout"] + missing
                    else:
                        with t.cond:
                            rep = [b"ok", t.data[args[0]]]
                elif cmd == b"wait":
                    missing = t.wait(args[1:], float(args[0]))
                    rep = [b"timeout"] + missing if missing else [b"ok"]
                elif cmd == b"add":
                    rep = [b"ok", str(t.add(args[0], int(args[1]))).encode()]
                elif cmd == b"cas":
                    rep = [b"ok", t.compare_set(args[0], args[1], args[2])]
                elif cmd == b"del":
                    rep = [b"ok", b"1" if t.delete(args[0]) else b"0"]
                elif cmd == b"check":
                    with t.cond:
                        rep = [b"ok", b"1" if all(k in t.data for k in args) else b"0"]
                elif cmd == b"num":
                    with t.cond:
                        rep = [b"ok", str(len(t.data)).encode()]
                elif cmd == b"ping":
                    rep = [b"ok"]
                elif cmd == b"on_close":
                    on_close.append((args[0], args[1]))
                    rep = [b"ok"]
                else:
                    rep = [b"error", b"unknown command " + cmd]
                _send_frame(conn, rep)
        except (ConnectionError, OSError, struct.error, IndexError, ValueError):
            pass
        finally:
            conn.close()
            for k, v in on_close:
                t.set(k, v)

    def close(self) -> None:
        self.closed = True
        try:
            self.sock.close()
        except OSError:
            pass


def main(argv: list[str]) -> None:
    host, port = argv[1], int(argv[2])
    try:
        server = TCPServer(host, port)
    except OSError as e:
        print(f"ERROR cannot listen on {host}:{port}: {e}", flush=True)
        sys.exit(1)
    print(f"PORT {server.port}", flush=True)
    sys.stdin.buffer.read()      # returns at EOF: the parent exited or closed the store
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv)
