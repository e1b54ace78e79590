"""docs/distributed.md's programs, run as a user runs them (tests/commands/test_user_commands.py's
way): a Python block whose first line is a ``# <name>.py`` comment is a complete program; it is
saved under that name in a fresh, empty directory and started there with the launcher command the
document shows for it (``tinytorch-run --nproc-per-node N --backend mpi <name>.py``: MPI on CPU),
and its output is checked against what the document says it prints. The checkout must not change."""
from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from dist_helpers import needs_mpi
from support.commands import ROOT, tinytorch_run, untracked

DOC = "docs/distributed.md"
TEXT = (ROOT / DOC).read_text(encoding="utf-8")
PROGRAMS = dict((m.group(1), m.group(0)) for m in re.finditer(r"(?<=```python\n)# (\w+\.py)\b.*?(?=```)", TEXT, re.S))
STEP = re.compile(r"^step (\d+): loss ([\d.]+)$", re.M)


def _command(name: str) -> tuple:
    """The launcher command the document shows for ``name`` and the comment after it."""
    found = re.findall(rf"^(tinytorch-run [^#\n]*\b{re.escape(name)})[ \t]*(?:#[ \t]*(.*))?$", TEXT, re.M)
    assert len(found) == 1, f"{DOC} should show one tinytorch-run command for {name}, shows {found}"
    return found[0]


def _argv(command: str) -> list:
    """The command with tinytorch-run as installed (``support.commands.tinytorch_run``)."""
    words = shlex.split(command)
    assert words[0] == "tinytorch-run"
    return tinytorch_run() + words[1:]


def run_documented(name: str, tmp_path: Path) -> tuple:
    """Saves the program ``name`` in a fresh directory, runs its documented command there; returns
    (its output, the comment the document prints beside the command)."""
    assert name in PROGRAMS, f"{DOC} has no program {name} (programs: {sorted(PROGRAMS)})"
    command, comment = _command(name)
    work = tmp_path / "work"
    work.mkdir()
    (work / name).write_text(PROGRAMS[name], encoding="utf-8")
    env = dict(os.environ, HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / "cache"), PYTHONUNBUFFERED="1")
    env.setdefault("OMP_NUM_THREADS", "1")
    before = untracked()
    p = subprocess.run(_argv(command), cwd=work, env=env, capture_output=True, text=True, timeout=120)
    out = p.stdout + p.stderr
    assert p.returncode == 0, f"{command} exited {p.returncode}:\n{out[-6000:]}"
    assert untracked() == before, f"{command} wrote into the checkout: {sorted(untracked() - before)}"
    return out, comment


def test_every_program_of_the_document_has_a_test():
    assert sorted(PROGRAMS) == ["dcp_resume.py", "fsdp_train.py", "tp_fsdp_train.py", "tp_generate.py"], \
        f"{DOC}'s programs changed ({sorted(PROGRAMS)}): give each a test here"


def _losses_as_documented(out: str, comment: str) -> None:
    """Rank 0's 8 steps, the first and last loss as the comment ("falls from 6.4 to about 1.2") says."""
    steps = [(int(k), float(v)) for k, v in STEP.findall(out)]
    assert [k for k, _ in steps] == list(range(8)), out
    first, last = re.search(r"falls from ([\d.]+) to about ([\d.]+)", comment).groups()
    assert abs(steps[0][1] - float(first)) < 0.1, (steps, comment)
    assert abs(steps[-1][1] - float(last)) < 0.25, (steps, comment)


@needs_mpi
def test_fsdp_example(tmp_path):
    out, comment = run_documented("fsdp_train.py", tmp_path)
    _losses_as_documented(out, comment)


@needs_mpi
def test_distributed_checkpoint_example(tmp_path):
    out, comment = run_documented("dcp_resume.py", tmp_path)
    assert comment == "the resumed losses equal the continued ones"
    found = re.search(r"^step 4: resumed losses \[([\d., ]+)\], continued without reloading \[([\d., ]+)\]$", out, re.M)
    assert found, out
    resumed, continued = ([float(v) for v in g.split(",")] for g in found.groups())
    assert len(resumed) == 2 and resumed == continued, out


@needs_mpi
def test_tensor_parallel_generate_example(tmp_path):
    out, _ = run_documented("tp_generate.py", tmp_path)
    # the document's sample output, the line after the command
    shown = re.search(r"^# (rank 0: .*; generated \[[\d, ]+), \.\.\.\]", TEXT, re.M).group(1)
    lines = re.findall(r"^rank (\d): 4 of 8 heads, 2 of 4 KV heads; generated (\[[\d, ]+\])$", out, re.M)
    assert sorted(r for r, _ in lines) == ["0", "1"], out
    assert lines[0][1] == lines[1][1], out                    # every rank decoded the same tokens
    assert shown in out, (shown, out)


@needs_mpi
def test_tensor_parallel_with_fsdp_example(tmp_path):
    out, comment = run_documented("tp_fsdp_train.py", tmp_path)
    _losses_as_documented(out, comment)
