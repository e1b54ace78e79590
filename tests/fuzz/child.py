"""Runs fuzz cases in a child interpreter, one JSON result line per case, in order; the parent
(fuzz/run.py) sees a crash or a hang as the first case without a line.
Usage: python child.py CASES.json numpy|torch START"""
from __future__ import annotations

import faulthandler
import json
import math
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import numpy as np  # noqa: E402

import tinytorch as tt  # noqa: E402
from support.numeric import TOL  # noqa: E402
from fuzz.catalogue import BY_NAME  # noqa: E402
from fuzz.inputs import FLOATS, _cast_numpy, build, logical_numpy  # noqa: E402
from support.op_table import ROWS  # noqa: E402

# What a clean refusal may raise; anything else (AttributeError, KeyError, SystemError, ...) is a
# defect even when the input was bad.
CLEAN_ERRORS = (RuntimeError, ValueError, TypeError, IndexError, NotImplementedError, OverflowError,
                ZeroDivisionError)
CASE_SECONDS = int(os.environ.get("TINYTORCH_FUZZ_CASE_SECONDS", 20))


def _materialize(value, mod):
    if isinstance(value, dict) and "tensor" in value:
        return build(value["tensor"], mod)
    if isinstance(value, list):
        return [_materialize(v, mod) for v in value]
    return value


def _function(entry, mod, tensors):
    if entry.call == "table":
        if mod is tt:
            return ROWS[entry.name].call
        fn = getattr(mod, entry.attr, None) or getattr(mod.nn.functional, entry.attr, None)
        if fn is None:
            raise LookupError(entry.attr)
        return fn
    if entry.call == "F":
        return getattr(mod.nn.functional, entry.attr)
    if entry.call == "method":
        return getattr(type(tensors[0]), entry.attr)
    return getattr(mod, entry.attr)


def call(c: dict, mod):
    entry = BY_NAME[c["op"]]
    tensors = [build(s, mod) for s in c["inputs"]]
    args = [_materialize(a, mod) for a in c["args"]]
    kwargs = {k: _materialize(v, mod) for k, v in c["kwargs"].items()}
    fn = _function(entry, mod, tensors)
    if entry.shape_only:
        return fn(*args, **kwargs)
    if entry.tensor_list:
        return fn(tensors, *args, **kwargs)
    return fn(*tensors, *args, **kwargs)


def _outputs(result) -> list:
    """[(dtype name, shape, float64/int/bool array)] of a result."""
    if isinstance(result, (tuple, list)):
        return [o for r in result for o in _outputs(r)]
    if isinstance(result, (bool, int, float)):
        return [(type(result).__name__, (), np.asarray(result))]
    dtype = str(result.dtype).replace("tinytorch.", "").replace("torch.", "")
    t = result.detach().cpu()
    arr = t.double().numpy() if result.dtype.is_floating_point else t.numpy()
    return [(dtype, tuple(result.shape), np.array(arr))]


def _close(a: np.ndarray, b: np.ndarray, dtype: str, scale: float = 1.0) -> bool:
    if a.shape != b.shape:
        return False
    if dtype not in TOL:
        return bool(np.array_equal(a, b))
    rtol, atol = TOL[dtype]
    finite = np.abs(b[np.isfinite(b)]) if b.size else np.zeros(0)
    atol = atol * max(1.0, float(finite.max()) if finite.size else 1.0)
    return bool(np.allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol * scale, atol=atol * scale,
                            equal_nan=True))


def _has_ties(c: dict) -> bool:
    for s in c["inputs"]:
        v = logical_numpy(s)
        if v.size != np.unique(v).size:
            return True
    return False


def _run_reference(c: dict, tier: str):
    entry = BY_NAME[c["op"]]
    if tier == "torch":
        import torch
        return _outputs(call(c, torch))
    if entry.ref is None or any(s["dtype"] not in FLOATS for s in c["inputs"]):
        raise LookupError("no numpy reference")
    if len({s["dtype"] for s in c["inputs"]}) > 1:     # promotion (0-d operands rounded first): torch tier
        raise LookupError("mixed dtypes: no numpy reference")
    arrays = [np.asarray(logical_numpy(s), dtype=np.float64) for s in c["inputs"]]
    # the values as the tensors hold them: "large" overflows to inf in float16
    if entry.ref_finite and not all(np.isfinite(a).all() for a in arrays):
        raise LookupError("non-finite inputs: numpy's formula differs; the torch tier checks these")
    if entry.ref_squares and any(np.abs(a).max(initial=0.0) > np.sqrt(np.finfo(np.float32).max) for a in arrays):
        raise LookupError("squares past float32's range: the float32 sums overflow; the torch tier checks these")
    tuples = lambda v: tuple(v) if isinstance(v, list) else v       # noqa: E731 - JSON made them lists
    with np.errstate(all="ignore"):
        out = entry.ref(*arrays, *map(tuples, c["args"]), **{k: tuples(v) for k, v in c["kwargs"].items()})
    return _outputs_numpy(out)


