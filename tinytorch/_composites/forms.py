"""The forms the op schema makes from one implementation (``codegen/ops.py``): a Tensor method's function
form (``torch.detach(x)``), the in-place function of an in-place method (``torch.relu_(x)``), the
in-place methods of out-of-place ops (``inplace="copy"``) and of views (``inplace="view"``), and a form
taking PyTorch's keywords the implementation lacks (a row's ``keywords``: ``swapaxes(axis0=)``). Each form
takes its wrapped function's signature and Args, so help(), the stubs and the docs read right.

This module imports nothing above the Tensor class: the generated files use it for the forms they install at
import time, without loading the composites."""
from __future__ import annotations

import inspect
import re
from typing import Callable, Optional

from tinytorch._core.dtype import can_cast
from tinytorch._core.graph import is_grad_enabled
from tinytorch._tensor.tensor import Tensor


def _entry_name(entry: str) -> str:
    return entry.split()[0].rstrip(":")


def derived_doc(summary: str, doc: Optional[str], drop: Optional[str] = None, first: Optional[str] = None) -> str:
    """The docstring of a made form (an in-place method, a function form): ``summary``, then the Args and
    Keyword args of ``doc`` (the docstring of what it wraps) less the entry ``drop``, with ``first`` (an
    Args entry) put in front when the Args don't begin with its name. Keyword args alone read as Args."""
    sections: dict = {}
    entries: Optional[list] = None
    for line in inspect.cleandoc(doc or "").split("\n"):
        if line in ("Args:", "Keyword args:"):
            entries = sections.setdefault(line, [])
        elif entries is not None and line.startswith("        "):
            entries[-1] += "\n" + line
        elif entries is not None and line.startswith("    "):
            entries.append(line)
        else:
            entries = None
    args = [e for e in sections.get("Args:", []) if _entry_name(e) != drop]
    keyword = sections.get("Keyword args:", [])
    if first and (not args or _entry_name(args[0]) != _entry_name(first)):
        args.insert(0, first)
    if not args:
        args, keyword = keyword, []
    blocks = [summary] + [f"{title}\n" + "\n".join(e)
                          for title, e in (("Args:", args), ("Keyword args:", keyword)) if e]
    return "\n\n".join(blocks)


def _adopt(form, wrapped, name: str, first: str, **replace) -> Optional[str]:
    """Names ``form`` ``name`` and gives it ``wrapped``'s signature with the first parameter renamed
    ``first`` (``replace``: more of ``Signature.replace``); returns the old first parameter's name (None
    for a builtin without a signature, where help() shows ``(*args, **kwargs)``)."""
    form.__name__ = form.__qualname__ = name
    try:
        sig = inspect.signature(wrapped)
    except (TypeError, ValueError):
        return None
    old, *rest = sig.parameters.values()
    annotation = {"annotation": "Tensor"} if "return_annotation" in replace else {}
    form.__signature__ = sig.replace(parameters=[old.replace(name=first, **annotation)] + rest, **replace)
    return old.name


def _refuse_leaf(self, name: str) -> None:
    if is_grad_enabled() and self.requires_grad and self.is_leaf:
        raise RuntimeError(f"{name}(): a leaf Variable that requires grad is being used in an in-place operation.")


def make_inplace(fn, name: str):
    """The in-place method ``name`` of an out-of-place op ``fn`` (a schema row's ``inplace="copy"``):
    computes out of place, checks that the result's dtype can be written into self and its shape is
    self's (as PyTorch's in-place ops), copies back; autograd records the copy."""
    def inplace(self: Tensor, *args, **kwargs) -> Tensor:
        out = fn(self, *args, **kwargs)
        if out.dtype != self.dtype and not can_cast(out.dtype, self.dtype):
            raise RuntimeError(f"result type {out.dtype} can't be cast to the desired output type {self.dtype}")
        if tuple(out.shape) != tuple(self.shape):
            raise RuntimeError(f"output with shape {tuple(self.shape)} doesn't match the broadcast shape "
                               f"{tuple(out.shape)}")
        return self.copy_(out)
    dropped = _adopt(inplace, fn, name, "self", return_annotation="Tensor")
    inplace.__doc__ = derived_doc(f"In-place version of :meth:`~Tensor.{name[:-1]}`.", fn.__doc__, drop=dropped)
    return inplace


