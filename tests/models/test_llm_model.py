"""LlamaForCausalLM on tiny random llama (GQA, untied) and qwen2 (q/k/v bias, tied, one KV head)
checkpoints the tests write as HF safetensors: logits against a float64 numpy forward, sharded
loading, dtype/device arguments, the KV-cache decode equal to the full forward, a left-padded batch
equal to each prompt alone, generation (greedy, eos, sampling with a seed, the logits processors)
and the errors for bad checkpoints and arguments."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import tinytorch as tt
from tinytorch.models import LlamaForCausalLM
from tinytorch.models.generation import apply_repetition_penalty, apply_top_k, apply_top_p

from support.llm_reference import (TINY_LLAMA, TINY_QWEN2, forward_np, random_weights, write_checkpoint,
                                   write_safetensors)
from support.numeric import GRAD_TOL, assert_close

# A whole network chains ~15 float32 roundings per layer: compared with GRAD_TOL's float32 row.
NET_TOL_F32 = GRAD_TOL["float32"]
CONFIGS = {"llama": TINY_LLAMA, "qwen2": TINY_QWEN2}
IDS = [3, 7, 1, 90, 44, 5, 6, 2, 8, 9, 11]


def _checkpoint(tmp_path, name, shards=1, seed=0):
    cfg = CONFIGS[name]
    w = {k: v.astype(np.float32).astype(np.float64) for k, v in random_weights(cfg, seed).items()}
    return write_checkpoint(str(tmp_path / f"{name}{shards}"), cfg, w, shards), cfg, w


@pytest.fixture(scope="module", params=["llama", "qwen2"])
def tiny(request, tmp_path_factory):
    folder, cfg, w = _checkpoint(tmp_path_factory.mktemp("ckpt"), request.param)
    return folder, cfg, w, LlamaForCausalLM.from_pretrained(folder)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shards", [1, 3])
@pytest.mark.parametrize("name", ["llama", "qwen2"])
def test_logits_match_numpy(tmp_path, name, shards, dtype):
    folder, cfg, w = _checkpoint(tmp_path, name, shards)
    model = LlamaForCausalLM.from_pretrained(folder, dtype=getattr(tt, dtype))
    assert model.lm_head.weight.dtype == getattr(tt, dtype)
    if cfg["tie_word_embeddings"]:
        assert model.lm_head.weight is model.model.embed_tokens.weight
    with tt.no_grad():
        out = model(tt.tensor([IDS]))[0]
    assert_close(out, forward_np(w, cfg, IDS), dtype, tol=NET_TOL_F32 if dtype == "float32" else None)


def test_state_dict_names_are_transformers(tiny):
    _, cfg, w, model = tiny
    names = set(model.state_dict())
    assert set(w) <= names and names - set(w) <= {"lm_head.weight"}


def test_kv_cache_decode_equals_full_forward(tiny):
    _, cfg, w, model = tiny
    with tt.no_grad():
        full = model(tt.tensor([IDS]))[0]
        cache = model.make_cache(1, len(IDS))
        steps = [model(tt.tensor([IDS[:4]]), past_key_values=cache)[0]]
        steps.append(model(tt.tensor([IDS[4:6]]), past_key_values=cache)[0])  # a chunk after a prefix
        for t in IDS[6:]:
            steps.append(model(tt.tensor([[t]]), past_key_values=cache)[0])
    assert cache.length == len(IDS)
    assert_close(tt.cat(steps, 0), full.numpy(), "float32", tol=NET_TOL_F32)


def test_left_padded_batch_equals_each_prompt_alone(tiny):
    _, cfg, w, model = tiny
    prompts = [IDS[:5], IDS, IDS[2:9]]
    T = max(map(len, prompts))
    ids = tt.tensor([[0] * (T - len(p)) + p for p in prompts])
    mask = tt.tensor([[0] * (T - len(p)) + [1] * len(p) for p in prompts])
    with tt.no_grad():
        logits = model(ids, attention_mask=mask)
        batch = model.generate(ids, 6, attention_mask=mask)
        for i, p in enumerate(prompts):
            alone = model(tt.tensor([p]))[0]
            assert_close(logits[i, T - len(p):], alone.numpy(), "float32", tol=NET_TOL_F32)
            assert batch[i, T - len(p):].tolist() == model.generate(tt.tensor([p]), 6)[0].tolist()
    assert not np.isnan(logits.numpy()).any()  # padded queries see themselves: no empty softmax rows


def test_greedy_generate_is_the_argmax_chain(tiny):
    _, cfg, w, model = tiny
    out = model.generate(tt.tensor([IDS[:4]]), 8)
    assert out.shape == (1, 12) and out[0, :4].tolist() == IDS[:4]
    assert model.generate(IDS[:4], 8).tolist() == out.tolist()      # deterministic; a list is one prompt
    seq = list(IDS[:4])
    for _ in range(8):  # the float64 reference picks the same tokens
        seq.append(int(np.argmax(forward_np(w, cfg, seq)[-1])))
    assert out[0].tolist() == seq


def test_eos_stops_and_pads(tiny):
    _, cfg, w, model = tiny
    prompts = tt.tensor([IDS[:4], IDS[4:8]])
    free = model.generate(prompts, 6)[:, 4:].tolist()
    eos = free[0][1]
    stops = [row.index(eos) if eos in row else None for row in free]
    n = 6 if None in stops else max(stops) + 1   # generation ends when every row has finished
    expected = [row[:n] if s is None else (row[:s + 1] + [0] * 6)[:n] for row, s in zip(free, stops)]
    out = model.generate(prompts, 6, eos_token_id=[eos], pad_token_id=0)
    assert out[:, 4:].tolist() == expected
    single = model.generate(tt.tensor([IDS[:4]]), 6, eos_token_id=eos)
    assert single.shape == (1, 4 + stops[0] + 1)


def test_sampling_is_reproducible_with_a_seed(tiny):
    _, cfg, w, model = tiny
    kw = dict(do_sample=True, temperature=0.7, top_k=20, top_p=0.9, repetition_penalty=1.3)
    tt.manual_seed(5)
    a = model.generate(tt.tensor([IDS[:4]]), 10, **kw)
    tt.manual_seed(5)
    b = model.generate(tt.tensor([IDS[:4]]), 10, **kw)
    g = tt.Generator().manual_seed(5)
    c = model.generate(tt.tensor([IDS[:4]]), 10, generator=g, **kw)
    assert a.tolist() == b.tolist() and c.shape == a.shape
    greedy = model.generate(tt.tensor([IDS[:4]]), 10)
    assert model.generate(tt.tensor([IDS[:4]]), 10, do_sample=True, top_k=1).tolist() == greedy.tolist()
    streamed = []
    model.generate(tt.tensor([IDS[:4]]), 5, streamer=lambda t: streamed.append(t.tolist()))
    assert streamed == [[x] for x in greedy[0, 4:9].tolist()]


def test_logits_processors_match_numpy():
    rng = np.random.default_rng(0)
    s = rng.normal(size=(3, 10))
    st = tt.tensor(s)
    seen = np.array([[0, 2, 2], [5, 6, 7], [9, 9, 1]])
    ref = s.copy()
    for r in range(3):
        for t in set(seen[r]):
            ref[r, t] = ref[r, t] * 1.5 if ref[r, t] < 0 else ref[r, t] / 1.5
    assert_close(apply_repetition_penalty(st, tt.tensor(seen), 1.5), ref, "float64")
    top3 = apply_top_k(st, 3).numpy()
    assert ((top3 > -np.inf).sum(1) == 3).all()
    assert (np.sort(s, 1)[:, -3:] == np.sort(top3, 1)[:, -3:]).all()
    p = np.exp(s) / np.exp(s).sum(1, keepdims=True)
    kept = apply_top_p(st, 0.6).numpy() > -np.inf
    for r in range(3):  # the smallest set of top tokens whose mass reaches 0.6
        order = np.argsort(-p[r])
        n = int(np.searchsorted(np.cumsum(p[r][order]), 0.6) + 1)
        assert set(np.nonzero(kept[r])[0]) == set(order[:n])


@pytest.mark.parametrize("kwargs, match", [
    (dict(top_p=0.0), "top_p"), (dict(top_p=1.5), "top_p"), (dict(temperature=-1.0), "temperature"),
    (dict(top_k=0), "top_k"), (dict(max_new_tokens=-1), "max_new_tokens"),
    (dict(repetition_penalty=0.0), "repetition_penalty"), (dict(max_new_tokens=100), "max_new_tokens"),
    (dict(do_sample=True, temperature=0.0), "temperature"),
    (dict(attention_mask=tt.ones(1, 3)), "attention_mask"),
])
def test_generate_rejects_bad_arguments(tiny, kwargs, match):
    _, cfg, w, model = tiny
    kwargs = {"max_new_tokens": 4, **kwargs}
    with pytest.raises(ValueError, match=match):
        model.generate(tt.tensor([IDS[:4]]), **kwargs)


def test_prompt_longer_than_context(tiny):
    _, cfg, w, model = tiny
    ids = tt.zeros(1, cfg["max_position_embeddings"] + 1, dtype=tt.int64)
    with pytest.raises(ValueError, match="input_ids of length 65.*max_position_embeddings=64"):
        model.generate(ids, 1)
    with pytest.raises(ValueError, match="max_position_embeddings=64"):
        model(ids)


def test_bad_checkpoints(tmp_path):
    folder, cfg, w = _checkpoint(tmp_path, "llama")
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(dict(cfg, intermediate_size=100), f)
    with pytest.raises(ValueError, match=r"gate_proj.weight: checkpoint \[96, 64\], model \[100, 64\]"):
        LlamaForCausalLM.from_pretrained(folder)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f)
    del w["model.norm.weight"]
    write_safetensors(os.path.join(folder, "model.safetensors"), w)
    with pytest.raises(ValueError, match="missing.*model.norm.weight"):
        LlamaForCausalLM.from_pretrained(folder)
    data = open(os.path.join(folder, "model.safetensors"), "rb").read()
    with open(os.path.join(folder, "model.safetensors"), "wb") as f:
        f.write(data[:-100])
    with pytest.raises(RuntimeError, match="model.safetensors.*truncated"):
        LlamaForCausalLM.from_pretrained(folder)
    with pytest.raises(FileNotFoundError, match="config.json"):
        LlamaForCausalLM.from_pretrained(tmp_path)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(dict(cfg, model_type="gpt_neox"), f)
    with pytest.raises(ValueError, match="gpt_neox"):
        LlamaForCausalLM.from_pretrained(folder)


def test_half_precision_checkpoint_keeps_its_dtype(tmp_path):
    cfg = TINY_LLAMA
    w = random_weights(cfg)
    folder = str(tmp_path / "f16")
    write_checkpoint(folder, cfg, {})
    write_safetensors(os.path.join(folder, "model.safetensors"), w, np.float16)
    model = LlamaForCausalLM.from_pretrained(folder)
    assert model.model.layers[0].mlp.up_proj.weight.dtype == tt.float16
    w16 = {k: v.astype(np.float16).astype(np.float64) for k, v in w.items()}
    m32 = LlamaForCausalLM.from_pretrained(folder, dtype=tt.float32)
    with tt.no_grad():
        assert_close(m32(tt.tensor([IDS]))[0], forward_np(w16, cfg, IDS), "float32", tol=NET_TOL_F32)
        assert model.generate(tt.tensor([IDS[:3]]), 3).shape == (1, 6)
