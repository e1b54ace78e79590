"""GGUF fuzzing (tests/fuzz/gguf_cases.py): a tiny valid llama GGUF truncated at each offset, with
bits flipped and with crafted counts, lengths, offsets, types, dims and metadata values; each file
loaded (model and tokenizer, then a forward pass, an encode and a chat template) by a child
interpreter under a 1 GiB address-space cap and a 20 s deadline. A case must load exactly the
original model, or, where its damage is content (metadata values, tensor data), a different one,
or be refused by a ValueError/RuntimeError naming the file, as its expectation says; never crash,
hang, run out of its memory cap or raise another exception type.

CI tier: a bounded corpus (cuts at every offset through the tensor table and every 5th in the data;
every bit of the header flipped, flips sampled in the other regions; every crafted case; the type
relabels of three tensors). The long tier (`pytest -m fuzz tests/fuzz/test_fuzz_gguf.py`) cuts at
every offset, flips every bit of the file and relabels every tensor to every type."""
import os

import numpy as np
import pytest

from fuzz import gguf_cases as G

pytest.importorskip("gguf")
pytest.importorskip("tokenizers")
pytest.importorskip("jinja2")


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    path = tmp_path_factory.mktemp("gguf_base") / "base.gguf"
    G.write_base(path)
    data = path.read_bytes()
    spec = G.spec_of(path)
    encoded, regions = G.encode(spec)
    return str(path), data, spec, regions


def _span(regions, name):
    spans = [(a, b) for a, b, r in regions if r == name]
    return spans[0][0], spans[-1][1]


def _positions(regions, name, n, rng, every_bit=False, stride=1):
    a, b = _span(regions, name)
    if every_bit:
        return [(p, bit) for p in range(a, b) for bit in range(0, 8, stride)]
    return [(int(p), int(bit)) for p, bit in zip(rng.integers(a, b, n), rng.integers(0, 8, n))]


def _check(counts, bad, peak, n, refused_share=3):
    assert sum(counts.values()) == n, G.report(counts, bad, peak)
    assert not bad, G.report(counts, bad, peak)
    assert counts["refused"] > n // refused_share, G.report(counts, bad, peak)   # the corpus really damages files
    assert peak[0] < G.PEAK_BOUND_KIB, G.report(counts, bad, peak)


def test_encoder_writes_the_gguf_writers_bytes(base):
    path, data, spec, regions = base
    encoded, _ = G.encode(spec)
    assert encoded == data
    assert [r for _, _, r in regions][:2] == ["header", "kv"] and regions[-1][2] == "data"
    assert len(data) < 16384


def test_fuzzer_reports_memory_past_the_cap(tmp_path, base):
    """The harness itself: a case allocating twice the cap gets MemoryError in the child (status
    "memory", not a crash), and the next case runs."""
    path, data, *_ = base
    items = [("ok", data, G.SAME), ("alloc", b"", G.SAME), ("ok again", data, G.SAME)]
    counts, bad, peak = G.run_file_cases(tmp_path, "gguf", items[:1], {"gguf": path})
    assert counts == {"same": 1}, G.report(counts, bad, peak)
    counts, bad, peak = G.run_file_cases(tmp_path, "_alloc", items[1:2], {})
    assert counts == {"memory": 1} and [b[2]["status"] for b in bad] == ["memory"], G.report(counts, bad, peak)


def test_gguf_fuzz_ci_tier(tmp_path, base):
    path, data, spec, regions = base
    rng = np.random.default_rng(20261201)
    table_end = _span(regions, "pad")[1]
    items = G.truncations(data, spec, regions, step=5, dense_until=table_end)
    flips = (_positions(regions, "header", 0, None, every_bit=True) + _positions(regions, "table", 1500, rng) +
             _positions(regions, "kv", 800, rng) + _positions(regions, "pad", 40, rng) +
             _positions(regions, "data", 300, rng))
    items += G.bit_flips(data, regions, flips)
    picked = ("token_embd.weight", "blk.0.attn_k.weight", "blk.0.ffn_down.weight")
    items += [c for c in G.crafted(spec) if not c[0].startswith("type:") or c[0].split(":")[1] in picked]
    counts, bad, peak = G.run_file_cases(tmp_path, "gguf", items, {"gguf": path})
    print(G.report(counts, bad, peak))
    _check(counts, bad, peak, len(items))


@pytest.mark.fuzz
def test_gguf_fuzz_long_tier(tmp_path, base):
    path, data, spec, regions = base
    items = G.truncations(data, spec, regions)
    flips = [(p, bit) for p in range(len(data)) for bit in range(8)]     # every bit of the file
    items += G.bit_flips(data, regions, flips)
    items += G.crafted(spec)
    n = int(os.environ.get("TINYTORCH_FUZZ_CASES", len(items)))
    items = items[:n]
    counts, bad, peak = G.run_file_cases(tmp_path, "gguf", items, {"gguf": path})
    report = G.report(counts, bad, peak, limit=60)
    print(report)
    if os.environ.get("TINYTORCH_FUZZ_REPORT"):
        with open(os.environ["TINYTORCH_FUZZ_REPORT"], "w") as f:
            f.write(report + "\n")
    _check(counts, bad, peak, len(items), refused_share=5)      # most flips land in tensor data: they load


