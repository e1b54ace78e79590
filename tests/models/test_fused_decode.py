"""The CPU's fused decode step (``tinytorch.models.fused_decode``: every layer of a one-token step in
one ``_C.DecodeStack`` call) against the eager layers it replaces: the same logits and KV cache for
dense and packed projections (stacked or in parts of different qtypes), biases, a sliding window,
both rotary conventions, grouped and plain heads, a batch; the steps it must leave to the eager
layers; and the stack's argument checks."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt
from tinytorch import _C
from tinytorch.models import LlamaForCausalLM
from tinytorch.models.config import LlamaConfig
from tinytorch.nn import QuantizedLinear

from support.numeric import GRAD_TOL, assert_close

gguf = pytest.importorskip("gguf")
Q = gguf.GGMLQuantizationType
NET_TOL_F32 = GRAD_TOL["float32"]  # a whole network in float32 (as test_llm_model.py)
BASE = dict(vocab_size=97, hidden_size=64, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, max_position_embeddings=64, rms_norm_eps=1e-5)
CONFIGS = {
    "llama": BASE,
    "qwen2-bias-one-kv-head": dict(BASE, model_type="qwen2", num_key_value_heads=1, tie_word_embeddings=True),
    "mistral-window": dict(BASE, model_type="mistral", sliding_window=3),
    "interleaved-plain-heads": dict(BASE, num_key_value_heads=4, rotary_convention="interleaved"),
}
# projection -> qtype when packed in parts (no two of a layer's q/k/v or gate/up share one: no stacking)
MIXED = {"q_proj": Q.Q4_0, "k_proj": Q.Q4_1, "v_proj": Q.Q8_0, "o_proj": Q.Q8_0, "gate_proj": Q.Q4_1,
         "up_proj": Q.Q4_0, "down_proj": Q.Q8_0}


def _model(name: str, packing: str, seed: int = 0) -> LlamaForCausalLM:
    """A random model: dense float32, packed in MIXED's parts, or packed Q4_1 with stacked q/k/v and gate/up."""
    tt.manual_seed(seed)
    model = LlamaForCausalLM(LlamaConfig(**CONFIGS[name]))
    rng = np.random.default_rng(seed)
    for layer in model.model.layers:
        for block in (layer.self_attn, layer.mlp):
            if packing == "dense":
                if block is layer.self_attn and block.q_proj.bias is not None:   # biases that matter
                    with tt.no_grad():
                        for n in ("q_proj", "k_proj", "v_proj"):
                            b = getattr(block, n).bias
                            b.copy_(tt.tensor(rng.standard_normal(b.shape[0]), dtype=tt.float32))
                continue
            for n in [n for n in MIXED if n in block._modules]:
                lin = getattr(block, n)
                qtype = MIXED[n] if packing == "parts" else Q.Q4_1
                w = lin.weight.detach().numpy().astype(np.float32)
                bias = None if lin.bias is None else lin.bias.detach().numpy() + rng.standard_normal(lin.out_features)
                setattr(block, n, QuantizedLinear(lin.in_features, lin.out_features, qtype,
                                                  gguf.quants.quantize(w, qtype), bias))
            if packing == "stacked":
                assert block.fuse_projections()
    return model


def _decode(model, prompts, steps: int, fused: bool):
    """(logits of each step (steps, B, V), the KV cache, whether the fused stack ran) after a prefill."""
    tt.backends.cpu.fused_decode = fused
    try:
        B, T = len(prompts), len(prompts[0])
        cache = model.make_cache(B, T + steps)
        with tt.no_grad():
            logits = model(tt.tensor(prompts), past_key_values=cache, logits_to_keep=1)[:, -1]
            rows = []
            for _ in range(steps):
                logits = model(logits.argmax(-1)[:, None], past_key_values=cache)[:, -1]
                rows.append(logits.numpy())
        return np.stack(rows), cache, cache.fused_step is not None and cache.fused_step[1] is not None
    finally:
        tt.backends.cpu.fused_decode = True


@pytest.mark.parametrize("packing", ["dense", "parts", "stacked"])
@pytest.mark.parametrize("name", list(CONFIGS))
def test_fused_step_equals_eager_layers(name, packing):
    model = _model(name, packing)
    prompts = [[3, 7, 1, 90, 44], [5, 6, 2, 8, 9]]
    fused, fused_cache, ran = _decode(model, prompts, 7, fused=True)
    eager, eager_cache, eager_ran = _decode(model, prompts, 7, fused=False)
    assert ran and not eager_ran
    assert_close(fused, eager, "float32", tol=NET_TOL_F32)
    for a, b in zip(fused_cache.keys + fused_cache.values, eager_cache.keys + eager_cache.values):
        assert_close(a, b.numpy(), "float32", tol=NET_TOL_F32)


