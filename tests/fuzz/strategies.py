"""Hypothesis strategies for fuzz cases, and a seeded corpus drawn from them. A case is plain JSON:
{"op", "inputs": [tensor spec...], "args", "kwargs"}; tensor-valued args are {"tensor": spec}."""
from __future__ import annotations

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from fuzz.catalogue import BY_NAME, ENTRIES, _matmul_shapes
from fuzz.inputs import DTYPES, FLOATS, LAYOUTS, SPECIALS


@st.composite
def shapes(draw, max_dims=4):
    nd = draw(st.integers(0, max_dims))
    return [draw(st.sampled_from([0, 1, 2, 3, 5])) if draw(st.integers(0, 9)) == 0 else draw(st.integers(1, 5))
            for _ in range(nd)]


@st.composite
def broadcast_partner(draw, shape):
    """A shape that broadcasts with `shape` (mostly), or one that doesn't (sometimes)."""
    if draw(st.integers(0, 9)) == 0:
        return draw(shapes())                          # anything: often incompatible
    keep = draw(st.integers(0, len(shape)))
    tail = shape[len(shape) - keep:]
    return [1 if draw(st.integers(0, 3)) == 0 else s for s in tail]


@st.composite
def tensor_spec(draw, shape, entry, dtype=None):
    dtype = dtype or draw(st.sampled_from(FLOATS * 3 + DTYPES))   # floats most of the time
    spec = {"shape": shape, "dtype": dtype, "layout": draw(st.sampled_from(LAYOUTS)),
            "seed": draw(st.integers(0, 2 ** 31 - 1))}
    lo, hi = entry.domain
    spec["lo"], spec["hi"] = float(lo), float(hi)
    if dtype in FLOATS and draw(st.integers(0, 4)) == 0:
        spec["special"] = draw(st.sampled_from(SPECIALS))
    return spec


@st.composite
def case(draw, entries=None):
    entry = BY_NAME[draw(st.sampled_from([e.name for e in (entries or ENTRIES)]))]
    if entry.name == "matmul":
        in_shapes = list(_matmul_shapes(draw, st))
    elif entry.n_in == 0:
        in_shapes = []
    else:
        first = draw(shapes())
        in_shapes = [first] + [draw(broadcast_partner(first)) for _ in range(entry.n_in - 1)]
        if entry.tensor_list and draw(st.integers(0, 3)):
            in_shapes[1] = list(first)                    # cat/stack: same shapes most of the time
    dtype = draw(st.sampled_from(FLOATS * 3 + DTYPES))
    same_dtype = draw(st.integers(0, 3)) > 0           # mixed dtypes sometimes (type promotion)
    inputs = [draw(tensor_spec(s, entry, dtype if same_dtype else None)) for s in in_shapes]
    if entry.name == "where" and inputs:
        inputs[0]["dtype"] = "bool"
    args, kwargs = entry.args(draw, in_shapes, st) if entry.args else ([], {})
    return {"op": entry.name, "inputs": inputs, "args": args, "kwargs": kwargs}


def corpus(n: int, seed_value: int, entries=None) -> list:
    """`n` cases drawn by hypothesis from a fixed seed: the same corpus on every run."""
    out: list = []

    @seed(seed_value)
    @settings(max_examples=n, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(case(entries))
    def collect(c):
        out.append(c)

    collect()
    return out
