"""For the tests that run documented commands as a user runs them (tests/commands/,
tests/distributed/test_distributed_docs.py): the launcher's command line, and the checkout's
untracked files (a command must not write into the checkout)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def tinytorch_run() -> list:
    """``tinytorch-run`` as the console script beside this interpreter (or on PATH), or, for an
    in-place build (scripts/dev_link.sh), which has none, the module it runs."""
    beside = Path(sys.executable).with_name("tinytorch-run")
    found = str(beside) if beside.exists() else shutil.which("tinytorch-run")
    return [found] if found else [sys.executable, "-m", "tinytorch.distributed.run"]


def untracked() -> set:
    """The checkout's untracked, not ignored files (empty when git can't tell)."""
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "--others", "--exclude-standard"],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return set()
    return set(out.stdout.splitlines()) if out.returncode == 0 else set()
