"""Checks the causal-LM test files share (test_llm_variants*.py, test_llm_qwen_window*.py): the
KV-cache and CUDA-graph decode paths against the full forward, and a model against its transformers
twin (greedy tokens, a left-padded batch). torch is imported only by the transformers checks."""
from __future__ import annotations

import numpy as np

import tinytorch as tt
from tinytorch.models.graph_decode import static_decode_logits

from support.llm_reference import forward_np
from support.numeric import GRAD_TOL, assert_close

NET_TOL_F32 = GRAD_TOL["float32"]  # a whole network in float32 (as test_llm_model.py)
# The transformers twins (test_llm_*_hf.py): the token ids and the common part of the tiny configs
HF_IDS = [3, 7, 1, 90, 44, 5, 6, 2, 8, 9, 11, 60, 17, 33]
HF_BASE = dict(vocab_size=97, hidden_size=64, intermediate_size=96, num_hidden_layers=3, num_attention_heads=4,
               num_key_value_heads=2, max_position_embeddings=64, rms_norm_eps=1e-5)


def cached_logits(model, ids: list[int], prefill: int, chunk: int = 0):
    """Logits of ids run through a KV cache: a prefill, an optional chunk, then one token a step."""
    cache = model.make_cache(1, len(ids))
    with tt.no_grad():
        steps = [model(tt.tensor([ids[:prefill]]), past_key_values=cache)[0]]
        if chunk:
            steps.append(model(tt.tensor([ids[prefill:prefill + chunk]]), past_key_values=cache)[0])
        steps += [model(tt.tensor([[t]]), past_key_values=cache)[0] for t in ids[prefill + chunk:]]
    return tt.cat(steps, 0)


def check_cache_and_graph_step_equal_full_forward(model, ids: list[int]) -> None:
    """Prefill + chunk + single steps, and the CUDA-graph decode step (static cache, run eagerly on
    the CPU), equal the full forward."""
    with tt.no_grad():
        full = model(tt.tensor([ids]))[0]
    assert_close(cached_logits(model, ids, 5, chunk=2), full.numpy(), "float32", tol=NET_TOL_F32)
    with tt.no_grad():
        static = model.make_cache(1, 40)
        model(tt.tensor([ids[:5]]), past_key_values=static)
        rows = [static_decode_logits(model, tt.tensor([[t]]), tt.tensor([5 + n]), static)
                for n, t in enumerate(ids[5:])]
    assert_close(tt.cat(rows, 0), full[5:].numpy(), "float32", tol=NET_TOL_F32)


def check_full_and_cached_logits(model, ref, ids: list[int], prefill: int) -> None:
    """The float32 logits of the full forward and of the KV-cache steps (a prefill, then one token a
    step) equal ``ref``."""
    with tt.no_grad():
        assert_close(model(tt.tensor([ids]))[0], ref, "float32", tol=NET_TOL_F32)
    assert_close(cached_logits(model, ids, prefill), ref, "float32", tol=NET_TOL_F32)


def check_greedy_generate_and_padded_batch(model, w: dict, cfg: dict, ids: list[int], steps: int) -> None:
    """Greedy ``generate`` from ids[:4] picks the float64 numpy forward's tokens for ``steps`` steps,
    and a left-padded batch of two prompts generates what each prompt does alone."""
    out = model.generate(tt.tensor([ids[:4]]), steps)
    seq = list(ids[:4])
    for _ in range(steps):   # the float64 reference picks the same tokens
        seq.append(int(np.argmax(forward_np(w, cfg, seq)[-1])))
    assert out[0].tolist() == seq
    prompts = [ids[:3], ids[:9]]
    padded = tt.tensor([[0] * (9 - len(p)) + p for p in prompts])
    mask = tt.tensor([[0] * (9 - len(p)) + [1] * len(p) for p in prompts])
    batch = model.generate(padded, 5, attention_mask=mask)
    for i, p in enumerate(prompts):
        assert batch[i, 9 - len(p):].tolist() == model.generate(tt.tensor([p]), 5)[0].tolist()


def hf_causal_lm(cfg_cls: str, model_cls: str, kw: dict, seed: int = 0):
    """transformers' ``model_cls`` of a ``cfg_cls(**kw)`` config (class names), eager attention,
    initialized after ``torch.manual_seed(seed)``, in eval mode."""
    import torch
    import transformers
    cfg = getattr(transformers, cfg_cls)(**kw)
    cfg._attn_implementation = "eager"
    torch.manual_seed(seed)
    return getattr(transformers, model_cls)(cfg).eval()


def saved_hf_model(name: str, build, tmp_path_factory, ids: list[int]) -> tuple:
    """The twin tests' fixture value for model ``name``: (name, ``build(name)``, the folder it is
    saved into with save_pretrained, its float64 logits of ``ids``)."""
    import torch
    hf = build(name)
    folder = tmp_path_factory.mktemp(name)
    hf.save_pretrained(str(folder))
    with torch.no_grad():
        ref = hf(torch.tensor([ids])).logits[0].double().numpy()
    return name, hf, folder, ref


def check_greedy_equals_transformers(model, hf, prompt: list[int], n: int) -> None:
    import torch
    with torch.no_grad():
        want = hf.generate(torch.tensor([prompt]), max_new_tokens=n, do_sample=False, pad_token_id=0)
    assert model.generate(tt.tensor([prompt]), n)[0].tolist() == want[0].tolist()


def check_left_padded_batch_equals_transformers(model, hf, prompts: list[list[int]]) -> None:
    import torch
    width = max(len(p) for p in prompts)
    ids = [[0] * (width - len(p)) + p for p in prompts]
    mask = [[0] * (width - len(p)) + [1] * len(p) for p in prompts]
    with torch.no_grad():
        ref = hf(torch.tensor(ids), attention_mask=torch.tensor(mask)).logits.double().numpy()
    with tt.no_grad():
        out = model(tt.tensor(ids), attention_mask=tt.tensor(mask)).numpy()
    for i, p in enumerate(prompts):   # the padded positions' outputs are unused
        assert_close(out[i, width - len(p):], ref[i, width - len(p):], "float32", tol=NET_TOL_F32)
