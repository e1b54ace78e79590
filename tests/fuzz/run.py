"""Runs a fuzz corpus in child interpreters: a case that kills the child (a crash) or stops it past
its deadline (a hang) is recorded, and a fresh child carries on after it."""
from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import tempfile

import tinytorch as tt

CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "child.py")
# The child imports the tinytorch this process imported, not whatever its cwd would find.
_ENV = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(tt.__file__))))
FAILING = ("crash", "hang", "mismatch", "bad_error")


def run_isolated(command, n: int, case_seconds: int = 20) -> dict:
    """Runs items 0..n-1 through child processes, `command(start)` giving the argv of a child that
    handles items start.. in order, printing one JSON line {"i": ..., "status": ...} per item. A
    child that dies or outlives its deadline leaves its current item as a "crash" or a "hang", and
    a fresh child carries on after it. Returns {i: result}."""
    results: dict = {}
    start = 0
    env = dict(_ENV, TINYTORCH_FUZZ_CASE_SECONDS=str(case_seconds))
    while start < n:
        proc = subprocess.run(command(start), capture_output=True, text=True, env=env,
                              timeout=120 + case_seconds + 2 * (n - start))
        for line in proc.stdout.splitlines():
            if line.startswith("{"):
                r = json.loads(line)
                results[r.pop("i")] = r
        if proc.returncode == 0:
            break
        dead = next((i for i in range(start, n) if i not in results), None)
        if dead is None:        # every item answered, then the child failed on its way out
            results[n - 1] = {"status": "crash", "detail": f"exit {proc.returncode} at exit: {proc.stderr[-400:]}"}
            break
        kind = "hang" if "Timeout (" in proc.stderr else "crash"
        results[dead] = {"status": kind, "detail": f"exit {proc.returncode}: {proc.stderr[-400:]}"}
        start = dead + 1
    return results


def run_cases(cases: list, tier: str, python: str = sys.executable,
              case_seconds: int = 20) -> tuple[collections.Counter, list]:
    """(counts by status, [(case, result)] for every case not in 'agree'/'agree_error'); a case
    running longer than `case_seconds` is a hang."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(cases, f)
        path = f.name
    try:
        results = run_isolated(lambda start: [python, CHILD, path, tier, str(start)], len(cases), case_seconds)
    finally:
        os.unlink(path)
    counts = collections.Counter(r["status"] for r in results.values())
    notes = [(cases[i], results[i]) for i in sorted(results) if results[i]["status"] not in ("agree", "agree_error")]
    return counts, notes


def summary(counts: collections.Counter, notes: list, limit: int = 25) -> str:
    lines = [f"{sum(counts.values())} cases: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))]
    for c, r in [n for n in notes if n[1]["status"] in FAILING][:limit]:
        lines.append(f"{r['status']}: {r.get('detail', '')}\n    case: {json.dumps(c)}")
    return "\n".join(lines)


if __name__ == "__main__":      # python tests/fuzz/run.py numpy|torch N SEED [REPORT.json]
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from fuzz.strategies import corpus
    tier, n, seed_value = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    counts, notes = run_cases(corpus(n, seed_value), tier)
    print(summary(counts, notes, limit=60))
    if len(sys.argv) > 4:
        json.dump({"counts": counts, "notes": notes}, open(sys.argv[4], "w"), indent=0)
