"""Fused CPU LSTM: a 2-layer LSTM language-model training step (Embedding 10k x 256 ->
LSTM(256, 512, 2 layers) -> Linear -> cross_entropy, backward, AdamW; seq 35 x batch 20) and
composed_bench's LSTM(64, 128, 2 layers) forward + backward, tinytorch vs PyTorch alternating in
one process (medians, ratio = tinytorch / torch). --composed also times tinytorch's composed
per-step path (nn.modules.rnn._FUSED = False), the reference the fused kernels replace.

    .venv-ref/bin/python bench/rnn_bench.py [--threads 2] [--rounds 9] [--composed]
"""
from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import compare, try_import_torch  # noqa: E402
import tinytorch as tt  # noqa: E402
from tinytorch.nn.modules import rnn as rnn_module  # noqa: E402

VOCAB, EMB, HIDDEN, SEQ, BATCH = 10_000, 256, 512, 35, 20


def lm_step(lib):
    """One training step of the LSTM language model, as a closure (its parameters built once)."""
    lib.manual_seed(0)
    emb, lstm = lib.nn.Embedding(VOCAB, EMB), lib.nn.LSTM(EMB, HIDDEN, num_layers=2)
    head = lib.nn.Linear(HIDDEN, VOCAB)
    params = list(emb.parameters()) + list(lstm.parameters()) + list(head.parameters())
    opt = lib.optim.AdamW(params, lr=1e-3)
    tokens = lib.randint(0, VOCAB, (SEQ + 1, BATCH))

    def step():
        out, _ = lstm(emb(tokens[:-1]))
        loss = lib.nn.functional.cross_entropy(head(out).reshape(-1, VOCAB), tokens[1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    return step


def small_lstm(lib):
    """composed_bench.py's LSTM row: LSTM(64, 128, 2 layers), seq 32 x batch 16, forward + backward."""
    lib.manual_seed(0)
    lstm = lib.nn.LSTM(64, 128, num_layers=2)
    seq = lib.randn(32, 16, 64, requires_grad=True)

    def step():
        lstm(seq)[0].sum().backward()
    return step


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--composed", action="store_true", help="also time tinytorch's composed per-step path")
    args = p.parse_args()
    tt.set_num_threads(args.threads)
    torch = try_import_torch()
    if torch is None:
        return
    torch.set_num_threads(args.threads)
    print(f"{args.threads} threads, torch {torch.__version__}")
    cases = {f"LSTM LM train step (seq {SEQ} x batch {BATCH}, 2x512)": lm_step,
             "LSTM(64, 128, 2 layers), seq 32 x batch 16, fwd+bwd": small_lstm}
    for name, build in cases.items():
        ours, ref = build(tt), build(torch)
        compare(name, ours, ref, rounds=args.rounds, ref_name="torch")
        if args.composed:
            rnn_module._FUSED = False
            try:
                compare(name + " [composed]", ours, ref, rounds=args.rounds, ref_name="torch")
            finally:
                rnn_module._FUSED = True


if __name__ == "__main__":
    main()
