"""Writes the type stubs type checkers and IDEs read for what carries no annotations of its own:
``tinytorch/_tensor/tensor.pyi`` (``tinytorch.Tensor``: Cython's TensorBase plus the op schema's generated
methods), ``tinytorch/__init__.pyi`` (the top-level functions, most of them the schema's
exports of Cython functions) and ``tinytorch/nn/functional/__init__.pyi``.

Every public method, attribute and function of the built package is listed with its real
signature (names, defaults, keyword-only markers, from ``inspect.signature``); the types come from
tables: the implementation's own annotation where it has one, else the parameter's type by its
PyTorch name (``PARAM_TYPES``), the return type by name (``RETURNS``, default ``Tensor``).
Names the tables do not know get ``Any``; ``scripts/annotation_coverage.py`` counts those apart.

    python3 scripts/gen_stubs.py            # writes tinytorch/_tensor/tensor.pyi, __init__.pyi, nn/functional/__init__.pyi
    python3 scripts/gen_stubs.py --check    # fails when a stub is stale (tests/api/test_typing.py)

Needs the built package: this checkout's if its extensions are built (or linked), else the installed
one (as in CI, where tests run against the wheel)."""
from __future__ import annotations

import argparse
import inspect
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tinytorch", "_tensor", "tensor.pyi")
OUT_INIT = os.path.join(ROOT, "tinytorch", "__init__.pyi")
OUT_F = os.path.join(ROOT, "tinytorch", "nn", "functional", "__init__.pyi")

