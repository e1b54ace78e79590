"""Checkpoint fuzzing: hypothesis mutations of a saved file (bit flips, truncations, inserted and
deleted bytes, crafted headers), each loaded by a child interpreter, which must either load it or
raise RuntimeError; never crash, hang or raise anything else.
Child usage: python checkpoints.py LIST.json START"""
from __future__ import annotations

import json
import os
import struct
import sys

from hypothesis import strategies as st

HEADER_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-2 ** 65, 2 ** 65) | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12)


@st.composite
def mutation(draw, size: int, header_len: int):
    """One way to damage a file of `size` bytes whose JSON header is `header_len` bytes long."""
    kind = draw(st.sampled_from(["flip", "flip_header", "truncate", "insert", "delete", "entry", "length"]))
    if kind in ("flip", "flip_header"):
        hi = 8 + header_len if kind == "flip_header" else size
        return {"kind": "flip", "at": draw(st.integers(0, hi - 1)), "bit": draw(st.integers(0, 7))}
    if kind == "truncate":
        return {"kind": kind, "at": draw(st.integers(0, size - 1))}
    if kind == "insert":
        return {"kind": kind, "at": draw(st.integers(0, size)), "bytes": list(draw(st.binary(min_size=1, max_size=9)))}
    if kind == "delete":
        at = draw(st.integers(0, size - 1))
        return {"kind": kind, "at": at, "n": draw(st.integers(1, 9))}
    if kind == "length":                       # the 8-byte header length itself
        return {"kind": kind, "value": draw(st.sampled_from([0, 1, header_len - 1, header_len + 1, size, 2 ** 63 - 1,
                                                             2 ** 64 - 1, 100 * 2 ** 20 + 1]))}
    field = draw(st.sampled_from(["dtype", "shape", "data_offsets", "__metadata__", "new_key", "whole"]))
    return {"kind": "entry", "field": field, "value": draw(HEADER_VALUES)}


def apply(data: bytes, m: dict) -> bytes:
    if m["kind"] == "flip":
        b = bytearray(data)
        b[m["at"]] ^= 1 << m["bit"]
        return bytes(b)
    if m["kind"] == "truncate":
        return data[:m["at"]]
    if m["kind"] == "insert":
        return data[:m["at"]] + bytes(m["bytes"]) + data[m["at"]:]
    if m["kind"] == "delete":
        return data[:m["at"]] + data[m["at"] + m["n"]:]
    if m["kind"] == "length":
        return struct.pack("<Q", m["value"]) + data[8:]
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    name = next(k for k in header if k != "__metadata__")
    if m["field"] == "whole":
        header = m["value"]
    elif m["field"] == "new_key":
        header["x"] = m["value"]
    elif m["field"] == "__metadata__":
        header["__metadata__"] = m["value"]
    else:
        header[name][m["field"]] = m["value"]
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data[8 + n:]


def main() -> None:
    import tinytorch as tt
    paths = json.load(open(sys.argv[1]))
    import faulthandler
    seconds = int(os.environ.get("TINYTORCH_FUZZ_CASE_SECONDS", 20))
    for i in range(int(sys.argv[2]), len(paths)):
        faulthandler.dump_traceback_later(seconds, exit=True)
        try:
            tt.load(paths[i])
            r = {"status": "loaded"}
        except RuntimeError as e:
            r = {"status": "refused", "detail": str(e)[:200]}
        except Exception as e:  # noqa: BLE001 - any other type is the finding
            r = {"status": "bad_error", "detail": f"{type(e).__name__}: {e}"[:300]}
        faulthandler.cancel_dump_traceback_later()
        r["i"] = i
        print(json.dumps(r), flush=True)


if __name__ == "__main__":
    main()
