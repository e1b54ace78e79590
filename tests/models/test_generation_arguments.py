"""generate()'s arguments are checked before anything runs, each error naming the argument: an empty
prompt, ragged or non-integer prompts, token ids outside the vocabulary, eos/pad ids that are floats,
strings or bools, a generator that is not a tinytorch.Generator, and attention masks holding values
other than 0 and 1 (a float 0.5 was truncated to 0, a -1 read as attended) or a row of padding only.
Valid spellings still work and give the same tokens (a list prompt, a numpy prompt, numpy integer
ids, eos as a list or tuple, a bool or float 0/1 mask). The model is a tiny random-weight llama (tests/support/llm_reference.py)."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt
from tinytorch.models import LlamaForCausalLM

from support.llm_reference import TINY_LLAMA, random_weights, write_checkpoint

IDS = [3, 7, 1, 90, 44]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    w = {k: v.astype(np.float32).astype(np.float64) for k, v in random_weights(TINY_LLAMA, 4).items()}
    folder = write_checkpoint(str(tmp_path_factory.mktemp("gen") / "llama"), TINY_LLAMA, w, 1)
    return LlamaForCausalLM.from_pretrained(folder)


@pytest.mark.parametrize("prompt, error, match", [
    ([], ValueError, r"generate: input_ids is empty; the prompt needs at least one token id"),
    ((), ValueError, r"generate: input_ids is empty"),
    ([[]], ValueError, r"generate: input_ids must be a non-empty \(batch, length\) tensor"),
    ([1, 2.0, 3], TypeError, r"generate: input_ids must hold int token ids, got float 2\.0 in prompt 0"),
    ([1, "2"], TypeError, r"generate: input_ids must hold int token ids, got str '2'"),
    ([1, True], TypeError, r"generate: input_ids must hold int token ids, got bool True"),
    ([1, np.bool_(True)], TypeError, r"generate: input_ids must hold int token ids, got bool (np\.)?True"),
    ([1, np.float32(2)], TypeError, r"generate: input_ids must hold int token ids, got float32 .*2\.0"),
    (np.array([[1.0, 2.0]]), TypeError, r"generate: input_ids must hold integer token ids, got .*float64"),
    ([[1, 2], [3]], ValueError, r"generate: the prompts in input_ids have different lengths \(2 and 1\)"),
    ("hello", TypeError, r"generate: input_ids must be a \(batch, length\) tensor of token ids or a list of them, "
                         r"got str"),
    ([[1, 2], 3], TypeError, r"generate: input_ids must hold int token ids, got int 3 in prompt 1"),
    ([1, 97], ValueError, r"generate: input_ids must be token ids in \[0, 97\), got 97"),
    ([-1, 2], ValueError, r"generate: input_ids must be token ids in \[0, 97\), got -1"),
])
def test_bad_prompts(model, prompt, error, match):
    with pytest.raises(error, match=match):
        model.generate(prompt, 2)


def test_bad_prompt_tensors(model):
    with pytest.raises(TypeError, match=r"input_ids must hold integer token ids, got .*float32"):
        model.generate(tt.tensor([[1.0, 2.0]]), 2)
    with pytest.raises(TypeError, match=r"input_ids must hold integer token ids, got .*bool"):
        model.generate(tt.tensor([[True, False]]), 2)
    with pytest.raises(ValueError, match=r"input_ids must be a non-empty \(batch, length\) tensor.*\[1, 0\]"):
        model.generate(tt.zeros(1, 0, dtype=tt.int64), 2)
    with pytest.raises(ValueError, match=r"input_ids must be token ids in \[0, 97\), got 1000"):
        model.generate(tt.tensor([[1, 1000]]), 2)


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(eos_token_id=2.0), TypeError, r"generate: eos_token_id must be an int or a list of ints, got 2\.0 \(float\)"),
    (dict(eos_token_id="2"), TypeError, r"generate: eos_token_id must be an int or a list of ints, got '2' \(str\)"),
    (dict(eos_token_id=True), TypeError, r"generate: eos_token_id must be an int or a list of ints, got True"),
    (dict(eos_token_id=[2, 3.0]), TypeError, r"generate: eos_token_id must be an int or a list of ints"),
    (dict(eos_token_id={2}), TypeError, r"generate: eos_token_id must be an int or a list of ints"),
    (dict(eos_token_id=-1), ValueError, r"generate: eos_token_id must be >= 0, got -1"),
    (dict(pad_token_id=0.0), TypeError, r"generate: pad_token_id must be an int, got 0\.0 \(float\)"),
    (dict(pad_token_id="0"), TypeError, r"generate: pad_token_id must be an int, got '0' \(str\)"),
    (dict(pad_token_id=97), ValueError, r"generate: pad_token_id must be a token id in \[0, 97\), got 97"),
    (dict(generator="x"), TypeError, r"generate: generator must be a tinytorch\.Generator, got str"),
    (dict(generator=1234, do_sample=True), TypeError, r"generate: generator must be a tinytorch\.Generator, got int"),
    (dict(streamer=5), TypeError, r"generate: streamer must be callable or have put\(\), got int"),
])
def test_bad_token_ids_generator_and_streamer(model, kwargs, error, match):
    with pytest.raises(error, match=match):
        model.generate([IDS], 3, **kwargs)


@pytest.mark.parametrize("mask, match", [
    ([[1, 1, 0.5, 1, 1]], r"attention_mask must hold only 0 \(padding\) and 1 \(tokens\), got 0\.5"),
    ([[-1, 1, 1, 1, 1]], r"attention_mask must hold only 0 \(padding\) and 1 \(tokens\), got -1"),
    ([[0, 2, 1, 1, 1]], r"attention_mask must hold only 0 \(padding\) and 1 \(tokens\), got 2"),
    ([[0, 0, 0, 0, 0]], r"attention_mask row 0 is all 0: each prompt needs at least one token"),
    ([[1, 1, 1, 1]], r"attention_mask must have input_ids' shape \[1, 5\], got \[1, 4\]"),
])
def test_bad_attention_masks(model, mask, match):
    with pytest.raises(ValueError, match=match):
        model.generate([IDS], 3, attention_mask=tt.tensor(mask))


def test_float_half_mask_is_not_silently_truncated(model):
    """0.5 used to become 0 (int64 truncation): the position silently masked out."""
    mask = tt.tensor([[0.0, 1.0, 1.0, 1.0, 1.0], [0.5, 1.0, 1.0, 1.0, 1.0]])
    with pytest.raises(ValueError, match=r"got 0\.5 \(.*float32\)"):
        model.generate([IDS, IDS], 3, attention_mask=mask)
    with pytest.raises(TypeError, match=r"attention_mask must be a \(batch, length\) tensor of 0 and 1, got str"):
        model.generate([IDS], 3, attention_mask="1")


def test_valid_spellings_give_the_same_tokens(model):
    want = model.generate(tt.tensor([IDS]), 4).tolist()
    assert model.generate(IDS, 4).tolist() == want
    assert model.generate(tuple(IDS), 4).tolist() == want
    assert model.generate([IDS], 4).tolist() == want
    assert model.generate(np.array(IDS), 4).tolist() == want                   # numpy prompts and ids
    assert model.generate(np.array([IDS], dtype=np.int32), 4).tolist() == want
    assert model.generate([np.int64(t) for t in IDS], 4).tolist() == want
    for mask in (tt.ones(1, 5, dtype=tt.int64), tt.ones(1, 5, dtype=tt.bool), tt.ones(1, 5), [[1] * 5]):
        assert model.generate([IDS], 4, attention_mask=mask).tolist() == want
    eos = want[0][6]
    for spelling in (eos, [eos], (eos,), [eos, 96], np.int64(eos), [np.int32(eos)]):
        out = model.generate([IDS], 4, eos_token_id=spelling).tolist()[0]
        assert out[:7] == want[0][:7] and len(out) <= len(want[0])
    padded = model.generate([[0, 0] + IDS[:3], IDS], 3, attention_mask=tt.tensor([[0, 0, 1, 1, 1], [1] * 5]),
                            pad_token_id=0)
    assert padded[0, 2:].tolist() == model.generate(IDS[:3], 3, pad_token_id=0)[0].tolist()
    g = tt.Generator().manual_seed(3)
    a = model.generate([IDS], 4, do_sample=True, generator=g).tolist()
    assert a == model.generate([IDS], 4, do_sample=True, generator=tt.Generator().manual_seed(3)).tolist()
