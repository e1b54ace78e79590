"""Checkpoint and autograd-misuse fuzzing, CI tier (tests/fuzz/checkpoints.py,
tests/fuzz/autograd_programs.py): seeded hypothesis corpora, each item run in a child
interpreter. A damaged checkpoint loads or raises RuntimeError; a misused graph raises one of
PyTorch's exception types; nothing crashes or hangs. The torch comparison of the autograd
programs is in test_fuzz_autograd_torch.py (pytest -m fuzz)."""
import collections
import json
import os
import sys

import numpy as np
from hypothesis import HealthCheck, Phase, given, seed, settings

import tinytorch as tt
from fuzz import autograd_programs, checkpoints
from fuzz.run import run_isolated

HERE = os.path.dirname(os.path.abspath(checkpoints.__file__))


def _draw(strategy, n, seed_value):
    out = []

    @seed(seed_value)
    @settings(max_examples=n, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(x):
        out.append(x)

    collect()
    return out


def test_damaged_checkpoints_load_or_raise_runtime_error(tmp_path):
    rng = np.random.default_rng(0)
    state = {"w": tt.tensor(rng.standard_normal((3, 4)), dtype=tt.float32), "i": tt.arange(5),
             "h": tt.tensor(rng.standard_normal(6)).to(tt.bfloat16)}
    good = tmp_path / "good.safetensors"
    tt.save(state, str(good))
    data = good.read_bytes()
    header_len = int.from_bytes(data[:8], "little")
    mutations = _draw(checkpoints.mutation(len(data), header_len), 1500, 13)
    paths = []
    for k, m in enumerate(mutations):
        p = tmp_path / f"m{k}.safetensors"
        p.write_bytes(checkpoints.apply(data, m))
        paths.append(str(p))
    listing = tmp_path / "paths.json"
    listing.write_text(json.dumps(paths))
    child = os.path.join(HERE, "checkpoints.py")
    results = run_isolated(lambda start: [sys.executable, child, str(listing), str(start)], len(paths))
    counts = collections.Counter(r["status"] for r in results.values())
    bad = [(mutations[i], r) for i, r in results.items() if r["status"] not in ("loaded", "refused")]
    assert not bad, (counts, bad[:10])
    assert counts["refused"] > len(paths) // 2, counts      # the corpus really damages headers


def test_autograd_misuse_never_crashes(tmp_path):
    programs = _draw(autograd_programs.program(), 800, 29)
    listing = tmp_path / "programs.json"
    listing.write_text(json.dumps(programs))
    child = os.path.join(HERE, "autograd_programs.py")
    results = run_isolated(lambda start: [sys.executable, child, str(listing), "numpy", str(start)], len(programs))
    counts = collections.Counter(r["status"] for r in results.values())
    bad = [(programs[i], r) for i, r in results.items() if r["status"] != "agree"]
    assert not bad, (counts, bad[:10])