NUM = "_Number"
TEN_OR_NUM = "Union[Tensor, _Number]"
DIMS = "Union[int, Sequence[int], None]"
PARAM_TYPES = {
    # operands
    "other": TEN_OR_NUM, "exponent": TEN_OR_NUM, "tensor1": "Tensor", "tensor2": "Tensor", "mat1": "Tensor",
    "mat2": "Tensor", "mat": "Tensor", "vec": "Tensor", "vec1": "Tensor", "vec2": "Tensor", "batch1": "Tensor",
    "batch2": "Tensor", "src": "Tensor", "source": "Tensor", "index": "Tensor", "indices": "Tensor", "mask": "Tensor",
    "condition": "Tensor", "weight": "Optional[Tensor]", "weights": "Optional[Tensor]", "end": TEN_OR_NUM,
    "gradient": "Optional[Tensor]", "values": "Tensor", "destination": "Union[int, Sequence[int]]",
    "input2": "Tensor", "input3": "Tensor", "y": "Tensor", "q": "Union[float, Tensor]",
    # dimensions and sizes
    "dim": DIMS, "dim0": "int", "dim1": "int", "dim2": "int", "dims": "Union[int, Sequence[int]]",
    "dimension": "int", "start_dim": "int", "end_dim": "int", "keepdim": "bool", "size": "Any", "sizes": "Any",
    "shape": "Any", "stride": "Any", "storage_offset": "int", "sections": "Any", "split_size_or_sections": "Any",
    "indices_or_sections": "Any", "chunks": "int", "repeats": "Union[int, Tensor]", "shifts": "Union[int, Sequence[int]]",
    "output_size": "Optional[int]", "offset": "int", "diagonal": "int", "k": "int", "n": "int", "length": "int",
    "start": "Union[int, Tensor]", "step": "int", "minlength": "int", "num_samples": "int", "bins": "int",
    # scalars
    "alpha": NUM, "beta": NUM, "value": TEN_OR_NUM, "min": "Union[Tensor, _Number, None]",
    "max": "Union[Tensor, _Number, None]", "p": "Union[float, str, None]", "eps": "Optional[float]",
    "rtol": "float", "atol": "float", "nan": "Optional[float]", "posinf": "Optional[float]",
    "neginf": "Optional[float]", "fill_value": NUM, "mean": "float", "std": "float", "from_": "int",
    "to": "Optional[int]", "a": "float", "b": "float", "rcond": "float", "correction": "Optional[_Number]",
    "decimals": "int", "lambd": "float", "negative_slope": "float",
    # flags and modes
    "equal_nan": "bool", "descending": "bool", "stable": "bool", "sorted": "bool", "largest": "bool",
    "unbiased": "bool", "accumulate": "bool", "include_self": "bool", "some": "bool", "compute_uv": "bool",
    "upper": "bool", "replacement": "bool", "as_tuple": "bool", "return_inverse": "bool", "return_counts": "bool",
    "retain_graph": "Optional[bool]", "create_graph": "bool", "requires_grad": "bool", "non_blocking": "bool",
    "copy": "bool", "force": "bool", "inplace": "bool", "rounding_mode": "Optional[str]", "reduce": "str",
    "interpolation": "str", "approximate": "str", "prepend": "Optional[Tensor]", "append": "Optional[Tensor]",
    # types, devices, callables
    "dtype": "Optional[_dtype]", "device": "Union[_device, str, int, None]", "memory_format": "Any",
    "generator": "Any", "stream": "Any", "hook": "Callable[..., Any]", "inputs": "Any", "data": "Any",
    "cls": "type", "layout": "Any", "pin_memory": "bool",
}
RETURNS = {
    **{n: "bool" for n in ("is_floating_point", "is_contiguous", "is_complex", "equal", "allclose",
                           "is_set_to", "is_same_size", "is_nonzero", "is_signed", "is_pinned", "is_inference")},
    **{n: "int" for n in ("dim", "ndimension", "numel", "nelement", "element_size", "get_device", "data_ptr",
                          "storage_offset", "__len__", "__index__", "__int__", "__hash__")},
    **{n: "Tuple[Tensor, ...]" for n in ("split", "chunk", "unbind", "tensor_split", "hsplit", "vsplit", "dsplit",
                                         "split_with_sizes", "unsafe_split", "unsafe_chunk")},
    **{n: "Any" for n in ("item", "tolist", "size", "stride", "type", "max", "min", "sort", "topk", "kthvalue",
                          "median", "nanmedian", "mode", "cummax", "cummin", "slogdet", "qr", "svd", "aminmax",
                          "unique", "register_hook", "register_post_accumulate_grad_hook", "__dlpack__",
                          "__dlpack_device__", "__array__", "__reduce_ex__", "var_mean", "std_mean", "histogram",
                          "lu", "frexp", "nonzero", "eig", "unique_consecutive", "__torch_function__",
                          "__cuda_array_interface__", "storage", "untyped_storage", "apply_", "map_", "__getstate__",
                          "__setstate__", "__reduce_ex__")},
    "__iter__": "Iterator[Tensor]",
    "numpy": "np.ndarray", "backward": "None", "retain_grad": "None", "__bool__": "bool", "__float__": "float",
    "__repr__": "str", "__format__": "str", "__str__": "str", "tolist": "Any",
}
ATTRIBUTES = {
    "shape": "Size", "dtype": "_dtype", "device": "_device", "requires_grad": "bool", "grad": "Optional[Tensor]",
    "grad_fn": "Any", "is_leaf": "bool", "data": "Tensor", "T": "Tensor", "mT": "Tensor", "H": "Tensor",
    "mH": "Tensor", "ndim": "int", "is_cuda": "bool", "is_cpu": "bool", "is_meta": "bool", "is_sparse": "bool",
    "is_quantized": "bool", "itemsize": "int", "nbytes": "int", "names": "Any", "layout": "Any",
    "output_nr": "int", "_version": "int", "real": "Tensor", "imag": "Tensor", "retains_grad": "bool",
    "is_mkldnn": "bool", "is_nested": "bool", "_base": "Optional[Tensor]",
}
HEADER = '''"""Type stub of tinytorch.Tensor. GENERATED by scripts/gen_stubs.py: do not edit."""
from typing import Any, Callable, Iterator, Optional, Sequence, Tuple, Union

import numpy as np

from tinytorch._core.dtype import device as _device, dtype as _dtype
from tinytorch._core.size import Size

_int = int
_float = float
_bool = bool
_str = str
_Number = Union[int, float, bool]


class Tensor:
'''
FOOTER = '''

def is_tensor(obj: Any) -> bool: ...
def numel(input: Tensor) -> int: ...
def __getattr__(name: str) -> Any: ...
'''
# annotation text we keep from an implementation: only names the stub imports
_KNOWN = re.compile(r"^[\w\[\], .]*$")
_NAMES = {"Tensor", "Optional", "Union", "Sequence", "Tuple", "Any", "Callable", "Iterator", "int", "float",
          "bool", "str", "None", "Size", "tuple", "list", "dict", "np", "ndarray", "type", "bytes", "object"}


