"""Every public function's and Tensor method's keywords against PyTorch 2.13's: a keyword torch
accepts that tinytorch does not is a failure unless ``KNOWN`` lists it with its reason.
tests/fixtures/torch_signatures.json holds torch's keywords (scripts/torch_signatures.py writes it
where torch is installed); with torch installed, the table is also checked against torch itself."""
import inspect
import json
import os
import sys

import pytest

import tinytorch
import tinytorch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TABLE = os.path.join(ROOT, "tests", "fixtures", "torch_signatures.json")

_OUT_DTYPE = "out_dtype= (torch 2.13's mixed-precision matmul output dtype) is not implemented"
_TORCHSCRIPT = "the name comes from an overload Python code doesn't use by keyword (scalar/list overloads)"
_FACTORY = "factory options (size= by keyword, layout=, pin_memory=, memory_format=, generator= on *_like)"

# the gaps an op's function and its Tensor method share: name -> (torch's keywords tinytorch lacks, why)
_FUNCTION_AND_METHOD = {
    "addmm": (('out_dtype',), _OUT_DTYPE),
    "baddbmm": (('out_dtype',), _OUT_DTYPE),
    "bmm": (('out_dtype',), _OUT_DTYPE),
    "dot": (('tensor',), _TORCHSCRIPT),
    "eq": (('a', 'b'), _TORCHSCRIPT),
    "mm": (('out_dtype',), _OUT_DTYPE),
    "ne": (('a', 'b'), _TORCHSCRIPT),
    "sort": (('reverse',), _TORCHSCRIPT),
}
# "namespace:name" -> (torch's keywords tinytorch lacks, why)
KNOWN = {
    **{f"{namespace}:{name}": gap for name, gap in _FUNCTION_AND_METHOD.items()
       for namespace in ("functions", "methods")},
    "functions:bernoulli": (('p',), _TORCHSCRIPT),
    "functions:cholesky_inverse": (('input',), _TORCHSCRIPT),
    "functions:cholesky_solve": (('input', 'input2'), _TORCHSCRIPT),
    "functions:empty": (('memory_format', 'size'), _FACTORY),
    "functions:empty_like": (('layout', 'memory_format', 'pin_memory'), _FACTORY),
    "functions:full_like": (('layout', 'memory_format', 'pin_memory'), _FACTORY),
    "functions:isin": (('element', 'test_element'), _TORCHSCRIPT),
    "functions:linspace": (('layout', 'pin_memory'), _FACTORY),
    "functions:logspace": (('pin_memory',), _FACTORY),
    "functions:matrix_exp": (('input',), _TORCHSCRIPT),
    "functions:normal": (('input',), _TORCHSCRIPT),
    "functions:ones": (('size',), _FACTORY),
    "functions:ones_like": (('layout', 'memory_format', 'pin_memory'), _FACTORY),
    "functions:rand": (('size',), _FACTORY),
    "functions:rand_like": (('generator', 'layout', 'memory_format', 'pin_memory'), _FACTORY),
    "functions:randint_like": (('layout', 'memory_format', 'pin_memory'), _FACTORY),
    "functions:randn": (('size',), _FACTORY),
    "functions:randn_like": (('generator', 'layout', 'memory_format', 'pin_memory'), _FACTORY),
    "functions:result_type": (('scalar',), _TORCHSCRIPT),
    "functions:searchsorted": (('input',), _TORCHSCRIPT),
    "functions:zeros": (('size',), _FACTORY),
    "functions:zeros_like": (('layout', 'memory_format', 'pin_memory'), _FACTORY),
    "methods:cholesky_solve": (('input2',), _TORCHSCRIPT),
    "methods:copy_": (('other',), _TORCHSCRIPT),
    "methods:new_empty": (('layout', 'pin_memory', 'size'), _FACTORY),
    "methods:new_empty_strided": (('layout', 'pin_memory'), _FACTORY),
    "methods:new_full": (('layout', 'pin_memory'), _FACTORY),
    "methods:new_ones": (('layout', 'pin_memory', 'size'), _FACTORY),
    "methods:new_zeros": (('layout', 'pin_memory', 'size'), _FACTORY),
    "methods:uniform_": (('from', 'to'), _TORCHSCRIPT),
    "nn.functional:rrelu_": (('generator',), _FACTORY),
}


def _accepted(fn, method: bool):
    """The keyword names ``fn`` takes (None: no signature; "any": it takes **kwargs)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    if method and params and params[0].kind is not inspect.Parameter.VAR_POSITIONAL:
        params = params[1:]
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return "any"
    return {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


def missing_keywords(table: dict) -> dict:
    """"namespace:name" -> torch's keywords that tinytorch's function or method does not take."""
    out = {}
    for ns, obj, method in (("functions", tinytorch, False), ("methods", tinytorch.Tensor, True),
                            ("nn.functional", F, False)):
        for name, keywords in table[ns].items():
            fn = getattr(obj, name, None)
            accepted = _accepted(fn, method) if callable(fn) else None
            if accepted in (None, "any"):
                continue
            lacking = tuple(sorted(set(keywords) - accepted))
            if lacking:
                out[f"{ns}:{name}"] = lacking
    return out


@pytest.fixture(scope="module")
def table():
    with open(TABLE) as f:
        return json.load(f)


def test_no_keyword_gaps_beyond_the_known(table):
    missing = missing_keywords(table)
    new = {k: v for k, v in missing.items() if KNOWN.get(k, ((), ""))[0] != v}
    assert not new, f"keywords torch {table['torch']} accepts and tinytorch does not (fix, or list in KNOWN): {new}"


def test_known_gaps_are_still_gaps(table):
    missing = missing_keywords(table)
    stale = sorted(k for k in KNOWN if k not in missing)
    assert not stale, f"KNOWN lists gaps that are fixed now (remove them): {stale}"


def test_split_takes_torchs_method_keywords():
    x = tinytorch.arange(6.0)
    parts = tinytorch.tensor_split(x, sections=3)
    assert [p.tolist() for p in parts] == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    assert tinytorch.result_type(tensor=tinytorch.ones(2, dtype=tinytorch.int32), other=1.5) == tinytorch.float32


def test_table_matches_installed_torch(table):
    torch = pytest.importorskip("torch")
    if torch.__version__.split("+")[0] != table["torch"].split("+")[0]:
        pytest.skip(f"the table is torch {table['torch']}'s; installed: {torch.__version__}")
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    try:
        import torch_signatures
    finally:
        sys.path.pop(0)
    schemas = torch_signatures._schemas()
    fresh = torch_signatures._table(torch, [n for n in table["functions"]], schemas)
    assert fresh == table["functions"]
