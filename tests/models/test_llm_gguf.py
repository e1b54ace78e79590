"""GGUF loading and the tokenizer: tiny llama and qwen2 models written with ``gguf.GGUFWriter`` as
llama.cpp's converter writes them (llama's q/k rows permuted; F32, F16, BF16 and Q8_0 tensors),
logits against the float64 numpy forward of the weights as stored; metadata mapping; errors for
unsupported architectures and truncated files; the byte-level BPE tokenizer from GGUF metadata
(round trip, merges, special tokens) and chat templates."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt
from tinytorch.models import LlamaForCausalLM

from support.llm_checks import check_full_and_cached_logits
from support.llm_reference import (TINY_LLAMA, TINY_QWEN2, forward_np, llama_cpp_permute, random_weights,
                                   write_gguf_file)
from support.numeric import GRAD_TOL, assert_close

gguf = pytest.importorskip("gguf")
pytest.importorskip("tokenizers")
pytest.importorskip("jinja2")
from tinytorch.models.tokenizer import Tokenizer  # noqa: E402

Q = gguf.GGMLQuantizationType
NET_TOL_F32 = GRAD_TOL["float32"]  # a whole network in float32 (as test_llm_model.py)
IDS = [3, 7, 1, 90, 44, 5, 6, 2, 8, 9, 11]
_GGUF_NAMES = {"input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm",
               "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
               "self_attn.o_proj": "attn_output", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up",
               "mlp.down_proj": "ffn_down"}
# which ggml type each tensor is stored as (the rest F32)
_TYPES = {"attn_q": Q.F16, "attn_v": Q.BF16, "ffn_down": Q.Q8_0, "ffn_up": Q.Q8_0, "token_embd": Q.Q8_0}


def _bf16_bits(a: np.ndarray) -> np.ndarray:
    u = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def _store(a: np.ndarray, qtype):
    """(bytes/array to write, the float64 values a reader sees)."""
    if qtype == Q.F32:
        return a.astype(np.float32), a.astype(np.float32).astype(np.float64)
    if qtype == Q.F16:
        return a.astype(np.float16), a.astype(np.float16).astype(np.float64)
    if qtype == Q.BF16:
        bits = _bf16_bits(a)
        return bits.view(np.uint8), (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    packed = gguf.quants.quantize(a.astype(np.float32), qtype)
    return packed, gguf.quants.dequantize(packed, qtype).astype(np.float64).reshape(a.shape)


def write_gguf(path, cfg: dict, w: dict, arch: str, extra=None, types=None):
    """Writes w (HF names) as llama.cpp's converter would (ggml types per tensor kind from
    ``types``, default _TYPES); returns the weights as stored (HF layout)."""
    H, Hkv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    wr = gguf.GGUFWriter(str(path), arch)
    wr.add_block_count(cfg["num_hidden_layers"])
    wr.add_context_length(cfg["max_position_embeddings"])
    wr.add_embedding_length(cfg["hidden_size"])
    wr.add_feed_forward_length(cfg["intermediate_size"])
    wr.add_head_count(H)
    wr.add_head_count_kv(Hkv)
    wr.add_rope_freq_base(cfg["rope_theta"])
    wr.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    wr.add_vocab_size(cfg["vocab_size"])
    for k, v in (extra or {}).items():
        wr.add_string(k, v)
    stored = {}
    for name, a in w.items():
        if name == "model.embed_tokens.weight":
            g = "token_embd.weight"
        elif name == "model.norm.weight":
            g = "output_norm.weight"
        elif name == "lm_head.weight":
            g = "output.weight"
        else:
            parts = name.split(".")
            mod = ".".join(parts[3:-1])
            g = f"blk.{parts[2]}.{_GGUF_NAMES[mod]}.{parts[-1]}"
        kind = g.split(".")[-2] if g.startswith("blk") else g.split(".")[0]
        qtype = (_TYPES if types is None else types).get(kind, Q.F32) if a.ndim == 2 else Q.F32
        data = a
        if arch == "llama" and kind in ("attn_q", "attn_k"):
            data = llama_cpp_permute(a, H if kind == "attn_q" else Hkv)
        raw, seen = _store(data, qtype)
        if arch == "llama" and kind in ("attn_q", "attn_k"):   # the reference sees HF's row order
            seen = _unpermute(seen, H if kind == "attn_q" else Hkv)
        stored[name] = seen
        wr.add_tensor(g, raw, raw_dtype=qtype if qtype not in (Q.F32, Q.F16) else None)
    write_gguf_file(wr)
    return stored


def _unpermute(rows, n_head):
    d = rows.shape[0] // n_head // 2
    return rows.reshape(n_head, d, 2, *rows.shape[1:]).swapaxes(1, 2).reshape(rows.shape)


@pytest.mark.parametrize("arch, cfg", [("llama", TINY_LLAMA), ("qwen2", TINY_QWEN2)])
def test_gguf_logits_match_numpy(tmp_path, arch, cfg):
    w = random_weights(cfg, seed=3)
    stored = write_gguf(tmp_path / "m.gguf", cfg, w, arch)
    model = LlamaForCausalLM.from_gguf(tmp_path / "m.gguf")
    c = model.config
    assert (c.model_type, c.num_hidden_layers, c.num_key_value_heads, c.rope_theta, c.tie_word_embeddings) == \
        (arch, cfg["num_hidden_layers"], cfg["num_key_value_heads"], cfg["rope_theta"], cfg["tie_word_embeddings"])
    with tt.no_grad():
        out = model(tt.tensor([IDS]))[0]
    assert_close(out, forward_np(stored, cfg, IDS), "float32", tol=NET_TOL_F32)
    m64 = LlamaForCausalLM.from_gguf(tmp_path / "m.gguf", dtype=tt.float64)
    with tt.no_grad():
        assert_close(m64(tt.tensor([IDS]))[0], forward_np(stored, cfg, IDS), "float64")


def cat_cols(*ts):
    return tt.cat(list(ts), -1)


@pytest.mark.parametrize("arch, cfg", [("llama", TINY_LLAMA), ("qwen2", TINY_QWEN2)])
@pytest.mark.parametrize("qtype", [Q.Q4_1, Q.Q8_0], ids=lambda q: q.name)
def test_packed_model_fused_projections(tmp_path, arch, cfg, qtype):
    """Every linear packed: q/k/v and gate/up run as one stacked QuantizedLinear each, a tied head
    reads the embedding's packed blocks; full forward and KV-cache decode equal the numpy forward."""
    types = {k: qtype for k in ("attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down",
                                "token_embd", "output")}
    w = random_weights(cfg, seed=5)
    stored = write_gguf(tmp_path / "m.gguf", cfg, w, arch, types=types)
    model = LlamaForCausalLM.from_gguf(tmp_path / "m.gguf")
    attn, mlp = model.model.layers[0].self_attn, model.model.layers[0].mlp
    assert "qkv_proj" in attn._modules and "gate_up_proj" in mlp._modules
    # the parts stay usable, as row views of the stacked bytes (stored once)
    x = tt.randn(3, cfg["hidden_size"])
    with tt.no_grad():
        assert_close(cat_cols(attn.q_proj(x), attn.k_proj(x), attn.v_proj(x)), attn.qkv_proj(x), "float32", tol=(0, 0))
        assert_close(cat_cols(mlp.gate_proj(x), mlp.up_proj(x)), mlp.gate_up_proj(x), "float32", tol=(0, 0))
    assert attn.k_proj.qweight.data_ptr() == attn.qkv_proj.qweight.data_ptr() + attn.q_proj.qweight.numel()
    assert isinstance(model.lm_head, tt.nn.QuantizedLinear)
    if cfg["tie_word_embeddings"]:
        assert model.lm_head.qtype == int(qtype) and "lm_head.weight" not in stored
    check_full_and_cached_logits(model, forward_np(stored, cfg, IDS), IDS, 4)