def _annotation_text(ann) -> str | None:
    if ann is inspect.Parameter.empty or ann is inspect.Signature.empty:
        return None
    text = ann if isinstance(ann, str) else getattr(ann, "__name__", None) or repr(ann)
    text = text.replace("typing.", "").replace("tinytorch._tensor.tensor.", "")
    if not _KNOWN.match(text) or any(w not in _NAMES for w in re.findall(r"[A-Za-z_]\w*", text)):
        return None
    return text


def _alias(text: str) -> str:
    # the class defines methods named int/float/bool: annotations name the builtins by alias
    return re.sub(r"\b(int|float|bool|str)\b", r"_\1", text)


def _type(p: inspect.Parameter, table: dict) -> str:
    """A parameter's type: its annotation, else ``table``'s by name, else PARAM_TYPES's, else Any."""
    return _annotation_text(p.annotation) or table.get(p.name) or PARAM_TYPES.get(p.name, "Any")


def _parameters(params, type_of) -> list:
    """The stub text of ``params`` (``type_of(p)``: a parameter's type), with a bare ``*`` before the
    first keyword-only one unless ``*args`` came first."""
    parts, keyword_only = [], False
    for p in params:
        if p.kind == p.KEYWORD_ONLY and not keyword_only:
            parts.append("*")
        keyword_only = keyword_only or p.kind in (p.KEYWORD_ONLY, p.VAR_POSITIONAL)
        prefix = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "")
        parts.append(f"{prefix}{p.name}: {type_of(p)}" + (" = ..." if p.default is not inspect.Parameter.empty else ""))
    return parts


def _method(name: str, fn) -> str:
    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    if re.match(r"^__[a-z]+__$", name):  # operators take their operands only (no keyword extras)
        params = [p for p in params if p.kind != p.KEYWORD_ONLY]
    if not params or params[0].kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
        params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)] + params
    parts = ["self"] + _parameters(params[1:], lambda p: _alias(_type(p, {})))
    ret = RETURNS.get(name) or _annotation_text(sig.return_annotation) or "Tensor"
    if name.endswith("_") and not name.startswith("_") and name not in RETURNS:
        ret = "Tensor"  # in-place ops return self
    ignore = "  # type: ignore[override]" if name in ("__eq__", "__ne__") else ""
    return f"    def {name}({', '.join(parts)}) -> {_alias(ret)}: ...{ignore}"


