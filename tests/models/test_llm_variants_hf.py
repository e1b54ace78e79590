"""qwen3, gemma, gemma2 and mistral (sliding window) against Hugging Face transformers: tiny
random-weight models built with transformers (float64 weights rounded to float32), saved with
``save_pretrained`` (safetensors + config.json) and written as llama.cpp GGUF files the way
convert_hf_to_gguf.py writes them (gguf's tensor name map; gemma's norm weights + 1; mistral as arch
"llama", q/k rows permuted, with its window); tinytorch's float32 logits equal
transformers' and greedy ``generate`` gives transformers' greedy tokens. Needs torch and
transformers: run with /tmp/tv/bin/python -m pytest here (CI runs test_llm_variants.py instead)."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt
from tinytorch.models import LlamaForCausalLM

from support.llm_checks import (HF_BASE as BASE, HF_IDS as IDS, NET_TOL_F32, cached_logits,
                                 check_greedy_equals_transformers, check_left_padded_batch_equals_transformers,
                                 hf_causal_lm, saved_hf_model)
from support.numeric import assert_close

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

CONFIGS = {
    # head_dim 24 != hidden / heads = 16; untied
    "qwen3": ("Qwen3Config", "Qwen3ForCausalLM", dict(BASE, head_dim=24, tie_word_embeddings=False,
                                                       rope_theta=1000000.0)),
    "gemma": ("GemmaConfig", "GemmaForCausalLM", dict(BASE, head_dim=32, num_key_value_heads=1)),
    # sliding window 5 < the sequence on layers 0 and 2; soft caps low enough to bend the values
    "gemma2": ("Gemma2Config", "Gemma2ForCausalLM", dict(BASE, head_dim=32, sliding_window=5,
                                                         query_pre_attn_scalar=20, attn_logit_softcapping=3.0,
                                                         final_logit_softcapping=2.5)),
    # every layer's window of 4 < the sequence: key j visible to query i when i - 4 < j <= i
    "mistral": ("MistralConfig", "MistralForCausalLM", dict(BASE, sliding_window=4)),
}


def hf_model(name: str, seed: int = 0):
    cfg_cls, model_cls, kw = CONFIGS[name]
    model = hf_causal_lm(cfg_cls, model_cls, kw, seed)
    with torch.no_grad():   # norms start at 0 (gemma) or 1: randomize them so they matter
        for n, p in model.named_parameters():
            if "norm" in n:
                p.copy_(torch.rand_like(p) * 0.8 + (-0.4 if name.startswith("gemma") else 0.6))
            elif n.endswith(("q_proj.weight", "k_proj.weight")):
                p.mul_(6.0)    # scores of a few units: the soft cap (3) bends them
            elif n.endswith("embed_tokens.weight") and name.startswith("gemma"):
                p.mul_(2.0 / np.sqrt(kw["hidden_size"]) / p.std())   # embeddings * sqrt(hidden) stay O(1)
    return model


@pytest.fixture(scope="module", params=list(CONFIGS))
def pair(request, tmp_path_factory):
    return saved_hf_model(request.param, hf_model, tmp_path_factory, IDS)


def test_safetensors_logits_equal_transformers(pair):
    # float32 only: transformers computes the rotary angles in float32 even for a float64 model
    # (test_llm_variants.py holds the float64 model to a float64 numpy forward)
    name, hf, folder, ref = pair
    model = LlamaForCausalLM.from_pretrained(folder)
    assert model.config.model_type == name
    with tt.no_grad():
        out = model(tt.tensor([IDS]))[0]
    assert_close(out, ref, "float32", tol=NET_TOL_F32)


def test_kv_cache_decode_and_greedy_generate_equal_transformers(pair):
    name, hf, folder, ref = pair
    model = LlamaForCausalLM.from_pretrained(folder)
    assert_close(cached_logits(model, IDS, 6), ref, "float32", tol=NET_TOL_F32)
    check_greedy_equals_transformers(model, hf, IDS[:4], 12)


def test_left_padded_batch_equals_transformers(pair):
    name, hf, folder, _ = pair
    check_left_padded_batch_equals_transformers(LlamaForCausalLM.from_pretrained(folder), hf, [IDS[:3], IDS[:9]])


def write_gguf_like_llama_cpp(path, hf) -> None:
    """hf's weights as convert_hf_to_gguf.py writes them for qwen3/gemma/gemma2/mistral (float32 tensors;
    mistral as arch "llama" with q/k rows permuted and ``llama.attention.sliding_window``)."""
    gguf = pytest.importorskip("gguf")
    from support.llm_reference import llama_cpp_permute, write_gguf_file
    cfg = hf.config
    arch = "llama" if cfg.model_type == "mistral" else cfg.model_type
    n = cfg.num_hidden_layers
    wr = gguf.GGUFWriter(str(path), arch)
    wr.add_context_length(cfg.max_position_embeddings)
    wr.add_embedding_length(cfg.hidden_size)
    wr.add_block_count(n)
    wr.add_feed_forward_length(cfg.intermediate_size)
    wr.add_head_count(cfg.num_attention_heads)
    wr.add_head_count_kv(cfg.num_key_value_heads)
    wr.add_key_length(cfg.head_dim)
    wr.add_value_length(cfg.head_dim)
    wr.add_layer_norm_rms_eps(cfg.rms_norm_eps)
    wr.add_vocab_size(cfg.vocab_size)
    theta = cfg.rope_parameters["rope_theta"]
    if theta != 10000.0:
        wr.add_rope_freq_base(theta)
    if arch == "gemma2":
        wr.add_attn_logit_softcapping(cfg.attn_logit_softcapping)
        wr.add_final_logit_softcapping(cfg.final_logit_softcapping)
        wr.add_sliding_window(cfg.sliding_window)
    if cfg.model_type == "mistral":
        wr.add_sliding_window(cfg.sliding_window)
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH[arch.upper()], n)
    for hf_name, t in hf.state_dict().items():
        if hf_name == "lm_head.weight" and cfg.tie_word_embeddings:
            continue
        a = t.float().numpy()
        if arch.startswith("gemma") and hf_name.endswith("norm.weight"):
            a = a + 1     # llama.cpp's gemma converter: the norms multiply by the weight
        if arch == "llama" and hf_name.endswith(("q_proj.weight", "k_proj.weight")):
            a = llama_cpp_permute(a, cfg.num_attention_heads if "q_proj" in hf_name else cfg.num_key_value_heads)
        wr.add_tensor(names.get_name(hf_name, try_suffixes=(".weight",)), np.ascontiguousarray(a))
    write_gguf_file(wr)


def test_gguf_logits_equal_transformers(pair, tmp_path):
    name, hf, folder, ref = pair
    if name == "gemma2":   # GGUF has no query_pre_attn_scalar: llama.cpp's head_dim rule
        hf = hf_model(name)
        hf.config.query_pre_attn_scalar = hf.config.head_dim
        for layer in hf.model.layers:
            layer.self_attn.scaling = hf.config.head_dim ** -0.5
        with torch.no_grad():
            ref = hf(torch.tensor([IDS])).logits[0].double().numpy()
    write_gguf_like_llama_cpp(tmp_path / "m.gguf", hf)
    model = LlamaForCausalLM.from_gguf(tmp_path / "m.gguf")
    c = model.config
    assert (c.model_type, c.head_dim, c.tie_word_embeddings) == (name, hf.config.head_dim,
                                                                  hf.config.tie_word_embeddings)
    with tt.no_grad():
        assert_close(model(tt.tensor([IDS]))[0], ref, "float32", tol=NET_TOL_F32)
