"""generate(cuda_graph=True) keeps its captured decode step on the model: a second call (same batch
size and 64-position length bucket) replays it without capturing again and gives the eager greedy
tokens, for llama, qwen3, gemma and gemma2 (sliding window shorter than the sequence); another batch
size captures its own; replacing a parameter or casting the model captures anew, with the new
weights' tokens; eos ids of a later call are honoured by the kept graph."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt
from tinytorch.models import LlamaConfig, LlamaForCausalLM

from support.llm_reference import TINY_GEMMA, TINY_GEMMA2, TINY_LLAMA, TINY_QWEN3
from support.numeric import to_numpy

pytestmark = pytest.mark.cuda

DEV = "cuda"
CONFIGS = {"llama": TINY_LLAMA, "qwen3": TINY_QWEN3, "gemma": TINY_GEMMA, "gemma2": TINY_GEMMA2}


@pytest.fixture
def captures(monkeypatch):
    """A list that grows by one at every CUDA graph capture."""
    seen = []
    begin = tt.cuda.CUDAGraph.capture_begin

    def counting(self, *args, **kwargs):
        seen.append(1)
        return begin(self, *args, **kwargs)
    monkeypatch.setattr(tt.cuda.CUDAGraph, "capture_begin", counting)
    return seen


def tiny(name):
    tt.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig.from_dict(CONFIGS[name]), device=DEV).eval()
    if name.startswith("gemma"):   # norms start at 0 (x * 1): give them values
        for n, p in model.named_parameters():
            if "norm" in n:
                p.data.copy_(tt.rand(p.shape, device=DEV) - 0.5)
    return model


def same(a, b):
    np.testing.assert_array_equal(to_numpy(a), to_numpy(b))


@pytest.mark.parametrize("name", list(CONFIGS))
def test_second_call_replays_without_capturing(name, captures):
    model = tiny(name)
    ids = tt.tensor([[3, 5, 7, 11, 13], [2, 4, 6, 8, 10]], device=DEV)
    eager = model.generate(ids, 12)
    first = model.generate(ids, 12, cuda_graph=True)
    assert len(captures) == 1 and model.decode_graphs.captures == 1
    second = model.generate(ids, 12, cuda_graph=True)
    assert len(captures) == 1                       # replayed, not captured again
    same(first, eager)
    same(second, eager)
    # another prompt length in the same length bucket (5 + 12 and 7 + 20 <= 64) replays too
    longer = tt.tensor([[3, 5, 7, 11, 13, 1, 2], [2, 4, 6, 8, 10, 9, 9]], device=DEV)
    same(model.generate(longer, 20, cuda_graph=True), model.generate(longer, 20))
    assert len(captures) == 1
    # another batch size is another graph
    same(model.generate(ids[:1], 9, cuda_graph=True), model.generate(ids[:1], 9))
    assert len(captures) == 2 and len(model.decode_graphs) == 2


def test_new_parameters_or_dtype_capture_again(captures):
    model = tiny("qwen3")
    ids = tt.tensor([[3, 5, 7, 11, 13]], device=DEV)
    model.generate(ids, 10, cuda_graph=True)
    assert len(captures) == 1
    model.model.layers[0].mlp.up_proj.weight.data.mul_(3.0)   # in place: the kept graph reads the new values
    same(model.generate(ids, 10, cuda_graph=True), model.generate(ids, 10))
    assert len(captures) == 1
    model.lm_head.weight = tt.nn.Parameter(tt.randn(*model.lm_head.weight.shape, device=DEV))
    same(model.generate(ids, 10, cuda_graph=True), model.generate(ids, 10))
    assert len(captures) == 2
    model.to(tt.float64)
    same(model.generate(ids, 10, cuda_graph=True), model.generate(ids, 10))
    assert len(captures) == 3 and len(model.decode_graphs) == 1


def test_kept_graph_honours_a_later_calls_eos(captures):
    model = tiny("gemma2")
    ids = tt.tensor([[3, 5, 7, 11, 13], [2, 4, 6, 8, 10]], device=DEV)
    free = model.generate(ids, 12)
    model.generate(ids, 12, eos_token_id=[96], cuda_graph=True)
    for eos in (int(free[0, 8]), int(free[1, 7])):
        same(model.generate(ids, 12, eos_token_id=[eos], pad_token_id=1, cuda_graph=True),
             model.generate(ids, 12, eos_token_id=[eos], pad_token_id=1))
    assert len(captures) == 1
