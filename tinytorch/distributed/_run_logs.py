"""Where the launcher sends each worker's stdout and stderr (torchrun's ``--log-dir``,
``--redirects``, ``--tee``).

A spec is ``0`` (console only), ``1`` (stdout), ``2`` (stderr), ``3`` (both), for every local rank,
or per local rank as ``0:1,1:3``. ``--redirects`` sends the chosen streams to files instead of the
console, ``--tee`` to files and the console. The files are torchrun's layout:
``<log-dir>/<run id>/attempt_<restart>/<local rank>/{stdout,stderr}.log``."""
from __future__ import annotations

import collections
import json
import os
import sys
import threading
from typing import Dict, Optional

STDOUT, STDERR = 1, 2


def parse_std_spec(spec: str, what: str) -> Dict[Optional[int], int]:
    """``"3"`` -> {None: 3} (every local rank); ``"0:1,1:2"`` -> {0: 1, 1: 2}."""
    spec = str(spec).strip()
    try:
        if ":" not in spec:
            value = int(spec)
            out: Dict[Optional[int], int] = {None: value}
        else:
            out = {}
            for part in spec.split(","):
                rank, value = part.split(":")
                out[int(rank)] = int(value)
    except ValueError:
        raise ValueError(f"{what}: expected 0-3 or local_rank:value pairs such as 0:1,1:3, got {spec!r}") from None
    if any(not 0 <= v <= 3 for v in out.values()):
        raise ValueError(f"{what}: each value must be 0 (none), 1 (stdout), 2 (stderr) or 3 (both), got {spec!r}")
    return out


def streams_for(spec: Dict[Optional[int], int], local_rank: int) -> int:
    return spec.get(local_rank, spec.get(None, 0))


class Route:
    """For one worker: which of its streams go to a file, which to the console."""

    def __init__(self, attempt_dir: Optional[str], local_rank: int, redirects: int, tee: int) -> None:
        self.to_file = (redirects | tee) if attempt_dir else 0
        self.to_console = ~redirects & 3
        self.files = {}
        if self.to_file:
            d = os.path.join(attempt_dir, str(local_rank))
            os.makedirs(d, exist_ok=True)
            for s, name in ((STDOUT, "stdout.log"), (STDERR, "stderr.log")):
                if self.to_file & s:
                    self.files[s] = open(os.path.join(d, name), "ab")

    @property
    def splits_streams(self) -> bool:
        """Whether stdout and stderr must be read apart (else one merged pipe, as without logs)."""
        return bool(self.to_file) or self.to_console != 3

    def pump(self, pipe, stream: int, tail: collections.deque) -> threading.Thread:
        """Starts a thread copying ``pipe`` (the worker's ``stream``) where it goes."""
        console = sys.stdout.buffer if stream == STDOUT else sys.stderr.buffer
        f = self.files.get(stream)
        show = bool(self.to_console & stream)

        def run() -> None:
            for line in iter(pipe.readline, b""):
                tail.append(line)
                if show:
                    try:
                        console.write(line)
                        console.flush()
                    except (BrokenPipeError, ValueError):
                        pass
                if f is not None:
                    f.write(line)
                    f.flush()
            pipe.close()
            if f is not None:
                f.close()

        t = threading.Thread(target=run, daemon=True)
        t.start()
        return t


def attempt_dir(log_dir: Optional[str], run_id: str, restart: int) -> Optional[str]:
    return os.path.join(log_dir, run_id, f"attempt_{restart}") if log_dir else None


def env_value(log_dir: Optional[str], redirects: dict, tee: dict) -> str:
    """The routing as JSON, for the MPI bootstrap (``TINYTORCH_RUN_LOGS``)."""
    enc = lambda d: {("*" if k is None else str(k)): v for k, v in d.items()}  # noqa: E731
    return json.dumps({"dir": log_dir, "redirects": enc(redirects), "tee": enc(tee)})


def route_from_env(value: str, local_rank: int) -> Route:
    cfg = json.loads(value)
    dec = lambda d: {(None if k == "*" else int(k)): v for k, v in d.items()}  # noqa: E731
    return Route(cfg["dir"], local_rank, streams_for(dec(cfg["redirects"]), local_rank),
                 streams_for(dec(cfg["tee"]), local_rank))
