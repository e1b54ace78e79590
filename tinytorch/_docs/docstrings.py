"""Docstrings written once from tables, shared by the top level, the Tensor methods and ``nn``:
PyTorch's summary, the object's own implementation note, then an Args section built from the
signature and a parameter glossary (a parameter's type and description by its PyTorch name, with
per-function readings where the meaning differs), defaults from the signature. A docstring that
already has an Args section is left as written.

The glossaries: ``tinytorch/_docs/params.py`` (``tinytorch.*`` and ``Tensor.*``) and
``tinytorch/nn/_doc_params.py`` (modules and ``nn.functional``); the summaries of callables without
one: ``tinytorch/_docs/summaries.py`` and ``tinytorch/nn/_doc_summaries.py``. Docstrings are set at
import time rather than generated into the Cython sources by ``codegen/``: one mechanism covers the
schema's ops, the hand-written Cython functions and the Python composites alike, and a new function
only needs glossary rows for parameter names the glossary lacks. ``help(tinytorch.add)`` reads::

    Computes add of input and other elementwise (broadcasting, type promotion).

    Args:
        input (Tensor): the input tensor.
        other (Tensor or Number): the tensor or number to add to :attr:`input`.

    Keyword args:
        alpha (Number): the multiplier for :attr:`other`. Default: ``1``
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Dict, FrozenSet, Iterable, List, Optional, Tuple

Entry = Tuple[str, str]                      # (type, description)
Describe = Callable[[str], Optional[Entry]]  # parameter name -> its glossary entry for one owner

_WIDTH = 100


def wrap(text: str, indent: str = "", subsequent: str = "") -> str:
    """Greedy word wrap at 100 columns (textwrap.fill is several times slower, and this runs at import)."""
    lines, line = [], indent
    for word in text.split():
        if len(line) + len(word) > _WIDTH and line.strip():
            lines.append(line.rstrip())
            line = subsequent
        line += word + " "
    lines.append(line.rstrip())
    return "\n".join(lines)


def default_text(v: Any) -> str:
    if v is inspect.Parameter.empty:
        return ""
    if isinstance(v, float) and v != 0 and (abs(v) < 1e-3 or abs(v) >= 1e5):
        return f" Default: ``{v:g}``"
    return f" Default: ``{v!r}``"


def documented_parameters(fn: Callable, skip_first: bool = False, varargs: bool = False) -> List[inspect.Parameter]:
    """The parameters an Args section describes: all but ``**kwargs`` (and ``*args`` unless
    ``varargs``: ``tinytorch.zeros(*size)`` documents ``size``), less the first when it is ``self``."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return []
    skipped = (inspect.Parameter.VAR_KEYWORD,) if varargs else \
        (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    ps = list(sig.parameters.values())
    if skip_first and ps and ps[0].kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
        ps = ps[1:]
    return [p for p in ps if p.kind not in skipped]


def _entry_line(p: inspect.Parameter, entry: Entry) -> str:
    typ, desc = entry
    text = f"{p.name} ({typ}): {desc}" if typ else f"{p.name}: {desc}"
    if "Default" not in desc and p.kind is not inspect.Parameter.VAR_POSITIONAL:
        text += default_text(p.default)
    return wrap(text, "    ", "        ")


def args_section(params: List[inspect.Parameter], describe: Describe, missing: List[tuple], owner: str,
                 keyword_section: bool = False) -> Optional[str]:
    """The ``Args:`` block for ``params`` (None when there are none); with ``keyword_section`` the
    keyword-only ones go under ``Keyword args:`` as in PyTorch's function docs. Names the glossary
    lacks are appended to ``missing`` as ``(owner, name)``."""
    if not params:
        return None
    positional, keyword = [], []
    for p in params:
        entry = describe(p.name)
        if entry is None:
            missing.append((owner, p.name))
            continue
        line = _entry_line(p, entry)
        (keyword if keyword_section and p.kind is inspect.Parameter.KEYWORD_ONLY else positional).append(line)
    if not positional:
        positional, keyword = keyword, []
    blocks = ["Args:\n" + "\n".join(positional)] if positional else []
    if keyword:
        blocks.append("Keyword args:\n" + "\n".join(keyword))
    return "\n\n".join(blocks) if blocks else None


def has_args(doc: Optional[str]) -> bool:
    return bool(doc) and "Args:" in doc


def compose(names: Iterable[str], own: Optional[str], summary: Optional[str], args: Optional[str]) -> Optional[str]:
    """Summary, then the object's own note (unless it only repeats the summary), then Args."""
    if own and any(own.lstrip().startswith(f"{n}(") for n in names):
        # Cython's embedded signature line ('add(input, other, *, alpha=1)'): help() shows the
        # signature already; keep the prose after it
        own = own.lstrip().split("\n", 1)[1] if "\n" in own.lstrip() else None
    own = inspect.cleandoc(own) if own and own.strip() else None
    parts = [wrap(summary)] if summary else []
    if own and (not summary or own.split("\n")[0].rstrip(".") != summary.rstrip(".")):
        parts.append(own)
    if args:
        parts.append(args)
    return "\n\n".join(parts) if parts else None


def set_doc(fn: Any, doc: Optional[str]) -> None:
    if doc:
        try:
            fn.__doc__ = doc
        except (AttributeError, TypeError):  # a builtin without a writable __doc__
            pass


def public_api(namespace: Dict[str, Any], tensor_cls: type) -> List[Tuple[Any, List[str], bool]]:
    """Every public top-level function and Tensor method once: (callable, the names it is exported
    under -- ``add``, ``Tensor.add`` --, whether its first parameter is ``self``). A callable that
    is also a top-level function documents its first parameter (``input``)."""
    from tinytorch._core.dtype import dtype as _dtype_cls
    found: Dict[int, Tuple[Any, List[str], bool]] = {}
    for name in sorted(namespace):
        fn = namespace[name]
        if name.startswith("_") or not callable(fn) or inspect.isclass(fn) or isinstance(fn, _dtype_cls):
            continue
        found.setdefault(id(fn), (fn, [], False))[1].append(name)
    for name in dir(tensor_cls):
        if name.startswith("_"):
            continue
        # inspect.getattr_static, 15x faster (this runs at import)
        raw = next((k.__dict__[name] for k in tensor_cls.__mro__ if name in k.__dict__), None)
        fn = getattr(tensor_cls, name, None)
        if raw is None or isinstance(raw, property) or not callable(fn):
            continue
        plain_method = not isinstance(raw, (staticmethod, classmethod))
        found.setdefault(id(fn), (fn, [], plain_method))[1].append(f"Tensor.{name}")
    return list(found.values())


# (owner, parameter) pairs the top-level glossary lacks: tests/cpu/test_docstrings.py requires none
MISSING: List[tuple] = []


def _reading_names(names: List[str]) -> FrozenSet[str]:
    """The names whose glossary readings apply: the exported ones, and for a method or an in-place
    variant the function it mirrors too (``Tensor.addcdiv_`` reads as ``addcdiv``)."""
    out = set(names)
    for n in names:
        bare = n.rsplit(".", 1)[-1]
        out.add(bare)
        if bare.endswith("_") and not bare.endswith("__"):
            out.add(bare[:-1])
    return frozenset(out)


def document_api(namespace: Dict[str, Any], tensor_cls: type) -> None:
    """Gives every public ``tinytorch.*`` function and ``Tensor`` method its summary and Args."""
    from tinytorch._docs.params import lookup
    from tinytorch._docs.summaries import SUMMARIES
    for fn, names, skip_self in public_api(namespace, tensor_cls):
        own = getattr(fn, "__doc__", None)
        if has_args(own):
            continue
        owners = _reading_names(names)
        params = documented_parameters(fn, skip_first=skip_self, varargs=True)
        args = args_section(params, lambda p: lookup(owners, p), MISSING, names[0], keyword_section=True)
        # a method without a summary of its own takes its function's (Tensor.cumsum: cumsum's)
        summary = next((SUMMARIES[n] for n in names + [n.rsplit(".", 1)[-1] for n in names] if n in SUMMARIES), None)
        bare = {n.rsplit(".", 1)[-1] for n in names} | {getattr(fn, "__name__", "")}
        set_doc(fn, compose(bare, own, summary, args))
