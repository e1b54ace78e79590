"""SentencePiece-style GGUF tokenizers (``tokenizer.ggml.model == "llama"``: llama-2/mistral, and gemma's
spelling): known ids of a hand-built vocabulary (merges derived from scores, or from the token order for
gemma; byte fallback; "▁" for spaces; control tokens kept whole; unknown bytes -> <unk>), the merges
derivation, round trips, errors, and -- where transformers is installed -- ids and decoded text equal to
``AutoTokenizer.from_pretrained(dir, gguf_file=...)`` on the same GGUF files."""
from __future__ import annotations

import pytest

from support.llm_reference import write_gguf_file

gguf = pytest.importorskip("gguf")
pytest.importorskip("tokenizers")
from tinytorch.models.tokenizer import Tokenizer, derived_merges, sentencepiece_backend  # noqa: E402

# ids: 0 <unk>, 1 <s>, 2 </s>, 3-5 bytes \n and é's two, 6 ▁, 7 a, 8 b, 9 ▁a, 10 ab, 11 c, 12 two spaces
HAND_TOKENS = ["<unk>", "<s>", "</s>", "<0x0A>", "<0xC3>", "<0xA9>", "\u2581", "a", "b", "\u2581a", "ab", "c", "  "]
HAND_SCORES = [0.0] * 9 + [-2.0, -1.0, 0.0, -3.0]      # "ab" outranks "▁a"; gemma goes by the order instead
HAND_TYPES = [2, 3, 3, 6, 6, 6, 1, 1, 1, 1, 1, 1, 1]   # llama.cpp: 2 unknown, 3 control, 6 byte


def test_hand_built_vocabulary_known_ids():
    llama = Tokenizer(sentencepiece_backend(HAND_TOKENS, HAND_SCORES, HAND_TYPES, unk_token_id=0),
                      bos_token_id=1, eos_token_id=2, add_bos_token=True)
    # "ab" -> "▁ab": the (a, b) merge (score -1) runs before (▁, a) (score -2)
    assert llama.encode("ab") == [1, 6, 10]
    # a "▁" is prepended to the text only; \n and é fall back to their bytes
    assert llama.encode("ba a\n\u00e9") == [1, 6, 8, 7, 9, 3, 4, 5]
    assert llama.encode("z") == [1, 6, 0]                        # no byte token for z: <unk>
    assert llama.encode("a<s>b", add_special_tokens=False) == [9, 1, 8]   # control tokens stay whole
    assert llama.decode([1, 6, 8, 7, 9, 3, 4, 5], skip_special_tokens=True) == "ba a\n\u00e9"
    assert llama.decode([9, 1, 8]) == "a<s>b"
    gemma = sentencepiece_backend(HAND_TOKENS, HAND_SCORES, HAND_TYPES, gemma=True, unk_token_id=0)
    # nothing prepended; merges by token order: (▁, a) (id 9) before (a, b) (id 10)
    assert gemma.encode(" ab").ids == [9, 8] and gemma.encode("ab").ids == [10]
    assert gemma.encode("c  c").ids == [11, 12, 11]             # the spaces-only token is spelled "▁▁"
    assert gemma.decode([11, 12, 11]) == "c  c"


def test_derived_merges_order():
    """transformers' generate_merges: a token's splits into two vocabulary tokens, best score first,
    ties by the longer left part; without scores by token id, ties by the shorter left part (as
    transformers' reversed sort)."""
    tokens = ["a", "b", "c", "ab", "bc", "abc"]
    assert derived_merges(tokens, {"ab": -1.0, "bc": -2.0, "abc": -3.0}) == [("a", "b"), ("b", "c"),
                                                                               ("ab", "c"), ("a", "bc")]
    assert derived_merges(tokens, {"abc": 0.0, "bc": -1.0, "ab": -2.0}) == [("ab", "c"), ("a", "bc"),
                                                                              ("b", "c"), ("a", "b")]
    assert derived_merges(tokens) == [("a", "b"), ("b", "c"), ("a", "bc"), ("ab", "c")]


# ---------------------------------------------------------------------------------------- GGUF files
WORDS = ["\u2581", "t", "h", "e", "\u2581t", "th", "\u2581th", "\u2581the", "he", "o", "r", "er", "\u2581o",
         "\u2581other", "\u2581ot", "ot", "her", "\u2581her", "l", "lo", "\u2581hel", "hel", "\u2581hello", "ll",
         "llo", "w", "\u2581w", "d", "\u2581wor", "or", "ld", "\u2581world", "  ", "\u2581\u2581", "a", "n", "an",
         "\u2581an", "\u2581and", "el", "\u2581h", "rl", "wo"]
TEXTS = ["the other hello world", " hello  world\n", "h\u00e9llo w\u00f6rld \u2713 \u65e5\u672c",
         "<start_of_turn>the<think> and", "  ", "", "a\tb", "and hand, other theworld   held"]


