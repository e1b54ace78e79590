"""Model-file fuzzing: the GGUF case generators, and the child that loads GGUF and PyTorch (.pt)
cases one by one under a memory cap (the .pt cases are made in tests/fuzz/test_fuzz_pt.py).

GGUF: a tiny valid llama file (:func:`write_base`: one block of width 16, a 24-token byte-level BPE
vocabulary with merges and a chat template; F32, F16, BF16 and Q8_0 tensors) is written with
``gguf.GGUFWriter``, read back into a :class:`Spec` that :func:`encode` turns into the same bytes
(tests/fuzz/test_fuzz_gguf.py checks it), and damaged: truncated at each offset, bits flipped, and
counts, lengths, offsets, types, dims and metadata values crafted (:func:`crafted`). Every case says
what it must do (``expect``), by what the damage touched:

* ``refuse``: a ``ValueError``/``RuntimeError`` naming the file (truncated data, impossible counts,
  lengths, offsets, types, a metadata value of the wrong type or range);
* ``refuse_or_same``: refused, or loaded with exactly the original model and tokenizer (the header
  and the tensor table: a damaged table must never load different tensors);
* ``same``: loads the original (only final padding missing; an equivalent encoding);
* ``any``: may also load a different model (a metadata value or a data byte changed: the file says
  something else, validly) or refuse the prompt later with a clean error.

Never allowed: a crash, a hang, memory past the cap, an exception of another type (TypeError,
KeyError, AttributeError, ...), or one that doesn't name the file.

Child usage: python gguf_cases.py LIST.json START, LIST.json {"base": {kind: path}, "cases": [...]},
each case {"kind": "gguf"|"pt", "path", ...}; one JSON line per case: {"i", "status", "peak_kib"}.
"""
from __future__ import annotations

import copy
import json
import math
import os
import struct
import sys
from dataclasses import dataclass, field
from typing import Any, List, Optional, Tuple

import numpy as np

# ------------------------------------------------------------------------------------------ outcomes
SAME, REFUSE, REFUSE_OR_SAME, ANY = "same", "refuse", "refuse_or_same", "any"
ALLOWED = {SAME: {"same"}, REFUSE: {"refused"}, REFUSE_OR_SAME: {"refused", "same"},
           ANY: {"refused", "same", "different", "late_refusal"}}
MEMORY_CAP = 1 << 30          # bytes of address space a case may add to the child's (RLIMIT_AS)
# What a case may add to the child's peak RSS: the largest real data of any case (the .pt corpus's 4 MiB
# storage of zeros, which the outcome's digest copies once more) plus a constant. A loader that
# allocates what a header claims instead of what the file holds goes past it long before the cap.
PEAK_BOUND_KIB = 32 * 1024


def verdict(case: dict, result: dict) -> bool:
    """Whether a case's outcome is one its expectation allows."""
    return result["status"] in ALLOWED[case["expect"]]


# ------------------------------------------------------------------------------- the tiny llama file
TOKENS = ["<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>", "a", "b", "c", "d", "e", "u", "s", "r", "t",
          "\u0120", "\u010a", "ab", "cd", "\u0120a", "abcd", "us", "er", "user", "\u0120b"]
MERGES = ["a b", "c d", "\u0120 a", "ab cd", "u s", "e r", "us er", "\u0120 b"]
TOKEN_TYPES = [2, 3, 3, 3, 3] + [1] * (len(TOKENS) - 5)
CHAT_TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
                 "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
HIDDEN, FFN, HEADS, KV_HEADS, VOCAB = 16, 32, 2, 1, len(TOKENS)
IDS = [1, 5, 16, 19, 22, 3]
TEXT = "abcd user ab"
MESSAGES = [{"role": "user", "content": "abcd"}]
# (name, numpy shape (rows first), ggml type name); the Q8_0 tensor last, so a type or dims change of
# the last tensor moves the file's end
TENSORS = [("token_embd.weight", (VOCAB, HIDDEN), "F16"), ("output_norm.weight", (HIDDEN,), "F32"),
           ("blk.0.attn_norm.weight", (HIDDEN,), "F32"), ("blk.0.attn_q.weight", (HIDDEN, HIDDEN), "BF16"),
           ("blk.0.attn_k.weight", (8, HIDDEN), "F32"), ("blk.0.attn_v.weight", (8, HIDDEN), "F32"),
           ("blk.0.attn_output.weight", (HIDDEN, HIDDEN), "F32"), ("blk.0.ffn_norm.weight", (HIDDEN,), "F32"),
           ("blk.0.ffn_gate.weight", (FFN, HIDDEN), "F32"), ("blk.0.ffn_up.weight", (FFN, HIDDEN), "F16"),
           ("blk.0.ffn_down.weight", (HIDDEN, FFN), "Q8_0")]