# ------------------------------------------------------------------------ the defects the fuzzer found
MODEL, TOKENIZER = "model", "tokenizer"
REGRESSIONS = [
    # the table describing fewer bytes than the data section (loaded shifted or short data silently)
    ("16 trailing bytes", MODEL, r"16 bytes past the end of its last tensor"),
    ("general.alignment=16", MODEL, r"bytes past the end of its last tensor"),
    ("type:blk.0.ffn_down.weight:Q8_0->Q4_0", MODEL, r"bytes past the end of its last tensor"),
    # integer ggml types read as weights (F32 -> I32 keeps the byte count)
    ("type:blk.0.attn_k.weight:F32->I32", MODEL, r"'blk\.0\.attn_k\.weight' has ggml type I32, an integer type"),
    ("type:token_embd.weight:F16->I16", MODEL, r"'token_embd\.weight' has ggml type I16, an integer type"),
    # metadata values of the wrong type or range (loaded, then failed or computed NaN later)
    ("context_length=8:'64'", MODEL, r"llama\.context_length must be a positive integer, got '64'"),
    ("context_length=4:0", MODEL, r"llama\.context_length must be a positive integer, got 0"),
    ("rope.freq_base=6:nan", MODEL, r"llama\.rope\.freq_base must be a finite number > 0, got nan"),
    ("rope.freq_base=8:'10000'", MODEL, r"llama\.rope\.freq_base must be a finite number > 0, got '10000'"),
    ("attention.layer_norm_rms_epsilon=6:-1.0", MODEL, r"layer_norm_rms_epsilon must be a finite number >= 0"),
    ("rope.scaling.factor=8:'2'", MODEL, r"llama\.rope\.scaling\.factor must be a finite number > 0"),
    ("attention.sliding_window=4:0", MODEL, r"llama\.attention\.sliding_window must be a positive integer"),
    ("eos_token_id=2.0", MODEL, r"tokenizer\.ggml\.eos_token_id must be a non-negative integer token id"),
    ("attention.head_count_kv=4:3", MODEL, r"case\.gguf: LlamaConfig: num_attention_heads \(2\) must be a multiple"),
    ("rope_freqs.weight Q8_0", MODEL, r"rope_freqs\.weight must be F32 or F16 of shape \[4\].*got Q8_0"),
    ("rope_freqs.weight of 3", MODEL, r"rope_freqs\.weight must be F32 or F16 of shape \[4\]"),
    ("rope_freqs.weight with NaN", MODEL, r"rope_freqs\.weight: the frequency factors must be finite and > 0"),
    # tokenizer metadata (TypeError, AttributeError, the tokenizers library's Exception, a Rust panic)
    ("tokens as one string", TOKENIZER, r"tokenizer\.ggml\.tokens must be a non-empty array of strings, got str"),
    ("tokens as ints", TOKENIZER, r"tokenizer\.ggml\.tokens must be a non-empty array of strings"),
    ("merges as ints", TOKENIZER, r"tokenizer\.ggml\.merges must be an array of strings"),
    ("merge without a space", TOKENIZER, r"each merge must be two tokens separated by one space, got 'abcd'"),
    ("merge of unknown tokens", TOKENIZER, r"the vocabulary and merges do not make a tokenizer"),
    ("token_type as strings", TOKENIZER, r"tokenizer\.ggml\.token_type must be an array of 24 integers"),
    ("token_type too short", TOKENIZER, r"tokenizer\.ggml\.token_type must be an array of 24 integers"),
    ("bos_token_id='1'", TOKENIZER, r"tokenizer\.ggml\.bos_token_id must be a non-negative integer token id"),
    ("add_bos_token='false'", TOKENIZER, r"tokenizer\.ggml\.add_bos_token must be a BOOL, got str 'false'"),
    ("chat_template=5", TOKENIZER, r"tokenizer\.chat_template must be a string, got int 5"),
]


@pytest.mark.parametrize("label, loader, match", REGRESSIONS, ids=[r[0] for r in REGRESSIONS])
def test_crafted_file_is_refused_naming_file_and_key(tmp_path, base, label, loader, match):
    from tinytorch.models import LlamaForCausalLM
    from tinytorch.models.tokenizer import Tokenizer
    _, _, spec, _ = base
    (data,) = [b for lab, b, _ in G.crafted(spec) if lab == label]
    path = tmp_path / "case.gguf"
    path.write_bytes(data)
    with pytest.raises(ValueError, match=match) as e:
        (LlamaForCausalLM.from_gguf if loader == MODEL else Tokenizer.from_gguf)(path)
    assert str(path) in str(e.value)


def test_special_id_outside_the_vocabulary_is_dropped_with_a_warning(tmp_path, base):
    from tinytorch.models.tokenizer import Tokenizer
    _, _, spec, _ = base
    (data,) = [b for lab, b, _ in G.crafted(spec) if lab == "bos_token_id=10^6"]
    path = tmp_path / "case.gguf"
    path.write_bytes(data)
    with pytest.warns(UserWarning, match=r"bos_token_id 1000000 is outside the vocabulary of 24 tokens"):
        tok = Tokenizer.from_gguf(path)
    assert tok.bos_token_id is None and tok.eos_token_id == 2
    assert tok.encode("ab") == [16]              # no out-of-range id prepended