def make_view_inplace(view, name: str):
    """The in-place shape method ``name`` (``squeeze_``, ``t_``, ``transpose_``, ``as_strided_``, ...) of the
    view op ``view`` (a schema row's ``inplace="view"``): the tensor becomes the view, keeping its
    identity and storage and taking the view's sizes, strides and offset; while grad mode records, it
    also takes the view's autograd node, so gradients flow back exactly as through the view (PyTorch's
    semantics). Like every in-place op, refused on a leaf that requires grad while grad mode is on."""
    def method(self: Tensor, *args, **kwargs) -> Tensor:
        _refuse_leaf(self, name)
        try:
            out = view(self, *args, **kwargs)
        except RuntimeError as e:   # the view's message names the out-of-place op: name the one called
            text, called = str(e), name[:-1] + "()"
            if text.startswith(called):
                raise RuntimeError(name + "()" + text[len(called):]) from None
            raise
        self._impl = out._impl
        if out._grad_fn is not None:
            self._grad_fn = out._grad_fn
            self._output_nr = out._output_nr
        return self
    dropped = _adopt(method, view, name, "self")
    method.__doc__ = derived_doc(f"In-place version of :meth:`~Tensor.{name[:-1]}`.", view.__doc__, drop=dropped)
    return method


def function_form(method):
    """``tinytorch.<name>(input, ...)`` calling the method ``input.<name>(...)``, whose first parameter is
    ``input`` (PyTorch's): the in-place functions (``torch.relu_``, ``torch.clamp_``) and the function forms
    of Tensor methods (``torch.detach``, ``torch.is_nonzero``, ...)."""
    def fn(input: Tensor, *args, **kwargs):
        return method(input, *args, **kwargs)
    name = method.__name__
    _adopt(fn, method, name, "input")
    # the method's summary (its first line) and Args, input first
    doc = inspect.cleandoc(method.__doc__ or "")
    summary = f"In-place version of :func:`{name[:-1]}`." if name.endswith("_") else doc.split("\n")[0]
    fn.__doc__ = derived_doc(summary, doc, drop="self", first="    input (Tensor): the input tensor.")
    return fn


def _keyword_doc(doc: Optional[str], renamed: dict, added: list) -> str:
    """``doc`` with the Args entries of the renamed parameters under PyTorch's names, and the ``added``
    entries (accepted keywords) at the end of its Keyword args (a new section where it has none)."""
    doc = inspect.cleandoc(doc or "")
    for torch_name, ours in renamed.items():
        doc = re.sub(rf"^    {re.escape(ours)}(?= \(|:)", f"    {torch_name}", doc, flags=re.M)
    if not added:
        return doc
    lines = doc.split("\n")
    new = [("    " if i == 0 else "        ") + line.strip() for e in added for i, line in enumerate(e.split("\n"))]
    if "Keyword args:" in lines:
        end = lines.index("Keyword args:") + 1
        while end < len(lines) and lines[end].startswith("    "):
            end += 1
        lines[end:end] = new
    else:
        lines += ["", "Keyword args:"] + new
    return "\n".join(lines)


def with_keywords(fn: Callable, name: str, renamed: Optional[dict] = None, accepted: Optional[dict] = None) -> Callable:
    """The form ``name`` of ``fn`` taking PyTorch's keywords that ``fn`` lacks (a schema row's ``keywords``):
    ``renamed`` maps PyTorch's name of a parameter to ``fn``'s (``{"axis0": "dim0"}``; fn's name still
    works), ``accepted`` maps a keyword fn does not take to ``(default, Args entry, reason)``: its
    default (or any value, where the reason is empty) changes nothing, another value raises
    NotImplementedError with the reason. The form's signature and Args read PyTorch's names."""
    renamed, accepted = dict(renamed or {}), dict(accepted or {})

    def form(*args, **kwargs):
        if not kwargs:   # the usual call (Tensor.expand in every sum's backward): no layer to pay for
            return fn(*args)
        for torch_name, ours in renamed.items():
            if torch_name in kwargs:
                if ours in kwargs:
                    raise TypeError(f"{name}() got values for both {torch_name!r} and {ours!r} (the same argument)")
                kwargs[ours] = kwargs.pop(torch_name)
        for keyword, (default, _, reason) in accepted.items():
            if keyword in kwargs:
                value = kwargs.pop(keyword)
                if reason and value != default:
                    raise NotImplementedError(f"{name}(): {keyword}={value!r} is not supported: {reason}")
        return fn(*args, **kwargs)

    form.__name__ = form.__qualname__ = name
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        sig = None
    if sig is not None:
        params = [p.replace(name=next((t for t, o in renamed.items() if o == p.name), p.name))
                  for p in sig.parameters.values()]
        tail = [p for p in params if p.kind is p.VAR_KEYWORD]
        params = [p for p in params if p.kind is not p.VAR_KEYWORD]
        params += [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=d) for k, (d, _, _) in accepted.items()]
        form.__signature__ = sig.replace(parameters=params + tail)
    form.__doc__ = _keyword_doc(fn.__doc__, renamed, [entry for _, entry, _ in accepted.values()])
    return form