def test_steps_the_fused_stack_leaves_to_the_eager_layers():
    model = _model("llama", "parts")
    ids = tt.tensor([[3, 7, 1]])
    with tt.no_grad():
        gemma = LlamaForCausalLM(LlamaConfig(**dict(BASE, model_type="gemma", num_key_value_heads=1)))
        cache = gemma.make_cache(1, 8)
        gemma(ids, past_key_values=cache)
        gemma(ids[:, :1], past_key_values=cache)
        assert cache.fused_step[1] is None                      # gemma's (1 + w) norms and GeGLU
        hooked = _model("llama", "parts")
        calls = []
        hooked.model.layers[1].mlp.down_proj.register_forward_hook(lambda *a: calls.append(1))
        cache = hooked.make_cache(1, 8)
        hooked(ids, past_key_values=cache)
        hooked(ids[:, :1], past_key_values=cache)
        assert cache.fused_step[1] is None and len(calls) == 2  # a forward hook must run
    cache = model.make_cache(1, 8)                              # autograd recording
    model(ids, past_key_values=cache)
    model(ids[:, :1], past_key_values=cache)
    assert cache.fused_step is None
    with tt.no_grad():                                           # padding: masks and positions per row
        out = model.generate(tt.tensor([[0, 3, 7], [5, 6, 2]]), 3, attention_mask=tt.tensor([[0, 1, 1], [1, 1, 1]]))
        alone = model.generate(tt.tensor([[3, 7]]), 3)
    assert out[0, 3:].tolist() == alone[0, 2:].tolist()


def test_greedy_generate_picks_the_eager_tokens():
    model = _model("mistral-window", "stacked", seed=4)
    ids = tt.tensor([[3, 7, 1, 90]])
    tt.backends.cpu.fused_decode = False
    try:
        eager = model.generate(ids, 12)
    finally:
        tt.backends.cpu.fused_decode = True
    assert model.generate(ids, 12).tolist() == eager.tolist()


def _stack_args(hidden=8, heads=2, kv=1, D=4, inter=4, B=1, S=6):
    f = lambda *s: tt.zeros(*s)._impl
    lin = lambda n, k: [_C.DecodeLinear(f(n, k), -1, n, k, None)]
    layer = dict(input_norm=f(hidden), post_attention_norm=f(hidden), qkv=lin((heads + 2 * kv) * D, hidden),
                 o=lin(hidden, heads * D), gate_up=lin(2 * inter, hidden), down=lin(hidden, inter),
                 keys=f(B, kv, S, D), values=f(B, kv, S, D))
    return layer, dict(heads=heads, kv_heads=kv, head_dim=D, scale=0.5, interleaved=False, eps=1e-6)


@pytest.mark.parametrize("change, match", [
    (dict(o=[_C.DecodeLinear(tt.zeros(8, 7)._impl, -1, 8, 7, None)]), "layer 0 o_proj takes 7 features, expected 8"),
    (dict(keys=tt.zeros(1, 1, 5, 4)._impl), r"layer 0 cache float32\[1, 1, 6, 4\] .* should be contiguous \(1, 1, 5, 4\)"),
    (dict(input_norm=tt.zeros(8, dtype=tt.float64)._impl), "layer 0 norm weight must be float32"),
    (dict(qkv=[_C.DecodeLinear(tt.zeros(16, 5, dtype=tt.uint8)._impl, 3, 16, 8, None)]), "Q4_1|multiple"),
    (dict(gate_up=[_C.DecodeLinear(tt.zeros(7, 8)._impl, -1, 7, 8, None)]), "odd number of features"),
])
def test_stack_checks_its_arguments(change, match):
    layer, attention = _stack_args()
    layer.update(change)
    with pytest.raises((ValueError, TypeError), match=match):
        _C.DecodeStack([_C.DecodeLayer(**layer)], **attention)


def test_step_checks_its_arguments():
    layer, attention = _stack_args()
    stack = _C.DecodeStack([_C.DecodeLayer(**layer)], **attention)
    angle = tt.zeros(4)._impl
    with pytest.raises(ValueError, match=r"DecodeStack.step: x .* should be \(batch=1, hidden=8\)"):
        stack.step(tt.zeros(2, 8)._impl, 0, angle, angle)
    with pytest.raises(ValueError, match="position 6 is outside the cache's 6 positions"):
        stack.step(tt.zeros(1, 8)._impl, 6, angle, angle)
    with pytest.raises(ValueError, match=r"rotary angles .* should be \(head_dim=4\)"):
        stack.step(tt.zeros(1, 8)._impl, 0, tt.zeros(3)._impl, angle)
    with pytest.raises(ValueError, match="split into groups"):
        _C.DecodeStack([_C.DecodeLayer(**layer)], **dict(attention, heads=3, kv_heads=2))