def _outputs_numpy(out) -> list:
    if isinstance(out, (tuple, list)):
        return [o for r in out for o in _outputs_numpy(r)]
    out = np.asarray(out)
    return [(None, out.shape, out)]


def _probe(op: str) -> None:
    """The harness's own test cases (tests/fuzz/test_fuzz_ops.py): a crash and a hang."""
    if op == "_segfault":
        import ctypes
        ctypes.string_at(0)
    while op == "_hang":
        pass


def judge(c: dict, tier: str) -> dict:
    if c["op"].startswith("_"):
        _probe(c["op"])
    entry = BY_NAME[c["op"]]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mine = _outputs(call(c, tt))
        mine_error = None
    except CLEAN_ERRORS as e:
        mine, mine_error = None, e
    except Exception as e:   # noqa: BLE001 - any other type is itself the finding
        return {"status": "bad_error", "detail": f"{type(e).__name__}: {e}"[:300]}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = _run_reference(c, tier)
        ref_error = None
    except LookupError:
        return {"status": "no_reference" if mine_error is None else "refused",
                "detail": "" if mine_error is None else f"{type(mine_error).__name__}: {mine_error}"[:200]}
    except Exception as e:   # noqa: BLE001 - the reference refusing is information, not a failure
        ref, ref_error = None, e
    if mine_error is not None and ref_error is not None:
        return {"status": "agree_error"}
    if mine_error is not None:
        return {"status": "rejects", "detail": f"{type(mine_error).__name__}: {mine_error}"[:200]}
    if ref_error is not None:
        return {"status": "lenient", "detail": f"{type(ref_error).__name__}: {ref_error}"[:200]}
    if len(mine) != len(ref):
        return {"status": "mismatch", "detail": f"{len(mine)} outputs, reference {len(ref)}"}
    low = [s["dtype"] for s in c["inputs"] if s["dtype"] in ("float16", "bfloat16")]
    for k, ((dt, shape, a), (rdt, rshape, b)) in enumerate(zip(mine, ref)):
        if tuple(shape) != tuple(rshape):
            return {"status": "mismatch", "detail": f"output {k}: shape {shape}, reference {rshape}"}
        if tier == "torch" and dt != rdt:
            return {"status": "dtype", "detail": f"output {k}: {dt}, reference {rdt}"}
        if entry.ties and (a.dtype.kind in "iu" or k > 0) and _has_ties(c):
            continue                                # index results of tied values are both right
        tol_dtype = dt if dt in TOL else (low[0] if low else dt)
        if tier == "numpy":
            tol_dtype = next((s["dtype"] for s in c["inputs"] if s["dtype"] in ("bfloat16", "float16")),
                             next((s["dtype"] for s in c["inputs"] if s["dtype"] == "float32"), "float64"))
        if tier == "numpy" and dt in FLOATS:       # the exact answer rounded to the result's dtype:
            b = _cast_numpy(np.asarray(b, dtype=np.float64), dt)   # 1e30 * 1e30 is inf in float32
        if not _close(a, b, tol_dtype, scale=2.0 if tier == "torch" else 1.0):
            diff = np.nanmax(np.abs(a.astype(float) - b.astype(float))) if a.size and a.shape == b.shape else math.nan
            return {"status": "mismatch", "detail": f"output {k} ({dt}): max |diff| {diff:.3g}"}
    return {"status": "agree"}


def main() -> None:
    cases = json.load(open(sys.argv[1]))
    tier, start = sys.argv[2], int(sys.argv[3])
    for i in range(start, len(cases)):
        faulthandler.dump_traceback_later(CASE_SECONDS, exit=True)   # a hang ends the child, reported
        result = judge(cases[i], tier)
        faulthandler.cancel_dump_traceback_later()
        result["i"] = i
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
