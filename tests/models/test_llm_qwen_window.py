"""qwen2/qwen3 sliding-window attention per layer (transformers' ``layer_types``; by default, with
``use_sliding_window``, the layers i >= ``max_window_layers`` slide) without torch: which layers
slide for config.json dicts (defaults, explicit lists, mistral's ignored list); tiny random checkpoints
with windows shorter than the 13-token sequence against the float64 numpy forward of
tests/support/llm_reference.py; KV-cache decode (prefill, a chunk, single steps) and the CUDA-graph decode
step (run eagerly here) equal to the full forward; greedy generation = the numpy argmax chain and a
left-padded batch = each prompt alone; bad ``layer_types`` / ``max_window_layers``.
test_llm_qwen_window_hf.py checks the same models against transformers where torch is present."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt
from tinytorch.models import LlamaConfig, LlamaForCausalLM

from support.llm_checks import check_cache_and_graph_step_equal_full_forward, check_greedy_generate_and_padded_batch
from support.llm_reference import TINY_MISTRAL, TINY_QWEN2, TINY_QWEN3, forward_np, random_weights, write_checkpoint
from support.numeric import GRAD_TOL, assert_close

NET_TOL_F32 = GRAD_TOL["float32"]  # a whole network in float32 (as test_llm_model.py)
IDS = [3, 7, 1, 90, 44, 5, 6, 2, 8, 9, 11, 60, 17]
SLIDE, FULL = "sliding_attention", "full_attention"

# name: (config.json, the window of each layer)
MODELS = {
    # layer 0 full, layers 1 and 2 see the last 4 positions
    "qwen2_from_layer_1": (dict(TINY_QWEN2, num_hidden_layers=3, use_sliding_window=True, sliding_window=4,
                                max_window_layers=1), [None, 4, 4]),
    "qwen2_from_layer_2": (dict(TINY_QWEN2, num_hidden_layers=3, use_sliding_window=True, sliding_window=3,
                                max_window_layers=2), [None, None, 3]),
    # an explicit list wins over max_window_layers
    "qwen3_layer_types": (dict(TINY_QWEN3, num_hidden_layers=3, use_sliding_window=True, sliding_window=5,
                               max_window_layers=0, layer_types=[SLIDE, FULL, SLIDE]), [5, None, 5]),
}


def _windows(cfg: LlamaConfig) -> list:
    return [cfg.layer_window(i) for i in range(cfg.num_hidden_layers)]


QWEN = dict(model_type="qwen2", num_hidden_layers=4, hidden_size=16, num_attention_heads=2)
WINDOW_RULES = [
    # (config.json, windows)
    (dict(QWEN, use_sliding_window=True, sliding_window=8, max_window_layers=2), [None, None, 8, 8]),
    (dict(QWEN, use_sliding_window=True, sliding_window=8, max_window_layers=0), [8, 8, 8, 8]),
    (dict(QWEN, use_sliding_window=True, sliding_window=8, max_window_layers=4), [None] * 4),
    (dict(QWEN, use_sliding_window=True, sliding_window=8), [None] * 4),                   # default: 28
    (dict(QWEN, sliding_window=8, max_window_layers=0), [None] * 4),                       # not used
    (dict(QWEN, use_sliding_window=False, sliding_window=8, max_window_layers=0), [None] * 4),
    (dict(QWEN, use_sliding_window=True, sliding_window=None, max_window_layers=0), [None] * 4),
    (dict(QWEN, model_type="qwen3", use_sliding_window=True, sliding_window=6, max_window_layers=3),
     [None, None, None, 6]),
    (dict(QWEN, use_sliding_window=True, sliding_window=8, max_window_layers=0,
          layer_types=[FULL, SLIDE, FULL, SLIDE]), [None, 8, None, 8]),
    (dict(QWEN, layer_types=[FULL] * 4), [None] * 4),                                      # transformers 5's save
    # transformers' MistralForCausalLM windows every layer whatever layer_types says
    (dict(QWEN, model_type="mistral", sliding_window=8, layer_types=[FULL, SLIDE, FULL, FULL]), [8] * 4),
    (dict(QWEN, model_type="gemma2", sliding_window=8, layer_types=[FULL, FULL, SLIDE, SLIDE]),
     [None, None, 8, 8]),
]


@pytest.mark.parametrize("d, windows", WINDOW_RULES)
def test_which_layers_slide(d, windows):
    cfg = LlamaConfig.from_dict(d)
    assert _windows(cfg) == windows
    if d["model_type"] in ("qwen2", "qwen3"):
        assert cfg.layer_types == [SLIDE if w else FULL for w in windows]


@pytest.mark.parametrize("d, match", [
    (dict(QWEN, use_sliding_window=True, sliding_window=8, layer_types=[FULL, SLIDE, "chunked_attention", FULL]),
     "layer_types entries must be 'sliding_attention' or 'full_attention', got 'chunked_attention'"),
    (dict(QWEN, use_sliding_window=True, sliding_window=8, layer_types=[FULL, SLIDE, FULL]),
     r"layer_types must list one entry per layer \(num_hidden_layers=4\), got 3 entries"),
    (dict(QWEN, use_sliding_window=True, sliding_window=8, layer_types=SLIDE),
     r"layer_types must list one entry per layer \(num_hidden_layers=4\), got 'sliding_attention'"),
    (dict(QWEN, model_type="qwen3", layer_types=[SLIDE] * 4),
     "layer_types of this qwen3 model name 'sliding_attention' layers but it has no sliding window"),
    (dict(QWEN, use_sliding_window=True, sliding_window=8, max_window_layers=-1),
     "max_window_layers must be a non-negative int, got -1"),
    (dict(QWEN, use_sliding_window=True, sliding_window=8, max_window_layers=1.5),
     "max_window_layers must be a non-negative int, got 1.5"),
    (dict(QWEN, use_sliding_window=True, sliding_window=0), "sliding_window must be a positive int"),
    (dict(QWEN, model_type="gemma2", sliding_window=8, layer_types=[SLIDE, "local", FULL, FULL]),
     "layer_types entries must be .* got 'local'"),
])
def test_bad_window_configs(d, match):
    with pytest.raises(ValueError, match=match):
        LlamaConfig.from_dict(d)


# ------------------------------------------------------------------------------------------------ models
@pytest.fixture(scope="module", params=list(MODELS))
def tiny(request, tmp_path_factory):
    name = request.param
    cfg, windows = MODELS[name]
    w = {k: v.astype(np.float32).astype(np.float64) for k, v in random_weights(cfg).items()}
    folder = write_checkpoint(str(tmp_path_factory.mktemp(name)), cfg, w)
    model = LlamaForCausalLM.from_pretrained(folder)
    assert [layer.self_attn.sliding_window for layer in model.model.layers] == windows
    return name, folder, w, model


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_logits_match_numpy(tiny, dtype):
    name, folder, w, _ = tiny
    cfg, windows = MODELS[name]
    model = LlamaForCausalLM.from_pretrained(folder, dtype=getattr(tt, dtype))
    with tt.no_grad():
        out = model(tt.tensor([IDS]))[0]
    ref = forward_np(w, cfg, IDS)
    assert_close(out, ref, dtype, tol=NET_TOL_F32 if dtype == "float32" else None)
    # the windows matter: the same weights with every layer attending to everything differ
    full = forward_np(w, dict(cfg, use_sliding_window=False, layer_types=None), IDS)
    assert np.abs(full - ref).max() > 1e-2


def test_kv_cache_and_graph_step_equal_full_forward(tiny):
    """Prefill + chunk + single steps, and the CUDA-graph decode step (static cache, run eagerly on
    the CPU), equal the full forward: each sliding layer's window slides past the prompt."""
    name, folder, w, model = tiny
    check_cache_and_graph_step_equal_full_forward(model, IDS)


def test_greedy_generate_and_padded_batch(tiny):
    name, folder, w, model = tiny
    cfg, _ = MODELS[name]
    check_greedy_generate_and_padded_batch(model, w, cfg, IDS, 10)   # 14 positions: past every window


def test_mistral_layer_types_are_ignored(tmp_path):
    """A mistral config.json listing layer_types still windows every layer (transformers'
    MistralForCausalLM reads no layer_types): logits equal the plain mistral checkpoint's."""
    cfg = dict(TINY_MISTRAL, layer_types=[FULL, SLIDE])
    w = {k: v.astype(np.float32).astype(np.float64) for k, v in random_weights(cfg, seed=3).items()}
    model = LlamaForCausalLM.from_pretrained(write_checkpoint(str(tmp_path), cfg, w))
    with tt.no_grad():
        out = model(tt.tensor([IDS]))[0]
    assert_close(out, forward_np(w, TINY_MISTRAL, IDS), "float32", tol=NET_TOL_F32)