def render() -> str:
    import tinytorch
    T = tinytorch.Tensor
    lines = []
    for name in sorted(dir(T)):
        if name.startswith("_") and name not in RETURNS and not re.match(r"^__[a-z]+__$", name):
            continue
        if name in ("__class__", "__dict__", "__doc__", "__module__", "__weakref__", "__init_subclass__",
                    "__subclasshook__", "__new__", "__init__", "__getattribute__", "__setattr__", "__delattr__",
                    "__dir__", "__sizeof__", "__reduce__", "__slots__", "__annotations__", "__pyx_vtable__"):
            continue
        static = inspect.getattr_static(T, name)
        if isinstance(static, (property,)) or type(static).__name__ in ("getset_descriptor", "member_descriptor"):
            lines.append(f"    {name}: {_alias(ATTRIBUTES.get(name, 'Any'))}")
            continue
        attr = getattr(T, name)
        if not callable(attr):
            lines.append(f"    {name}: {_alias(ATTRIBUTES.get(name, 'Any'))}")
            continue
        if isinstance(static, (staticmethod, classmethod)):
            continue
        try:
            lines.append(_method(name, attr))
        except (TypeError, ValueError):
            lines.append(f"    def {name}(self, *args: Any, **kwargs: Any) -> {_alias(RETURNS.get(name, 'Any'))}: ...")
    return HEADER + "\n".join(lines) + "\n" + FOOTER


# top-level functions that return something other than a tensor
TOP_RETURNS = {
    **{n: "bool" for n in ("is_tensor", "is_storage", "is_floating_point", "is_complex", "is_nonzero",
                           "is_grad_enabled", "is_inference_mode_enabled", "can_cast", "equal", "allclose",
                           "is_deterministic_algorithms_warn_only_enabled", "are_deterministic_algorithms_enabled",
                           "is_anomaly_enabled", "is_autocast_enabled", "is_same_size", "is_signed",
                           "is_warn_always_enabled", "is_conj", "is_neg")},
    **{n: "int" for n in ("numel", "get_num_threads", "get_num_interop_threads", "seed", "initial_seed")},
    **{n: "None" for n in ("save", "set_num_threads", "set_num_interop_threads", "set_default_dtype",
                           "set_default_device", "set_printoptions", "use_deterministic_algorithms",
                           "set_float32_matmul_precision", "set_rng_state", "set_deterministic_debug_mode",
                           "set_warn_always", "manual_seed_all")},
    **{n: "_dtype" for n in ("get_default_dtype", "result_type", "promote_types")},
    **{n: "Tuple[Tensor, ...]" for n in ("split", "chunk", "unbind", "tensor_split", "hsplit", "vsplit", "dsplit",
                                         "meshgrid", "broadcast_tensors", "atleast_1d", "atleast_2d", "atleast_3d")},
    **{n: "Any" for n in ("load", "compile", "manual_seed", "max", "min", "sort", "topk", "kthvalue", "median",
                          "nanmedian", "mode", "cummax", "cummin", "slogdet", "qr", "svd", "aminmax", "unique",
                          "var_mean", "std_mean", "histogram", "lu", "frexp", "nonzero", "typename", "get_printoptions",
                          "get_rng_state", "get_float32_matmul_precision", "lu_unpack", "set_grad_enabled",
                          "get_device", "get_default_device", "from_dlpack", "autocast", "broadcast_shapes",
                          "cond", "vmap", "get_deterministic_debug_mode", "unique_consecutive")},
    "typename": "str", "broadcast_shapes": "Size",
}
TOP_PARAMS = {"input": "Tensor", "tensors": "Sequence[Tensor]", "size": "Any", "out": "Optional[Tensor]",
              "requires_grad": "bool", "pin_memory": "bool", "layout": "Any", "data": "Any", "obj": "Any",
              "low": "int", "high": "int", "steps": "int", "f": "Any", "map_location": "Any",
              "weights_only": "bool", "mode": "Any", "seed": "int", "new_state": "Tensor", "type1": "_dtype",
              "type2": "_dtype", "from_": "_dtype", "d": "_dtype", "equation": "str", "operands": "Any",
              "end": "_Number", "start": "_Number", "step": "_Number", "fill_value": "_Number"}


