"""Checks the causal-LM test files share (test_llm_variants*.py, test_llm_qwen_window*.py): the
KV-cache and CUDA-graph decode paths against the full forward, and a model against its transformers
twin (greedy tokens, a left-padded batch). torch is imported only by the transformers checks."""
from __future__ import annotations

import tinytorch as tt
from tinytorch.models.graph_decode import static_decode_logits

from support.numeric import GRAD_TOL, assert_close

NET_TOL_F32 = GRAD_TOL["float32"]  # a whole network in float32 (as test_llm_model.py)


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