def write_spm_gguf(path, arch: str, seed: int = 0):
    """A SentencePiece-style vocabulary (all 256 byte tokens, shuffled scores: merge order != id order)
    with the model keys transformers' GGUF config reader needs; returns the tokens."""
    import numpy as np
    rng = np.random.default_rng(seed)
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)] + WORDS + ["<start_of_turn>", "<think>"]
    scores = [0.0] * 259 + [float(s) for s in -rng.permutation(len(WORDS))] + [0.0, 0.0]
    types = [2, 3, 3] + [6] * 256 + [1] * len(WORDS) + [3, 4]
    wr = gguf.GGUFWriter(str(path), arch)
    wr.add_context_length(64)
    wr.add_embedding_length(16)
    wr.add_block_count(1)
    wr.add_feed_forward_length(32)
    wr.add_head_count(2)
    wr.add_head_count_kv(2)
    wr.add_layer_norm_rms_eps(1e-5)
    wr.add_tokenizer_model("llama")
    wr.add_token_list(tokens)
    wr.add_token_scores(scores)
    wr.add_token_types(types)
    wr.add_bos_token_id(1)
    wr.add_eos_token_id(2)
    wr.add_unk_token_id(0)
    write_gguf_file(wr)
    return tokens


@pytest.fixture(scope="module")
def spm_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("spm")
    tokens = {arch: write_spm_gguf(folder / f"{arch}.gguf", arch) for arch in ("llama", "gemma2")}
    return folder, tokens


@pytest.mark.parametrize("arch", ["llama", "gemma2"])
def test_gguf_round_trip(spm_files, arch):
    folder, tokens = spm_files
    tok = Tokenizer.from_gguf(folder / f"{arch}.gguf")
    # gemma spells the "  " token "▁▁", which the vocabulary already has (the later id wins, as transformers)
    size = len(tokens[arch]) - (arch == "gemma2")
    assert (tok.bos_token, tok.eos_token, tok.add_bos_token, tok.vocab_size) == ("<s>", "</s>", True, size)
    # (llama's decoder strips the space its pre-tokenizer prepends: a text's own leading space goes too)
    for text in [t for t in TEXTS if arch == "gemma2" or not t.startswith(" ")]:
        ids = tok.encode(text)
        assert ids[0] == 1 and ids[1:] == tok.encode(text, add_special_tokens=False)
        assert tok.decode(ids[1:]) == text
    ids = tok.encode("<start_of_turn>x", add_special_tokens=False)
    assert ids[0] == tokens[arch].index("<start_of_turn>")
    assert tok.decode(tok.encode("the<start_of_turn>"), skip_special_tokens=True) == "the"


def test_llama_and_gemma_spellings_differ(spm_files):
    """The same vocabulary: llama prepends "▁" and merges by score, gemma does neither."""
    folder, tokens = spm_files
    llama, gemma = (Tokenizer.from_gguf(folder / f"{a}.gguf") for a in ("llama", "gemma2"))
    assert llama.encode("the", add_special_tokens=False) == [tokens["llama"].index("\u2581the")]
    assert gemma.encode(" the", add_special_tokens=False) == [tokens["gemma2"].index("\u2581the")]
    assert gemma.encode("the", add_special_tokens=False)[0] != tokens["gemma2"].index("\u2581the")


@pytest.mark.parametrize("arch", ["llama", "gemma2"])
def test_ids_equal_transformers(spm_files, arch):
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("torch")
    import numpy as np
    folder, _ = spm_files
    ref = transformers.AutoTokenizer.from_pretrained(str(folder), gguf_file=f"{arch}.gguf")
    tok = Tokenizer.from_gguf(folder / f"{arch}.gguf")
    rng = np.random.default_rng(1)
    alphabet = list("thelowrdan ") + ["  ", "\n", "\u00e9", "\u2713", "<think>", "<start_of_turn>", "z"]
    texts = TEXTS + ["".join(rng.choice(alphabet, 12)) for _ in range(40)]
    for text in texts:
        want = ref.encode(text)
        assert tok.encode(text) == want, text
        assert tok.decode(want) == ref.decode(want), text
        assert tok.decode(want, skip_special_tokens=True) == ref.decode(want, skip_special_tokens=True), text


def test_errors(tmp_path):
    wr = gguf.GGUFWriter(str(tmp_path / "noscores.gguf"), "llama")
    wr.add_tokenizer_model("llama")
    wr.add_token_list(["<unk>", "a", "b", "ab"])
    write_gguf_file(wr)
    with pytest.raises(ValueError, match="no merges, so each of its 4 tokens needs a score"):
        Tokenizer.from_gguf(tmp_path / "noscores.gguf")
    # a unigram ("t5") vocabulary is refused: test_llm_gguf.py::test_unigram_gguf_tokenizer_is_refused