def test_q_k_permutation_is_undone(tmp_path):
    """Without un-permuting, q/k would be in llama.cpp's order: the loaded rows must equal HF's."""
    cfg = TINY_LLAMA
    w = random_weights(cfg, seed=4)
    write_gguf(tmp_path / "m.gguf", cfg, w, "llama")
    model = LlamaForCausalLM.from_gguf(tmp_path / "m.gguf", dtype=tt.float64)
    k = model.model.layers[1].self_attn.k_proj.weight.numpy()
    assert_close(k, w["model.layers.1.self_attn.k_proj.weight"].astype(np.float32), "float32")


def test_gguf_errors(tmp_path):
    cfg = TINY_LLAMA
    w = random_weights(cfg)
    path = tmp_path / "m.gguf"
    write_gguf(path, cfg, w, "llama")
    data = path.read_bytes()
    (tmp_path / "cut.gguf").write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="cut.gguf.*truncated or corrupt"):
        LlamaForCausalLM.from_gguf(tmp_path / "cut.gguf")
    (tmp_path / "x.gguf").write_bytes(b"NOPE" + data[4:])
    with pytest.raises(ValueError, match="x.gguf is not a GGUF file"):
        LlamaForCausalLM.from_gguf(tmp_path / "x.gguf")
    wr = gguf.GGUFWriter(str(tmp_path / "phi.gguf"), "phi2")
    write_gguf_file(wr)
    with pytest.raises(NotImplementedError, match="phi.gguf holds a 'phi2' model; supported architectures"):
        LlamaForCausalLM.from_gguf(tmp_path / "phi.gguf")
    with pytest.raises(FileNotFoundError):
        LlamaForCausalLM.from_gguf(tmp_path / "missing.gguf")
    bad = dict(w)
    bad["model.layers.0.mlp.up_proj.weight"] = np.zeros((64, 64))
    write_gguf(tmp_path / "bad.gguf", cfg, bad, "llama")
    with pytest.raises(ValueError, match=r"blk.0.ffn_up.weight: file \[64, 64\], config \[96, 64\]"):
        LlamaForCausalLM.from_gguf(tmp_path / "bad.gguf")


