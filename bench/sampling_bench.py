"""tinytorch.multinomial (a composite of rand, topk/argmax, cumsum and a vectorized binary search)
and a few distributions' sample + log_prob against PyTorch's kernels, alternating in one process;
median ms and the ratio (tinytorch / torch).

    /path/to/venv-with-torch/bin/python bench/sampling_bench.py [--device cpu|cuda]
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import compare, try_import_torch  # noqa: E402
import tinytorch as tt  # noqa: E402


def cases(lib, device):
    lib.manual_seed(0)
    vocab = lib.rand(8, 32000, device=device).softmax(-1)          # LLM-style next-token sampling
    small = lib.rand(64, 100, device=device) + 0.01
    loc, scale = lib.zeros(4096, device=device), lib.ones(4096, device=device)
    conc = lib.rand(4096, device=device) + 0.5
    D = lib.distributions
    sync = (lambda: lib.cuda.synchronize()) if device == "cuda" else (lambda: None)

    def run(fn):
        def go():
            fn()
            sync()
        return go
    return {
        "multinomial (8, 32000) 1 sample": run(lambda: lib.multinomial(vocab, 1)),
        "multinomial (64, 100) 50 without replacement": run(lambda: lib.multinomial(small, 50)),
        "multinomial (64, 100) 1000 with replacement": run(lambda: lib.multinomial(small, 1000, True)),
        "Normal(4096).rsample((64,)) + log_prob": run(lambda: D.Normal(loc, scale).log_prob(
            D.Normal(loc, scale).rsample((64,)))),
        "Gamma(4096).sample((16,))": run(lambda: D.Gamma(conc, scale).sample((16,))),
        "Categorical(8, 32000).sample((4,))": run(lambda: D.Categorical(probs=vocab).sample((4,))),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    torch = try_import_torch()
    ours = cases(tt, args.device)
    theirs = cases(torch, args.device) if torch else {}
    for name, fn in ours.items():
        if torch:
            compare(name, fn, theirs[name], ref_name="torch")
        else:
            compare(name, fn, fn, ref_name="itself")


if __name__ == "__main__":
    main()
