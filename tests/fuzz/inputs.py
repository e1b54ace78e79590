"""Fuzz inputs as plain data: a tensor spec is a JSON-able dict (shape, dtype, layout, seed, special
values), so a case can be sent to a child process and rebuilt there, bit for bit, as a tinytorch
tensor and as its reference (a numpy array, or a torch tensor in the long tier)."""
from __future__ import annotations

import numpy as np

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "uint8", "bool"]
FLOATS = ["float32", "float64", "float16", "bfloat16"]
LAYOUTS = ["contiguous", "transposed", "sliced", "expanded", "offset"]
SPECIALS = ["none", "nan", "inf", "-inf", "zeros", "large", "tiny"]


def base_values(spec: dict) -> np.ndarray:
    """The logical values of a spec, float64 (or int64/bool for integer specs), laid out contiguously."""
    if "values" in spec:                       # explicit values (index tensors, scalars)
        return np.asarray(spec["values"], dtype=np.float64).reshape(spec["shape"])
    rng = np.random.default_rng(spec["seed"])
    shape = tuple(spec["shape"])
    dtype = spec["dtype"]
    lo, hi = spec.get("lo", -3.0), spec.get("hi", 3.0)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in ("int64", "int32"):
        return rng.integers(int(lo) - 3, int(hi) + 4, size=shape).astype(np.float64)
    if dtype == "uint8":
        return rng.integers(0, 256, size=shape).astype(np.float64)
    x = rng.uniform(lo, hi, shape)
    special = spec.get("special", "none")
    if special != "none" and x.size:
        mask = rng.random(shape) < 0.25
        value = {"nan": np.nan, "inf": np.inf, "-inf": -np.inf, "zeros": 0.0, "large": 1e30, "tiny": 1e-30}[special]
        x = np.where(mask, value, x)
    return x


def physical(spec: dict, values: np.ndarray):
    """(storage array, how to view it): the layout decides which storage holds the logical values."""
    layout = spec.get("layout", "contiguous")
    nd = values.ndim
    if layout == "transposed" and nd >= 2:
        return np.ascontiguousarray(np.swapaxes(values, -1, -2)), ("transpose",)
    if layout == "sliced" and nd >= 1:
        store = np.repeat(values, 2, axis=-1) if values.shape[-1] else values
        return store, ("slice2",) if values.shape[-1] else ("none",)
    if layout == "expanded" and nd >= 1 and values.shape[0] > 1:
        return values[:1].copy(), ("expand", values.shape[0])
    if layout == "offset" and nd >= 1:          # a view that starts one row into its storage
        return np.concatenate([np.full((1,) + values.shape[1:], 7.0), values]), ("offset1",)
    return values, ("none",)


def logical_numpy(spec: dict) -> np.ndarray:
    """The values the tensor holds, as numpy (expanded layouts repeat row 0, as their view does)."""
    values = base_values(spec)
    store, how = physical(spec, values)
    if how[0] == "transpose":
        out = np.swapaxes(store, -1, -2)
    elif how[0] == "slice2":
        out = store[..., ::2]
    elif how[0] == "expand":
        out = np.broadcast_to(store, (how[1],) + store.shape[1:])
    elif how[0] == "offset1":
        out = store[1:]
    else:
        out = store
    return _cast_numpy(out, spec["dtype"])


def _cast_numpy(x: np.ndarray, dtype: str) -> np.ndarray:
    if dtype == "bool":
        return x.astype(bool)
    if dtype in ("int64", "int32", "uint8"):
        return x.astype(dtype)
    if dtype == "bfloat16":                     # round-to-nearest-even through the float32 bits
        f = x.astype(np.float32)
        bits = f.view(np.uint32).astype(np.uint64)
        bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
        out = bits.astype(np.uint32).view(np.float32).astype(np.float64)
        return np.where(np.isnan(f), np.nan, out)
    return x.astype(dtype).astype(np.float64) if dtype != "float64" else x


def build(spec: dict, mod):
    """The spec as a tensor of `mod` (tinytorch or torch), with the spec's memory layout."""
    values = base_values(spec)
    store, how = physical(spec, values)
    dtype = getattr(mod, spec["dtype"])
    if spec["dtype"] == "bool":
        t = mod.tensor(store.astype(bool).tolist() if store.ndim else bool(store), dtype=dtype)
    elif spec["dtype"] in ("int64", "int32", "uint8"):
        t = mod.tensor(np.asarray(store, dtype=np.int64), dtype=dtype)
    else:
        t = mod.tensor(np.asarray(store, dtype=np.float64)).to(dtype)
    if how[0] == "transpose":
        t = t.transpose(-1, -2)
    elif how[0] == "slice2":
        t = t[..., ::2]
    elif how[0] == "expand":
        t = t.expand(how[1], *t.shape[1:])
    elif how[0] == "offset1":
        t = t[1:]
    if spec.get("requires_grad") and spec["dtype"] in FLOATS:
        t = t.detach().requires_grad_(True)
    return t