_SIZES = "Union[int, Sequence[int]]"
F_PARAMS = {
    "input": "Tensor", "target": "Tensor", "weight": "Tensor", "bias": "Tensor",
    "reduction": "str", "size_average": "Optional[bool]", "reduce": "Optional[bool]", "kernel_size": _SIZES,
    "stride": "Union[int, Sequence[int], None]", "padding": "Union[int, Sequence[int], str]", "dilation": _SIZES,
    "output_padding": _SIZES, "groups": "int", "output_size": "Any", "p": "float", "training": "bool",
    "inplace": "bool", "eps": "float", "momentum": "Optional[float]", "running_mean": "Optional[Tensor]",
    "running_var": "Optional[Tensor]", "normalized_shape": _SIZES, "dim": "Optional[int]", "mode": "str",
    "align_corners": "Optional[bool]", "scale_factor": "Union[float, Sequence[float], None]",
    "size": "Union[int, Sequence[int], None]", "margin": "float", "label_smoothing": "float", "ignore_index": "int",
    "num_classes": "int", "beta": "float", "alpha": "float", "lambd": "float", "threshold": "float",
    "min_val": "float", "max_val": "float", "negative_slope": "float", "approximate": "str", "pad": "Sequence[int]",
    "attn_mask": "Optional[Tensor]", "dropout_p": "float", "is_causal": "bool", "scale": "Optional[float]",
    "enable_gqa": "bool", "query": "Tensor", "key": "Tensor", "ceil_mode": "bool", "count_include_pad": "bool",
    "divisor_override": "Optional[int]", "return_indices": "bool", "norm_type": "float", "max_norm": "Optional[float]",
    "padding_idx": "Optional[int]", "scale_grad_by_freq": "bool", "sparse": "bool", "log_target": "bool",
    "pos_weight": "Optional[Tensor]", "log_input": "bool", "full": "bool", "var": "Union[Tensor, float]",
    "delta": "float", "input1": "Tensor", "input2": "Tensor", "x1": "Tensor", "x2": "Tensor", "anchor": "Tensor",
    "positive": "Tensor", "negative": "Tensor", "swap": "bool", "keepdim": "bool", "upscale_factor": "int",
    "downscale_factor": "int", "recompute_scale_factor": "Optional[bool]", "antialias": "bool",
    "use_input_stats": "bool", "num_groups": "int", "lower": "float", "upper": "float", "k": "float",
    "theta": "Tensor", "grid": "Tensor", "padding_mode": "str", "indices": "Tensor", "log_probs": "Tensor",
    "targets": "Tensor", "input_lengths": "Union[Tensor, Sequence[int]]", "target_lengths": "Union[Tensor, Sequence[int]]",
    "blank": "int", "zero_infinity": "bool", "logits": "Tensor", "tau": "float", "hard": "bool",
    "distance_function": "Optional[Callable[[Tensor, Tensor], Tensor]]", "generator": "Any",
}
F_VALUE = {"pad": "Optional[float]", "threshold": "float", "threshold_": "float",
           "scaled_dot_product_attention": "Tensor"}


def render_functional() -> str:
    import tinytorch.nn.functional as F
    lines = ['"""Type stub of tinytorch.nn.functional. GENERATED by scripts/gen_stubs.py: do not edit."""',
             "from typing import Any, Callable, Optional, Sequence, Tuple, Union", "",
             "from tinytorch._core.dtype import dtype as _dtype", "from tinytorch._tensor.tensor import Tensor as Tensor", "",
             "_Number = Union[int, float, bool]", ""]
    for name in sorted(dir(F)):
        fn = getattr(F, name)
        if name.startswith("_") or not callable(fn) or inspect.isclass(fn) or inspect.ismodule(fn):
            continue
        params = dict(F_PARAMS, value=F_VALUE.get(name, "Any"))
        ret = "Tuple[Tensor, Tensor]" if name.endswith("_with_indices") else None
        lines.append(_signature_stub(name, fn, params, ret or "Any" if "max_pool" in name or "adaptive_max" in name
                                     else ret))
    return "\n".join(lines) + "\n\ndef __getattr__(name: str) -> Any: ...\n"


