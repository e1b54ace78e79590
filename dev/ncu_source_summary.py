"""Where a kernel's warps stall, per SASS instruction, from ncu's source page:

    ncu -i REPORT.ncu-rep --page source --csv --print-source sass [-k regex:NAME] > src.csv
    python dev/ncu_source_summary.py src.csv [--top 25]

(a .gz file is read as well). Prints the stall reasons summed over the kernel, then the
instructions with the most stall samples, each with its three largest reasons. Reasons are ncu's
`stall_*` columns (e.g. `stall_wait`: a fixed-latency dependency; `stall_long_sb`: waiting on
global/local memory; `stall_barrier`: a block barrier; `stall_math`: a busy pipe; `stall_mio`:
shared memory / special-function queue; `stall_sleep`/`stall_membar`: mbarrier waits and fences).
"""
from __future__ import annotations

import argparse
import csv
import gzip
import io
from collections import Counter


def read_kernels(path: str) -> list[tuple[str, list[dict[str, str]]]]:
    """(kernel name, rows) for each kernel in the file: a kernel's block starts with its
    "Kernel Name" line, then a header line, then one row per instruction."""
    raw = gzip.open(path, "rt") if path.endswith(".gz") else open(path)
    with raw as f:
        lines = list(csv.reader(io.StringIO(f.read())))
    kernels: list[tuple[str, list[dict[str, str]]]] = []
    i = 0
    while i < len(lines):
        if lines[i] and lines[i][0] == "Kernel Name":
            name, header = lines[i][1], lines[i + 1]
            rows = []
            i += 2
            while i < len(lines) and not (lines[i] and lines[i][0] == "Kernel Name"):
                if len(lines[i]) >= len(header) - 1:
                    rows.append(dict(zip(header, lines[i])))
                i += 1
            kernels.append((name, rows))
        else:
            i += 1
    return kernels


def number(text: str) -> float:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return 0.0


def summarize(name: str, rows: list[dict[str, str]], top: int) -> str:
    reasons = [k for k in (rows[0] if rows else {}) if k.startswith("stall_") and "(Not Issued)" not in k]
    total = Counter()
    for r in rows:
        for k in reasons:
            total[k] += number(r[k])
    samples = sum(total.values()) or 1.0
    out = [name[:150], "  stall samples by reason: " + ", ".join(
        f"{k[6:]} {v / samples:.0%}" for k, v in total.most_common() if v / samples >= 0.01)]
    key = "Warp Stall Sampling (All Samples)"
    ranked = sorted(rows, key=lambda r: -number(r.get(key, "0")))[:top]
    for r in ranked:
        n = number(r.get(key, "0"))
        why = sorted(((number(r[k]), k[6:]) for k in reasons), reverse=True)[:3]
        out.append(f"  {n / samples:6.1%}  {r['Source'].strip()[:60]:60s}  " +
                   ", ".join(f"{k} {v:.0f}" for v, k in why if v > 0))
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    for name, rows in read_kernels(args.csv):
        print(summarize(name, rows, args.top))
        print()


if __name__ == "__main__":
    main()