# ------------------------------------------------------------------------------------------- tokenizer
def _byte_alphabet():
    from tokenizers import pre_tokenizers
    return sorted(pre_tokenizers.ByteLevel.alphabet())


TEMPLATE = ("{% for m in messages %}{% if m['role'] not in ['user', 'assistant', 'system'] %}"
            "{{ raise_exception('bad role ' + m['role']) }}{% endif %}"
            "{{ bos_token + m['role'] + '\\n' + m['content'] + eos_token }}{% endfor %}"
            "{% if add_generation_prompt %}{{ bos_token + 'assistant\\n' }}{% endif %}")


@pytest.fixture(scope="module")
def tok_gguf(tmp_path_factory):
    path = tmp_path_factory.mktemp("tok") / "tok.gguf"
    tokens = ["<unk>", "<|im_start|>", "<|im_end|>"] + _byte_alphabet() + ["th", "the", "Ġthe", "er", "<think>"]
    merges = ["t h", "th e", "Ġ the", "e r"]
    types = [2, 3, 3] + [1] * 256 + [1, 1, 1, 1, 4]
    wr = gguf.GGUFWriter(str(path), "llama")
    wr.add_tokenizer_model("gpt2")
    wr.add_tokenizer_pre("default")
    wr.add_token_list(tokens)
    wr.add_token_merges(merges)
    wr.add_token_types(types)
    wr.add_bos_token_id(1)
    wr.add_eos_token_id(2)
    wr.add_add_bos_token(False)
    wr.add_chat_template(TEMPLATE)
    write_gguf_file(wr)
    return path, tokens


def test_tokenizer_round_trip_and_merges(tok_gguf):
    path, tokens = tok_gguf
    tok = Tokenizer.from_gguf(path)
    for text in ["the other theme", "héllo wörld ✓ 日本", "  spaces\n\ttabs", "<|im_start|>user<|im_end|>"]:
        assert tok.decode(tok.encode(text)) == text
    ids = tok.encode("the over")  # "the" merges first, "er" inside "over"
    assert ids[0] == tokens.index("the") and tokens.index("er") in ids
    assert tok.encode("<|im_start|>x") == [1, tokens.index("x")]      # control tokens stay whole
    assert tokens.index("<think>") in tok.encode("a<think>b")          # user-defined tokens too
    assert tok.decode(tok.encode("<|im_end|>hi"), skip_special_tokens=True) == "hi"
    assert (tok.bos_token, tok.eos_token, tok.vocab_size) == ("<|im_start|>", "<|im_end|>", len(tokens))
    ids, mask = tok.batch_encode(["the", "the other"])
    assert ids.shape == mask.shape and mask[0].tolist()[0] == 0 and mask[1].tolist()[0] == 1


def test_chat_template(tok_gguf):
    tok = Tokenizer.from_gguf(tok_gguf[0])
    msgs = [{"role": "user", "content": "hi"}]
    assert tok.apply_chat_template(msgs) == "<|im_start|>user\nhi<|im_end|><|im_start|>assistant\n"
    assert tok.apply_chat_template(msgs, add_generation_prompt=False) == "<|im_start|>user\nhi<|im_end|>"
    assert tok.apply_chat_template(msgs, tokenize=True)[:2] == [1, tok.encode("user")[0]]
    import jinja2
    with pytest.raises(jinja2.exceptions.TemplateError, match="bad role tool"):
        tok.apply_chat_template([{"role": "tool", "content": "x"}])


def test_tokenizer_from_tokenizer_json(tok_gguf, tmp_path):
    import json
    tok = Tokenizer.from_gguf(tok_gguf[0])
    tok.backend.save(str(tmp_path / "tokenizer.json"))
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(
        {"bos_token": "<|im_start|>", "eos_token": {"content": "<|im_end|>"}, "chat_template": TEMPLATE}))
    again = Tokenizer.from_file(tmp_path)
    text = "the other héllo"
    assert again.encode(text) == tok.encode(text) and again.eos_token_id == 2
    assert again.apply_chat_template([{"role": "user", "content": "x"}]) == \
        tok.apply_chat_template([{"role": "user", "content": "x"}])


def test_unigram_gguf_tokenizer_is_refused(tmp_path):
    """SentencePiece-style BPE ("llama") is built (test_llm_spm_tokenizer.py); unigram ("t5") is not."""
    wr = gguf.GGUFWriter(str(tmp_path / "sp.gguf"), "llama")
    wr.add_tokenizer_model("t5")
    wr.add_token_list(["<unk>", "a"])
    write_gguf_file(wr)
    with pytest.raises(NotImplementedError, match="sp.gguf has a 't5' tokenizer"):
        Tokenizer.from_gguf(tmp_path / "sp.gguf")