def write_base(path) -> None:
    """The tiny valid llama GGUF, written as llama.cpp's converter writes one (gguf.GGUFWriter)."""
    import gguf
    Q = gguf.GGMLQuantizationType
    rng = np.random.default_rng(5)
    wr = gguf.GGUFWriter(str(path), "llama")
    wr.add_custom_alignment(32)
    wr.add_block_count(1)
    wr.add_context_length(64)
    wr.add_embedding_length(HIDDEN)
    wr.add_feed_forward_length(FFN)
    wr.add_head_count(HEADS)
    wr.add_head_count_kv(KV_HEADS)
    wr.add_key_length(HIDDEN // HEADS)
    wr.add_rope_dimension_count(HIDDEN // HEADS)
    wr.add_rope_freq_base(10000.0)
    wr.add_layer_norm_rms_eps(1e-5)
    wr.add_vocab_size(VOCAB)
    wr.add_tokenizer_model("gpt2")
    wr.add_token_list(TOKENS)
    wr.add_token_merges(MERGES)
    wr.add_token_types(TOKEN_TYPES)
    wr.add_bos_token_id(1)
    wr.add_eos_token_id(2)
    wr.add_pad_token_id(2)
    wr.add_add_bos_token(True)
    wr.add_chat_template(CHAT_TEMPLATE)
    for name, shape, tname in TENSORS:
        a = rng.standard_normal(shape) * (0.3 if len(shape) == 2 else 0.1) + (0 if len(shape) == 2 else 1)
        a = a.astype(np.float32)
        if tname == "F32":
            wr.add_tensor(name, a)
        elif tname == "F16":
            wr.add_tensor(name, a.astype(np.float16))
        elif tname == "BF16":
            u = a.view(np.uint32).astype(np.uint64)
            bits = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
            wr.add_tensor(name, bits.view(np.uint8), raw_dtype=Q.BF16)
        else:
            wr.add_tensor(name, gguf.quants.quantize(a, Q.Q8_0), raw_dtype=Q.Q8_0)
    wr.write_header_to_file()
    wr.write_kv_data_to_file()
    wr.write_tensors_to_file()
    wr.close()


# ------------------------------------------------------------------------------- spec and encoding
STRING, ARRAY = 8, 9
UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, UINT64, INT64, FLOAT64 = 0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 12
_FORMATS = {UINT8: "<B", INT8: "<b", UINT16: "<H", INT16: "<h", UINT32: "<I", INT32: "<i", FLOAT32: "<f",
            BOOL: "<?", UINT64: "<Q", INT64: "<q", FLOAT64: "<d"}
# ggml type code -> (name, weights per block, bytes per block): tinytorch's table, checked against
# gguf.GGML_QUANT_SIZES by tests/models/test_gguf_file.py
from tinytorch.models.gguf_file import GGML_TYPES  # noqa: E402
TYPE_CODE = {v[0]: k for k, v in GGML_TYPES.items()}


@dataclass
class KV:
    key: str
    vtype: int
    value: Any = None
    etype: Optional[int] = None       # an array's element type
    raw: Optional[bytes] = None       # the payload after the type field, as is (crafted lengths)


@dataclass
class TensorEntry:
    name: str
    dims: List[int]                   # ggml order: ne0 first
    gtype: int
    offset: int
    raw: Optional[bytes] = None       # the whole table entry, as is


@dataclass
class Spec:
    kvs: List[KV]
    tensors: List[TensorEntry]
    data: bytes
    version: int = 3
    alignment: int = 32               # how encode pads the table (not the metadata key)
    n_kv: Optional[int] = None        # counts in the header, when they lie
    n_tensors: Optional[int] = None
    tail: bytes = b""                 # appended after the data

    def kv(self, key: str) -> KV:
        return next(k for k in self.kvs if k.key == key)

    def tensor(self, name: str) -> TensorEntry:
        return next(t for t in self.tensors if t.name == name)


def _s(text) -> bytes:
    b = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    return struct.pack("<Q", len(b)) + b


def encode_value(vtype: int, value: Any, etype: Optional[int] = None) -> bytes:
    if vtype == STRING:
        return _s(value)
    if vtype == ARRAY:
        if etype == ARRAY:            # nested: each element is (element type, values)
            return struct.pack("<IQ", ARRAY, len(value)) + b"".join(encode_value(ARRAY, v, e) for e, v in value)
        return struct.pack("<IQ", etype, len(value)) + b"".join(encode_value(etype, v) for v in value)
    return struct.pack(_FORMATS[vtype], value)


def encode(spec: Spec) -> Tuple[bytes, list]:
    """(the file's bytes, [(start, end, region)]), regions "header", "kv", "table", "pad", "data", "tail"."""
    out, regions = bytearray(), []

    def put(b: bytes, region: str) -> None:
        regions.append((len(out), len(out) + len(b), region))
        out.extend(b)

    put(b"GGUF" + struct.pack("<IQQ", spec.version, len(spec.tensors) if spec.n_tensors is None else spec.n_tensors,
                              len(spec.kvs) if spec.n_kv is None else spec.n_kv), "header")
    for kv in spec.kvs:
        payload = kv.raw if kv.raw is not None else encode_value(kv.vtype, kv.value, kv.etype)
        put(_s(kv.key) + struct.pack("<I", kv.vtype) + payload, "kv")
    for t in spec.tensors:
        put(t.raw if t.raw is not None else
            _s(t.name) + struct.pack(f"<I{len(t.dims)}QIQ", len(t.dims), *t.dims, t.gtype, t.offset), "table")
    if spec.tensors:
        put(b"\0" * (-len(out) % spec.alignment), "pad")
    put(spec.data, "data")
    if spec.tail:
        put(spec.tail, "tail")
    return bytes(out), [r for r in regions if r[1] > r[0]]


def spec_of(path) -> Spec:
    """The Spec of a file our reader accepts (metadata in file order, tensor table, data section)."""
    from tinytorch.models.gguf_file import read_gguf
    f = read_gguf(path)
    kvs = []
    for key, value in f.metadata.items():
        types = f.value_types[key]
        if types[0] == ARRAY:
            kvs.append(KV(key, ARRAY, value.tolist() if isinstance(value, np.ndarray) else list(value), types[1]))
        else:
            kvs.append(KV(key, types[0], value))
    data = open(path, "rb").read()[f.data_offset:]
    tensors = [TensorEntry(t.name, list(t.dims), t.ggml_type, t.offset - f.data_offset) for t in f.tensors.values()]
    return Spec(kvs, tensors, data, version=f.version, alignment=f.alignment)


def nbytes(dims, gtype: int) -> int:
    _, block, size = GGML_TYPES[gtype]
    return math.prod(dims) // block * size


def relaid(spec: Spec) -> Spec:
    """spec with each tensor's offset the running aligned offset of the table as it now is, the data
    section cut or zero-padded to the new end (for tables whose sizes were edited on purpose)."""
    s = copy.deepcopy(spec)
    pos = 0
    for t in s.tensors:
        t.offset = pos
        pos = -(-(pos + nbytes(t.dims, t.gtype)) // s.alignment) * s.alignment
    s.data = s.data[:pos] + bytes(max(0, pos - len(s.data)))
    return s


# --------------------------------------------------------------------------------------- the cases
def region_at(regions: list, pos: int) -> str:
    return next(r for a, b, r in regions if a <= pos < b)


def flip_expectation(region: str) -> str:
    """What a flipped bit in ``region`` may do: the header and tensor table are structure (refused,
    or, for a flip the format ignores, the same model); metadata values and tensor data are content."""
    return {"header": REFUSE_OR_SAME, "table": REFUSE_OR_SAME, "pad": REFUSE_OR_SAME}.get(region, ANY)


def needed_end(spec: Spec, data: bytes, regions: list) -> int:
    """The first byte past the last tensor's data (the padding after it may be missing)."""
    last = spec.tensors[-1]
    start = next(a for a, b, r in regions if r == "data")
    return start + last.offset + nbytes(last.dims, last.gtype)


def truncations(data: bytes, spec: Spec, regions: list, step: int = 1, dense_until: int = 0) -> list:
    """(label, bytes, expect) for the file cut at every ``step``-th offset (every one below
    ``dense_until``): refused unless only the final padding is gone."""
    end = needed_end(spec, data, regions)
    cuts = sorted(set(range(0, min(dense_until, len(data)))) | set(range(0, len(data), step)))
    return [(f"truncate@{n}", data[:n], REFUSE if n < end else SAME) for n in cuts]


def bit_flips(data: bytes, regions: list, positions) -> list:
    out = []
    for pos, bit in positions:
        b = bytearray(data)
        b[pos] ^= 1 << bit
        region = region_at(regions, pos)
        out.append((f"flip@{pos}.{bit}:{region}", bytes(b), flip_expectation(region)))
    return out


def _with_kv(spec: Spec, key: str, vtype: int, value: Any = None, etype: Optional[int] = None,
             raw: Optional[bytes] = None) -> Spec:
    s = copy.deepcopy(spec)
    new = KV(key, vtype, value, etype, raw)
    for i, kv in enumerate(s.kvs):
        if kv.key == key:
            s.kvs[i] = new
            return s
    s.kvs.append(new)
    return s


def _without_kv(spec: Spec, key: str) -> Spec:
    s = copy.deepcopy(spec)
    s.kvs = [kv for kv in s.kvs if kv.key != key]
    return s


def _edit_tensor(spec: Spec, name: str, **changes) -> Spec:
    s = copy.deepcopy(spec)
    t = s.tensor(name)
    for k, v in changes.items():
        setattr(t, k, v)
    return s


def _label_of(code: int) -> str:
    return GGML_TYPES[code][0] if code in GGML_TYPES else f"type{code}"


def type_relabels(spec: Spec) -> list:
    """Every tensor's ggml type replaced by every code (known types, unknown ones): the same bytes
    read as another float type of the same width (F16 <-> BF16) is indistinguishable from changed
    data; any other relabel must be refused (integer types included)."""
    out = []
    codes = sorted(GGML_TYPES) + [4, 5, 31, 36, 42, 255, 2 ** 31, 2 ** 32 - 1]
    for t in spec.tensors:
        for code in codes:
            if code == t.gtype:
                continue
            same_width_float = {_label_of(code), _label_of(t.gtype)} == {"F16", "BF16"}
            out.append((f"type:{t.name}:{_label_of(t.gtype)}->{_label_of(code)}",
                        encode(_edit_tensor(spec, t.name, gtype=code))[0], ANY if same_width_float else REFUSE))
    return out


def crafted(spec: Spec) -> list:
    """(label, bytes, expect): hand-made hostile files, each one damage at a time."""
    enc = lambda s: encode(s)[0]  # noqa: E731
    out = []

    def add(label, s_or_bytes, expect):
        out.append((label, s_or_bytes if isinstance(s_or_bytes, bytes) else enc(s_or_bytes), expect))

    n_kv, n_t = len(spec.kvs), len(spec.tensors)
    # counts in the header
    for label, kw in (("n_tensors=2^40", dict(n_tensors=2 ** 40)), ("n_kv=2^40", dict(n_kv=2 ** 40)),
                      ("n_tensors=2^64-1", dict(n_tensors=2 ** 64 - 1)), ("n_kv=2^64-1", dict(n_kv=2 ** 64 - 1)),
                      ("n_tensors+1", dict(n_tensors=n_t + 1)), ("n_tensors-1", dict(n_tensors=n_t - 1)),
                      ("n_kv+1", dict(n_kv=n_kv + 1)), ("n_kv-1", dict(n_kv=n_kv - 1)),
                      ("n_tensors=0", dict(n_tensors=0)), ("n_kv=0", dict(n_kv=0))):
        s = copy.deepcopy(spec)
        for k, v in kw.items():
            setattr(s, k, v)
        add(label, s, REFUSE)
    for version, expect in ((1, REFUSE), (2, SAME), (4, REFUSE), (0, REFUSE), (3 << 16, REFUSE), (2 ** 32 - 1, REFUSE)):
        s = copy.deepcopy(spec)
        s.version = version
        add(f"version={version}", s, expect)
    # array and string lengths
    tokens = spec.kv("tokenizer.ggml.tokens")
    body = b"".join(_s(t) for t in tokens.value)
    for n, expect in ((2 ** 40, REFUSE), (2 ** 64 - 1, REFUSE), (len(tokens.value) + 1, REFUSE),
                      (len(tokens.value) - 1, REFUSE), (0, REFUSE)):
        add(f"tokens.count={n}", _with_kv(spec, tokens.key, ARRAY, raw=struct.pack("<IQ", STRING, n) + body), expect)
    for i, n in ((0, 2 ** 62), (3, 2 ** 64 - 1), (len(tokens.value) - 1, 10 ** 6)):
        parts = [_s(t) for t in tokens.value]
        parts[i] = struct.pack("<Q", n) + parts[i][8:]
        add(f"tokens[{i}].length={n}", _with_kv(spec, tokens.key, ARRAY,
                                                raw=struct.pack("<IQ", STRING, len(parts)) + b"".join(parts)), REFUSE)
    merges = spec.kv("tokenizer.ggml.merges")
    add("merges.count=2^40", _with_kv(spec, merges.key, ARRAY, raw=struct.pack("<IQ", STRING, 2 ** 40) +
                                      b"".join(_s(m) for m in merges.value)), REFUSE)
    add("array.etype=99", _with_kv(spec, tokens.key, ARRAY, raw=struct.pack("<IQ", 99, len(tokens.value)) + body),
        REFUSE)
    template = spec.kv("tokenizer.chat_template").value.encode()
    for n in (2 ** 62, 2 ** 64 - 1, len(template) + 1, 2 ** 31):
        add(f"chat_template.length={n}", _with_kv(spec, "tokenizer.chat_template", STRING,
                                                  raw=struct.pack("<Q", n) + template), REFUSE)
    first = copy.deepcopy(spec)
    add("key0.length=2^63", enc(first)[:24] + struct.pack("<Q", 2 ** 63) + enc(first)[32:], REFUSE)
    nested = struct.pack("<IQ", ARRAY, 1) * 40 + struct.pack("<IQ", UINT8, 0)
    add("array nested 40 deep", _with_kv(spec, "x.deep", ARRAY, raw=nested), REFUSE)
    add("array of 2^40 uint8", _with_kv(spec, "x.big", ARRAY, raw=struct.pack("<IQ", UINT8, 2 ** 40)), REFUSE)
    add("unknown value type 13", _with_kv(spec, "x.t", 13, raw=b"\0" * 8), REFUSE)
    dup = copy.deepcopy(spec)
    dup.kvs.append(copy.deepcopy(spec.kvs[1]))
    add("duplicate key", dup, REFUSE)
    add("string value not UTF-8", _with_kv(spec, "x.s", STRING, raw=_s(b"\xff\xfe")), REFUSE)
    add("key not UTF-8", enc(spec)[:24] + _s(b"k\xc3") + enc(spec)[24 + 8 + len(spec.kvs[0].key):], REFUSE)
    add("unknown extra key", _with_kv(spec, "x.unused", STRING, "hello"), SAME)

    # metadata values: llama.* hyperparameters, of the right type and range, or refused
    arch = "llama."
    for key, cases in {
        "block_count": [(UINT32, 10 ** 6, REFUSE), (UINT32, 0, REFUSE), (UINT32, 2, REFUSE), (UINT32, 2 ** 32 - 1, REFUSE),
                        (UINT64, 1, REFUSE_OR_SAME), (INT32, 1, REFUSE_OR_SAME), (INT32, -1, REFUSE),
                        (FLOAT32, 1.0, REFUSE), (STRING, "1", REFUSE), (BOOL, True, REFUSE)],
        "embedding_length": [(UINT32, 2 ** 20, REFUSE), (UINT32, 15, REFUSE), (UINT32, 32, REFUSE), (UINT32, 0, REFUSE),
                             (STRING, "16", REFUSE), (FLOAT32, 16.0, REFUSE), (FLOAT64, float("nan"), REFUSE)],
        "feed_forward_length": [(UINT32, 10 ** 9, REFUSE), (UINT32, 31, REFUSE), (UINT64, 2 ** 63, REFUSE)],
        "attention.head_count": [(UINT32, 0, REFUSE), (UINT32, 3, REFUSE), (UINT32, 4, REFUSE), (UINT32, 16, REFUSE),
                                 (UINT32, 2 ** 31, REFUSE), (STRING, "2", REFUSE)],
        "attention.head_count_kv": [(UINT32, 0, REFUSE), (UINT32, 2, REFUSE), (UINT32, 3, REFUSE),
                                    (UINT32, 2 ** 32 - 1, REFUSE), (FLOAT32, 1.0, REFUSE)],
        "attention.key_length": [(UINT32, 10 ** 9, REFUSE), (UINT32, 0, REFUSE), (UINT32, 4, REFUSE)],
        "context_length": [(UINT32, 0, REFUSE), (STRING, "64", REFUSE), (FLOAT32, 64.0, REFUSE), (INT32, -1, REFUSE),
                           (BOOL, True, REFUSE), (UINT32, 2, ANY), (UINT64, 2 ** 63, ANY)],
        "rope.freq_base": [(STRING, "10000", REFUSE), (FLOAT32, float("nan"), REFUSE), (FLOAT32, float("inf"), REFUSE),
                           (FLOAT32, 0.0, REFUSE), (FLOAT32, -1.0, REFUSE), (FLOAT32, 500000.0, ANY),
                           (UINT32, 10000, REFUSE_OR_SAME)],
        "attention.layer_norm_rms_epsilon": [(FLOAT32, float("nan"), REFUSE), (FLOAT32, -1.0, REFUSE),
                                             (FLOAT32, float("inf"), REFUSE), (STRING, "1e-5", REFUSE),
                                             (FLOAT32, 0.0, ANY), (FLOAT64, 1e-5, ANY)],
        "vocab_size": [(UINT64, 10 ** 12, REFUSE), (UINT32, 0, REFUSE), (UINT32, VOCAB - 1, REFUSE),
                       (UINT32, VOCAB + 1, REFUSE)],
        "rope.dimension_count": [(UINT32, 4, REFUSE), (STRING, "8", REFUSE)],
        "rope.scaling.type": [(STRING, "yarn", REFUSE), (UINT32, 1, REFUSE), (STRING, "none", SAME)],
        "attention.sliding_window": [(UINT32, 0, REFUSE), (STRING, "4", REFUSE), (UINT32, 4, ANY)],
    }.items():
        for vtype, value, expect in cases:
            add(f"{key}={vtype}:{value!r}", _with_kv(spec, arch + key, vtype, value), expect)
    for key in ("block_count", "embedding_length", "feed_forward_length", "attention.head_count"):
        add(f"missing {key}", _without_kv(spec, arch + key), REFUSE)
    linear = _with_kv(spec, arch + "rope.scaling.type", STRING, "linear")
    for vtype, value, expect in ((STRING, "2", REFUSE), (FLOAT32, float("nan"), REFUSE), (FLOAT32, 0.0, REFUSE),
                                 (FLOAT32, -2.0, REFUSE), (FLOAT32, 2.0, ANY)):
        add(f"rope.scaling.factor={vtype}:{value!r}", _with_kv(linear, arch + "rope.scaling.factor", vtype, value), expect)
    for vtype, value in ((STRING, "gpt2"), (STRING, ""), (INT32, 5), (STRING, "qwen2"), (STRING, "mistral")):
        add(f"general.architecture={value!r}", _with_kv(spec, "general.architecture", vtype, value), REFUSE)
    add("general.architecture=[llama]", _with_kv(spec, "general.architecture", ARRAY, ["llama"], STRING), REFUSE)
    for vtype, value in ((UINT32, 0), (UINT32, 3), (UINT32, 48), (UINT32, 64), (UINT32, 2 ** 31), (UINT64, 32),
                         (STRING, "32")):
        add(f"general.alignment={vtype}:{value}", _with_kv(spec, "general.alignment", vtype, value), REFUSE)
    a16 = _with_kv(spec, "general.alignment", UINT32, 16)
    add("general.alignment=16", a16, REFUSE_OR_SAME)

    # tokenizer metadata
    tok = "tokenizer.ggml."
    for label, s, expect in (
        ("model=bert", _with_kv(spec, tok + "model", STRING, "bert"), REFUSE),
        ("model=5", _with_kv(spec, tok + "model", INT32, 5), REFUSE),
        ("no tokens", _without_kv(spec, tok + "tokens"), REFUSE),
        ("no merges", _without_kv(spec, tok + "merges"), REFUSE),
        ("tokens as ints", _with_kv(spec, tok + "tokens", ARRAY, list(range(VOCAB)), INT32), REFUSE),
        ("tokens as nested arrays", _with_kv(spec, tok + "tokens", ARRAY, [(STRING, [t]) for t in TOKENS], ARRAY),
         REFUSE),
        ("tokens as one string", _with_kv(spec, tok + "tokens", STRING, "abc"), REFUSE),
        ("tokens empty", _with_kv(spec, tok + "tokens", ARRAY, [], STRING), REFUSE),
        ("tokens without the last", _with_kv(spec, tok + "tokens", ARRAY, TOKENS[:-1], STRING), REFUSE),
        ("tokens with a duplicate", _with_kv(spec, tok + "tokens", ARRAY, TOKENS[:-1] + ["a"], STRING), ANY),
        ("merges as ints", _with_kv(spec, tok + "merges", ARRAY, [1, 2], INT32), REFUSE),
        ("merge without a space", _with_kv(spec, tok + "merges", ARRAY, MERGES + ["abcd"], STRING), REFUSE),
        ("merge of three", _with_kv(spec, tok + "merges", ARRAY, MERGES + ["a b c"], STRING), REFUSE),
        ("merge of unknown tokens", _with_kv(spec, tok + "merges", ARRAY, MERGES + ["x y"], STRING), REFUSE),
        ("token_type as strings", _with_kv(spec, tok + "token_type", ARRAY, ["3"] * VOCAB, STRING), REFUSE),
        ("token_type too short", _with_kv(spec, tok + "token_type", ARRAY, TOKEN_TYPES[:3], INT32), REFUSE),
        ("token_type as float", _with_kv(spec, tok + "token_type", ARRAY, [1.0] * VOCAB, FLOAT32), REFUSE),
        ("bos_token_id='1'", _with_kv(spec, tok + "bos_token_id", STRING, "1"), REFUSE),
        ("bos_token_id=1.0", _with_kv(spec, tok + "bos_token_id", FLOAT32, 1.0), REFUSE),
        ("bos_token_id=-1", _with_kv(spec, tok + "bos_token_id", INT32, -1), REFUSE),
        ("bos_token_id=10^6", _with_kv(spec, tok + "bos_token_id", UINT32, 10 ** 6), ANY),
        ("eos_token_id=2.0", _with_kv(spec, tok + "eos_token_id", FLOAT32, 2.0), REFUSE),
        ("eos_token_id=[2]", _with_kv(spec, tok + "eos_token_id", ARRAY, [2], UINT32), REFUSE),
        ("padding_token_id='x'", _with_kv(spec, tok + "padding_token_id", STRING, "x"), REFUSE),
        ("add_bos_token='false'", _with_kv(spec, tok + "add_bos_token", STRING, "false"), REFUSE),
        ("add_bos_token=0 (u8)", _with_kv(spec, tok + "add_bos_token", UINT8, 0), REFUSE),
        ("chat_template=5", _with_kv(spec, "tokenizer.chat_template", INT32, 5), REFUSE),
        ("chat_template=[..]", _with_kv(spec, "tokenizer.chat_template", ARRAY, ["a"], STRING), REFUSE),
        ("chat_template syntax error", _with_kv(spec, "tokenizer.chat_template", STRING, "{% for %}"), ANY),
        ("chat_template loops 10^12", _with_kv(spec, "tokenizer.chat_template", STRING,
                                                "{% for i in range(1000000) %}{% for j in range(1000000) %}x"
                                                "{% endfor %}{% endfor %}"), ANY),
        ("chat_template 10^9 output", _with_kv(spec, "tokenizer.chat_template", STRING,
                                                "{{ 'x' * 1000000000 }}"), ANY),
    ):
        add(label, s, expect)

    # the tensor table
    names = [t.name for t in spec.tensors]
    for name in (names[0], names[5], names[-1]):
        t = spec.tensor(name)
        for off in (2 ** 64 - 32, 2 ** 63, t.offset + 1, t.offset + 4, t.offset + 32, t.offset - 32):
            if off >= 0:
                add(f"offset:{name}={off}", _edit_tensor(spec, name, offset=off), REFUSE)
        for dims in ([1, 1, 1, 1, 1], [2 ** 32 - 1], [], [t.dims[0] * 2] + t.dims[1:], [0] + t.dims[1:],
                     [2 ** 63] + t.dims[1:], [2 ** 32, 2 ** 32], list(reversed(t.dims)),
                     [math.prod(t.dims)], t.dims + [1]):
            expect = REFUSE_OR_SAME if dims == t.dims + [1] else REFUSE
            if dims == list(reversed(t.dims)) and dims == t.dims:
                continue
            add(f"dims:{name}={dims}", _edit_tensor(spec, name, dims=dims), expect)
        for n_dims in (5, 2 ** 32 - 1, 0):
            raw = _s(name) + struct.pack("<I", n_dims) + b"".join(struct.pack("<Q", d) for d in t.dims) + \
                struct.pack("<IQ", t.gtype, t.offset)
            add(f"n_dims:{name}={n_dims}", _edit_tensor(spec, name, raw=raw), REFUSE)
        add(f"name length 2^64-1:{name}", _edit_tensor(spec, name, raw=struct.pack("<Q", 2 ** 64 - 1) + b"x" * 8),
            REFUSE)
    k, v = spec.tensor("blk.0.attn_k.weight"), spec.tensor("blk.0.attn_v.weight")
    add("overlapping: v at k's offset", _edit_tensor(spec, v.name, offset=k.offset), REFUSE)
    sw = copy.deepcopy(spec)
    sw.tensor(k.name).offset, sw.tensor(v.name).offset = v.offset, k.offset
    add("swapped offsets of k and v", sw, REFUSE)
    sw = copy.deepcopy(spec)
    i, j = names.index(k.name), names.index(v.name)
    sw.tensors[i], sw.tensors[j] = sw.tensors[j], sw.tensors[i]
    add("swapped table entries of k and v", sw, REFUSE)
    dup = copy.deepcopy(spec)
    dup.tensor(v.name).name = k.name
    add("duplicate tensor name", dup, REFUSE)
    for new in ("blk.0.foo.weight", "blk.1.attn_v.weight", "blk.0.attn_v.bias", "output.weight", "x"):
        s = copy.deepcopy(spec)
        s.tensor(v.name).name = new
        add(f"rename {v.name}->{new}", s, REFUSE)
    drop = copy.deepcopy(spec)
    drop.tensors = [t for t in drop.tensors if t.name != "blk.0.ffn_gate.weight"]
    add("a tensor left out of the table", drop, REFUSE)
    add("a tensor left out, relaid", relaid(drop), REFUSE)
    half = HIDDEN // HEADS // 2            # rope_freqs.weight: one divisor per rotary frequency
    for label, entry, values, expect in (
            ("F32 ones", TensorEntry("rope_freqs.weight", [half], 0, 0), np.ones(half, np.float32), ANY),
            ("F32 of 2s", TensorEntry("rope_freqs.weight", [half], 0, 0), np.full(half, 2, np.float32), ANY),
            ("F16 ones", TensorEntry("rope_freqs.weight", [half], 1, 0), np.ones(half, np.float16), ANY),
            ("Q8_0", TensorEntry("rope_freqs.weight", [32], 8, 0), None, REFUSE),
            ("I32", TensorEntry("rope_freqs.weight", [half], 26, 0), np.ones(half, np.int32), REFUSE),
            ("of 3", TensorEntry("rope_freqs.weight", [3], 0, 0), np.ones(3, np.float32), REFUSE),
            ("2-d", TensorEntry("rope_freqs.weight", [half, 2], 0, 0), np.ones(2 * half, np.float32), REFUSE),
            ("with NaN", TensorEntry("rope_freqs.weight", [half], 0, 0), np.array([1, np.nan, 1, 1], np.float32),
             REFUSE),
            ("of zeros", TensorEntry("rope_freqs.weight", [half], 0, 0), np.zeros(half, np.float32), REFUSE),
            ("negative", TensorEntry("rope_freqs.weight", [half], 0, 0), -np.ones(half, np.float32), REFUSE)):
        rf = copy.deepcopy(spec)
        rf.tensors.append(entry)
        rf = relaid(rf)
        if values is not None:
            start = rf.tensors[-1].offset
            rf.data = rf.data[:start] + values.tobytes() + rf.data[start + values.nbytes:]
        add(f"rope_freqs.weight {label}", rf, expect)
    for label, extra in (("16 trailing bytes", bytes(16)), ("4096 trailing bytes", bytes(4096)), ("1 trailing byte", b"x")):
        s = copy.deepcopy(spec)
        s.tail = extra
        add(label, s, REFUSE)
    return out + type_relabels(spec)


# ------------------------------------------------------------------------------------------ parent
def run_file_cases(folder, kind: str, items: list, base: dict, case_seconds: int = 20,
                   memory_cap: int = MEMORY_CAP) -> Tuple[dict, list, Tuple[int, str]]:
    """Writes each (label, bytes, expect[, want]) of ``items`` as a file in ``folder`` and loads them
    one by one in child interpreters (:func:`main`), ``base`` naming the undamaged files ({kind: path})
    the outcomes are compared with. Returns (counts by status, [(label, expect, result)] for each
    case whose outcome its expectation does not allow, (the largest peak RSS growth of a case in KiB,
    that case's label))."""
    import collections
    from fuzz.run import run_isolated
    cases = []
    suffix = {"gguf": ".gguf", "pt": ".pt"}.get(kind, "")
    for k, item in enumerate(items):
        label, data, expect = item[:3]
        path = os.path.join(str(folder), f"case{k}{suffix}")
        with open(path, "wb") as f:
            f.write(data)
        cases.append({"kind": kind, "path": path, "label": label, "expect": expect,
                      "want": item[3] if len(item) > 3 else None})
    listing = os.path.join(str(folder), f"{kind}_cases.json")
    with open(listing, "w") as f:
        json.dump({"base": base, "cases": cases, "memory_cap": memory_cap}, f)
    results = run_isolated(lambda start: [sys.executable, os.path.abspath(__file__), listing, str(start)],
                           len(cases), case_seconds)
    counts = collections.Counter(r["status"] for r in results.values())
    bad = [(cases[i]["label"], cases[i]["expect"], results[i]) for i in sorted(results)
           if not verdict(cases[i], results[i])]
    worst = max(results, key=lambda i: results[i].get("peak_kib", 0), default=None)
    peak = (results[worst].get("peak_kib", 0), cases[worst]["label"]) if worst is not None else (0, "")
    return counts, bad, peak


def report(counts, bad, peak, limit: int = 30) -> str:
    lines = [f"{sum(counts.values())} cases: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) +
             f"; peak RSS growth of one case {peak[0]} KiB ({peak[1]}); {len(bad)} outcomes not allowed"]
    lines += [f"  {label} (expect {expect}): {r['status']} {r.get('detail', '')}" for label, expect, r in bad[:limit]]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------- child
def _kib(key: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def _reset_peak() -> None:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")        # resets VmHWM to the current RSS
    except OSError:
        pass


def _cap_memory(extra: int) -> None:
    """Limits the address space to what the child maps now plus ``extra`` bytes; glibc's per-thread
    malloc arenas (64 MiB of address space each) are limited to 2 first, so threads don't eat the cap."""
    import ctypes
    import resource
    try:
        ctypes.CDLL(None).mallopt(-8, 2)    # M_ARENA_MAX
    except (OSError, AttributeError):
        pass
    limit = _kib("VmSize") * 1024 + extra
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _names_file(e: BaseException, path: str) -> bool:
    return os.path.basename(path) in str(e)


def _gguf_outcome(path: str):
    """(model logits, encoded ids, rendered chat) of the file, or the exception of the stage that failed."""
    import tinytorch as tt
    from tinytorch.models import LlamaForCausalLM
    from tinytorch.models.tokenizer import Tokenizer
    model = LlamaForCausalLM.from_gguf(path)
    tok = Tokenizer.from_gguf(path)
    return model, tok


def _gguf_use(model, tok):
    import tinytorch as tt
    with tt.no_grad():
        logits = model(tt.tensor([IDS]))[0].numpy()
    ids = tok.encode(TEXT)
    chat = tok.apply_chat_template(MESSAGES) if tok.chat_template is not None else None
    specials = (tok.bos_token_id, tok.eos_token_id, tok.pad_token_id, tok.add_bos_token)
    return np.asarray(logits, np.float64), ids, chat, specials


def _same_gguf(a, b) -> bool:
    return (a[0].shape == b[0].shape and np.array_equal(a[0], b[0], equal_nan=True) and a[1:] == b[1:])


def _pt_digest(obj) -> list:
    """Every tensor of a loaded structure as [path, dtype, shape, stride, offset, sha256 of its whole
    storage, its last element, requires_grad, class], every other leaf as [path, repr]."""
    import ctypes
    import hashlib
    from tinytorch._tensor.tensor import Tensor
    out: list = []

    def walk(x, path):
        if isinstance(x, Tensor):
            impl = x._impl
            raw = ctypes.string_at(impl.storage_ptr, impl.storage_nbytes) if impl.storage_nbytes else b""
            last = None
            if x.numel():
                v = x.detach()[tuple(s - 1 for s in x.shape)].item()
                last = repr(v)
            out.append([path, x.dtype.name, list(x.shape), list(x.stride()), x.storage_offset(),
                        hashlib.sha256(raw).hexdigest(), last, bool(x.requires_grad), type(x).__name__])
        elif isinstance(x, dict):
            if type(x) is not dict:
                out.append([path + "/<type>", type(x).__name__, repr(getattr(x, "_metadata", None))])
            for k, v in x.items():
                walk(v, f"{path}/{k!r}")
        elif isinstance(x, (list, tuple)):
            out.append([path + "/<type>", type(x).__name__, len(x)])
            for k, v in enumerate(x):
                walk(v, f"{path}/{k}")
        else:
            out.append([path, repr(x)])

    walk(obj, "")
    return out


_CLEAN = (ValueError, RuntimeError)


def judge(case: dict, refs: dict) -> dict:
    """Loads one case and classifies what happened (module docstring)."""
    import pickle
    path, kind = case["path"], case["kind"]
    if kind == "_alloc":        # the harness's own test: past the cap is "memory", not a crash
        try:
            bytearray(2 * MEMORY_CAP)
        except MemoryError:
            return {"status": "memory", "detail": "MemoryError"}
        return {"status": "same"}
    load_errors = _CLEAN + ((pickle.UnpicklingError,) if kind == "pt" else ())
    try:
        if kind == "gguf":
            loaded = _gguf_outcome(path)
        else:
            import tinytorch as tt
            loaded = tt.load(path)
    except MemoryError as e:
        return {"status": "memory", "detail": f"MemoryError: {e}"[:300]}
    except load_errors as e:
        if not _names_file(e, path):
            return {"status": "unnamed", "detail": f"{type(e).__name__}: {e}"[:300]}
        return {"status": "refused", "detail": f"{type(e).__name__}: {e}"[:160]}
    except Exception as e:  # noqa: BLE001 - any other type is the finding
        return {"status": "bad_error", "detail": f"{type(e).__name__}: {e}"[:300]}
    try:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if kind == "gguf":
                got = _gguf_use(*loaded)
                same = _same_gguf(got, refs["gguf"])
            else:
                got = _pt_digest(loaded)
                same = got == (case["want"] if case.get("want") is not None else refs.get("pt"))
    except MemoryError as e:
        return {"status": "memory", "detail": f"MemoryError: {e}"[:300]}
    except Exception as e:  # noqa: BLE001
        import jinja2
        if isinstance(e, _CLEAN + (jinja2.TemplateError, IndexError)):
            return {"status": "late_refusal", "detail": f"{type(e).__name__}: {e}"[:200]}
        return {"status": "bad_error", "detail": f"after loading: {type(e).__name__}: {e}"[:300]}
    if same:
        return {"status": "same"}
    return {"status": "different", "detail": "" if kind == "gguf" else json.dumps(got)[:300]}


def main() -> None:
    import faulthandler
    import gc
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    listing = json.load(open(sys.argv[1]))
    cases, start = listing["cases"], int(sys.argv[2])
    seconds = int(os.environ.get("TINYTORCH_FUZZ_CASE_SECONDS", 20))
    import tinytorch as tt
    refs = {}
    if "gguf" in listing["base"]:
        refs["gguf"] = _gguf_use(*_gguf_outcome(listing["base"]["gguf"]))
    if "pt" in listing["base"]:
        refs["pt"] = _pt_digest(tt.load(listing["base"]["pt"]))
    gc.collect()
    _cap_memory(int(listing.get("memory_cap", MEMORY_CAP)))
    for i in range(start, len(cases)):
        faulthandler.dump_traceback_later(seconds, exit=True)   # a hang ends the child, reported
        _reset_peak()
        before = _kib("VmRSS")
        r = judge(cases[i], refs)
        r["peak_kib"] = max(0, _kib("VmHWM") - before)
        faulthandler.cancel_dump_traceback_later()
        if i % 64 == 63:
            gc.collect()      # cycles of loaded models (each holds a memory map)
        r["i"] = i
        print(json.dumps(r), flush=True)


if __name__ == "__main__":
    main()
