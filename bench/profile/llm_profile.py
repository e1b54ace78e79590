"""Where a SmolLM2 decode step (or a prefill) spends its time, by op kind: each leaf module
(projections, lm_head, norms, embedding) and the functional pieces of a layer (rotary, KV-cache
write, attention, SiLU * up) are timed inclusively with wrappers; the rest of the step (Python
glue, views, residual adds, the dispatcher between them) is "other".

    python bench/profile/llm_profile.py [--threads 2] [--steps 32] [--prefill 0|512] [--gguf PATH]

The wrappers add ~1 us per call; the unwrapped step time is printed first for scale.
"""
from __future__ import annotations

import argparse
import collections
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # bench/: _harness, the *_bench scripts
from llm_bench import default_gguf  # noqa: E402
import tinytorch as tt  # noqa: E402
from tinytorch.models import LlamaForCausalLM, layers  # noqa: E402
from tinytorch.models import kv_cache as kv_module  # noqa: E402

TOTALS: dict = collections.defaultdict(float)
COUNTS: dict = collections.defaultdict(int)


def wrap(kind: str, fn):
    def timed(*a, **k):
        t = time.perf_counter()
        r = fn(*a, **k)
        TOTALS[kind] += time.perf_counter() - t
        COUNTS[kind] += 1
        return r
    return timed


def instrument(model) -> None:
    for name, mod in model.named_modules():
        leaf = name.rsplit(".", 1)[-1]
        if leaf in ("q_proj", "k_proj", "v_proj", "o_proj", "qkv_proj"):
            mod.forward = wrap(f"attn {leaf} ({type(mod).__name__})", mod.forward)
        elif leaf in ("gate_proj", "up_proj", "down_proj", "gate_up_proj"):
            mod.forward = wrap(f"mlp {leaf} ({type(mod).__name__})", mod.forward)
        elif leaf == "lm_head":
            mod.forward = wrap(f"lm_head ({type(mod).__name__})", mod.forward)
        elif leaf == "embed_tokens":
            mod.forward = wrap("embedding", mod.forward)
        elif type(mod).__name__ == "RMSNorm":
            mod.forward = wrap("rms_norm", mod.forward)
        elif leaf == "rotary_emb":
            mod.forward = wrap("rotary tables", mod.forward)
    layers.apply_rotary_pos_emb = wrap("rotary", layers.apply_rotary_pos_emb)
    kv_module.KVCache.update = wrap("kv cache write", kv_module.KVCache.update)

    class FProxy:  # layers.F with sdpa and silu timed
        def __getattr__(self, n):
            return getattr(tt.nn.functional, n)
    proxy = FProxy()
    proxy.scaled_dot_product_attention = wrap("attention (sdpa)", tt.nn.functional.scaled_dot_product_attention)
    proxy.silu = wrap("silu", tt.nn.functional.silu)
    layers.F = proxy


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gguf", default=None)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=32)
    ap.add_argument("--prefill", type=int, default=0, help="profile one prefill of this many tokens instead")
    args = ap.parse_args()
    tt.set_num_threads(args.threads)
    model = LlamaForCausalLM.from_gguf(args.gguf or default_gguf())
    prompt = tt.tensor([list(range(100, 116))])

    def decode_steps(n):
        cache = model.make_cache(1, 16 + n + 1)
        model(prompt, past_key_values=cache, logits_to_keep=1)
        tok = tt.tensor([[200]])
        t = time.perf_counter()
        for _ in range(n):
            model(tok, past_key_values=cache)
        return (time.perf_counter() - t) / n

    def prefill():
        ids = tt.tensor([[100 + (7 * i) % 9000 for i in range(args.prefill)]])
        t = time.perf_counter()
        model(ids, past_key_values=model.make_cache(1, args.prefill), logits_to_keep=1)
        return time.perf_counter() - t

    with tt.no_grad():
        run = prefill if args.prefill else (lambda: decode_steps(args.steps))
        run()
        plain = statistics.median(run() for _ in range(3))
        instrument(model)
        TOTALS.clear(), COUNTS.clear()
        reps = 3
        t = time.perf_counter()
        for _ in range(reps):
            run()
        units = reps * (1 if args.prefill else args.steps)
        wrapped = (time.perf_counter() - t) / units
    what = f"prefill of {args.prefill} tokens" if args.prefill else "decode step"
    print(f"{what}: {plain * 1e3:.2f} ms unwrapped, {wrapped * 1e3:.2f} ms with the timers, "
          f"threads {args.threads}, load {os.getloadavg()[0]:.1f}")
    # inclusive times: projections/sdpa/rotary run inside self_attn etc.; leaves don't nest
    per = {k: v / units for k, v in TOTALS.items()}
    for k, v in sorted(per.items(), key=lambda kv: -kv[1]):
        print(f"  {k:40s} {v * 1e3:8.3f} ms  {100 * v / wrapped:5.1f}%  ({COUNTS[k] // units} calls)")
    other = wrapped - sum(per.values())
    print(f"  {'other (glue, residual adds, dispatch)':40s} {other * 1e3:8.3f} ms  {100 * other / wrapped:5.1f}%")


if __name__ == "__main__":
    main()