def _signature_stub(name: str, fn, table: dict, ret: str | None) -> str:
    def type_of(p):   # a parameter defaulting to None is Optional
        typ = _type(p, table)
        return f"Optional[{typ}]" if p.default is None and "Optional" not in typ and "None" not in typ \
            and typ != "Any" else typ
    sig = inspect.signature(fn)
    parts = _parameters(sig.parameters.values(), type_of)
    ret = ret or _annotation_text(sig.return_annotation) or "Tensor"
    return f"def {name}({', '.join(parts)}) -> {ret}: ..."


def _top_function(name: str, fn) -> str:
    sig = inspect.signature(fn)
    parts = _parameters(sig.parameters.values(), lambda p: _type(p, TOP_PARAMS))
    ret = TOP_RETURNS.get(name) or _annotation_text(sig.return_annotation)
    if ret is None:
        ret = "bool" if name.startswith("is_") else "Tensor"
    return _alias(f"def {name}({', '.join(parts)}) -> {ret}: ...")


def render_init() -> str:
    import pkgutil
    import tinytorch
    from tinytorch._core.dtype import dtype as _dtype_cls
    lines = ['"""Type stub of the tinytorch package. GENERATED by scripts/gen_stubs.py: do not edit."""',
             "import builtins", "import numpy as np", "from typing import Any, Callable, Optional, Sequence, Tuple, Union", "",
             "from tinytorch._core.dtype import device as _device, dtype as _dtype",
             "from tinytorch._core.size import Size as Size", "from tinytorch._tensor.tensor import Tensor as Tensor", "",
             "# the package defines dtypes named int, float, bool: annotations name the builtins by alias",
             "_int = builtins.int", "_float = builtins.float", "_bool = builtins.bool", "_str = builtins.str",
             "_Number = Union[_int, _float, _bool]", ""]
    subs = sorted(m.name for m in pkgutil.iter_modules(tinytorch.__path__) if not m.name.startswith(("_", "lib")))
    lines += [f"from tinytorch import {m} as {m}" for m in subs if m not in ("tensor",)]
    lines.append("")
    funcs = []
    from tinytorch._toplevel import nn_functional   # torch.<F op> names the package root resolves lazily
    for name in sorted(set(dir(tinytorch)) | nn_functional.NAMES):
        if name.startswith("_") or name in ("annotations", "Tensor", "Size"):
            continue
        obj = getattr(tinytorch, name)
        if inspect.ismodule(obj):
            continue
        if inspect.isclass(obj):
            mod = obj.__module__
            if mod != "tinytorch" and getattr(sys.modules.get(mod), obj.__name__, None) is obj:
                lines.append(f"from {mod} import {obj.__name__} as {name}")
            else:
                lines.append(f"{name}: Any")
        elif isinstance(obj, _dtype_cls):
            lines.append(f"{name}: _dtype")
        elif callable(obj):
            try:
                funcs.append(_top_function(name, obj))
            except (TypeError, ValueError):
                funcs.append(f"def {name}(*args: Any, **kwargs: Any) -> Any: ...")
        else:
            lines.append(f"{name}: Any")
    return "\n".join(lines) + "\n\n" + "\n".join(funcs) + "\n\ndef __getattr__(name: str) -> Any: ...\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="fail if a stub is stale")
    args = ap.parse_args()
    import glob
    if glob.glob(os.path.join(ROOT, "tinytorch", "_C*.so")):
        sys.path.insert(0, ROOT)  # a built checkout (dev_link.sh); else the installed package (CI)
    stale = 0
    for path, text in ((OUT, render()), (OUT_INIT, render_init()), (OUT_F, render_functional())):
        old = open(path).read() if os.path.exists(path) else ""
        if args.check:
            if old != text:
                print(f"{os.path.relpath(path, ROOT)} is stale: run python3 scripts/gen_stubs.py", file=sys.stderr)
                stale = 1
            continue
        with open(path, "w") as f:
            f.write(text)
        print(f"wrote {path}")
    return stale


if __name__ == "__main__":
    sys.exit(main())
