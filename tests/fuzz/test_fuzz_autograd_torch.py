"""Autograd misuse programs against torch (pytest -m fuzz): both raise, or both give the same
gradients (tests/fuzz/autograd_programs.py)."""
import collections
import json
import os
import sys

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings

from fuzz import autograd_programs
from fuzz.run import run_isolated

pytest.importorskip("torch")
pytestmark = pytest.mark.fuzz


def _known(p, r) -> bool:
    """docs/reliability.md: a tensor hook registered before an in-place change of that tensor runs on
    the new version's gradient here; PyTorch keeps it on the old one."""
    hooks = [k for k, s in enumerate(p["steps"]) if s.startswith("hook_")]
    inplace = [k for k, s in enumerate(p["steps"]) if s.startswith("inplace")]
    return r["status"] == "rejects" and bool(hooks) and bool(inplace) and min(hooks) < max(inplace)


def test_autograd_programs_against_torch(tmp_path):
    programs = []

    @seed(31)
    @settings(max_examples=3000, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(autograd_programs.program())
    def collect(p):
        programs.append(p)

    collect()
    listing = tmp_path / "programs.json"
    listing.write_text(json.dumps(programs))
    child = os.path.join(os.path.dirname(os.path.abspath(autograd_programs.__file__)), "autograd_programs.py")
    results = run_isolated(lambda start: [sys.executable, child, str(listing), "torch", str(start)], len(programs))
    counts = collections.Counter(r["status"] for r in results.values())
    print(dict(counts))
    bad = [(programs[i], r) for i, r in results.items()
           if r["status"] not in ("agree", "agree_error") and not _known(programs[i], r)]
    assert not bad, (counts, bad[:10])
