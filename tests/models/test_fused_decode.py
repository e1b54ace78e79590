"""The fused decode step (``tinytorch.models.fused_decode``: every layer of a one-token step in one
``_C.DecodeStack`` call; on CUDA five fused kernels per layer) against the eager layers it replaces:
the same logits and KV cache for dense and packed projections (stacked or in parts of different
qtypes), biases, a sliding window, both rotary conventions, grouped and plain heads, one sequence
and a batch, on the CPU and CUDA (also past the fused kernels' 8 sequences, and replayed from a CUDA
graph); the steps it must leave to the eager layers; and the stack's argument checks."""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

import tinytorch as tt
from tinytorch import _C
from tinytorch.models import LlamaForCausalLM
from tinytorch.models.config import LlamaConfig
from tinytorch.nn import QuantizedLinear

from support.numeric import DEVICES, GRAD_TOL, assert_close

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


@contextlib.contextmanager
def _fused(device: str, on: bool):
    """tinytorch.backends.<device>.fused_decode = on for the block (restored after it)."""
    backend = tt.backends.cuda if device == "cuda" else tt.backends.cpu
    before, backend.fused_decode = backend.fused_decode, on
    try:
        yield
    finally:
        backend.fused_decode = before


def _decode(model, prompts, steps: int, fused: bool, device: str = "cpu", feed=None):
    """(logits of each step (steps, B, V), the KV cache, its stack or None, the tokens fed) after a
    prefill: greedy tokens, or those of ``feed`` (another run's), so near ties cannot part two runs."""
    with _fused(device, fused):
        B, T = len(prompts), len(prompts[0])
        cache = model.make_cache(B, T + steps)
        with tt.no_grad():
            logits = model(tt.tensor(prompts, device=device), past_key_values=cache, logits_to_keep=1)[:, -1]
            rows, fed = [], []
            for i in range(steps):
                token = logits.argmax(-1)[:, None] if feed is None else feed[i]
                fed.append(token)
                logits = model(token, past_key_values=cache)[:, -1]
                rows.append(logits.cpu().numpy())
        return np.stack(rows), cache, cache.fused_step[1] if cache.fused_step is not None else None, fed


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("rows", [1, 2])
@pytest.mark.parametrize("packing", ["dense", "parts", "stacked"])
@pytest.mark.parametrize("name", list(CONFIGS))
def test_fused_step_equals_eager_layers(name, packing, rows, device):
    model = _model(name, packing).to(device)
    prompts = [[3, 7, 1, 90, 44], [5, 6, 2, 8, 9]][:rows]
    fused, fused_cache, stack, fed = _decode(model, prompts, 7, True, device)
    eager, eager_cache, eager_stack, _ = _decode(model, prompts, 7, False, device, feed=fed)
    assert stack is not None and eager_stack is None
    assert stack.fused == (device == "cuda")                    # CUDA: the fused projection kernels
    assert_close(fused, eager, "float32", tol=NET_TOL_F32)
    for a, b in zip(fused_cache.keys + fused_cache.values, eager_cache.keys + eager_cache.values):
        assert_close(a.cpu(), b.cpu().numpy(), "float32", tol=NET_TOL_F32)


@pytest.mark.cuda
def test_cuda_stack_composes_ops_past_the_fused_rows():
    model = _model("qwen2-bias-one-kv-head", "parts").to("cuda")
    prompts = [[3 + i, 7, 1, 90 - i] for i in range(9)]           # 9 sequences > the kernels' 8
    fused, _, stack, fed = _decode(model, prompts, 4, True, "cuda")
    eager, _, _, _ = _decode(model, prompts, 4, False, "cuda", feed=fed)
    assert stack is not None and not stack.fused
    assert_close(fused, eager, "float32", tol=NET_TOL_F32)


@pytest.mark.cuda
@pytest.mark.parametrize("name", ["llama", "mistral-window"])
def test_cuda_graph_replays_the_fused_step(name):
    """generate(cuda_graph=True) captures the fused step (position read on the device): its tokens
    are the eager layers' greedy tokens (teacher-forced logits agree above)."""
    model = _model(name, "stacked", seed=4).to("cuda")
    ids = tt.tensor([[3, 7, 1, 90]], device="cuda")
    with _fused("cuda", False):
        eager = model.generate(ids, 12)
    with _fused("cuda", True):
        graphed = model.generate(ids, 12, cuda_graph=True)
        again = model.generate(ids, 12, cuda_graph=True)         # replays the kept graph
    assert graphed.tolist() == eager.tolist() == again.tolist()
    dec = next(iter(model.decode_graphs.decoders.values()))
    assert dec.cache.fused_step is not None and dec.cache.fused_step[1].fused


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
    with pytest.raises(ValueError, match=r"rotary angles .* should hold head_dim=4 values"):
        stack.step(tt.zeros(1, 8)._impl, 0, tt.zeros(3)._impl, angle)
    with pytest.raises(TypeError, match=r"DecodeStack.step_at: position must be int64"):
        stack.step_at(tt.zeros(1, 8)._impl, tt.zeros(1)._impl, angle, angle)
    with pytest.raises(ValueError, match=r"DecodeStack.step_at: position should be one int64"):
        stack.step_at(tt.zeros(1, 8)._impl, tt.zeros(2, dtype=tt.int64)._impl, angle, angle)
    with pytest.raises(ValueError, match="position 6 is outside the cache's 6 positions"):
        stack.step_at(tt.zeros(1, 8)._impl, tt.tensor([6])._impl, angle, angle)
    with pytest.raises(ValueError, match="split into groups"):
        _C.DecodeStack([_C.DecodeLayer(**layer)], **dict(attention, heads=3, kv_heads=2))
