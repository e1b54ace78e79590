"""Args entries that the tensor factories share, in PyTorch's words (its ``factory_common_args``), and
:func:`fill_doc`, which puts entries into a docstring.

A docstring names an entry (or a run of entries) as a ``{placeholder}`` alone on a line, indented as
the entries around it; ``fill_doc(notes)`` on the function puts the entry there, continuation lines 4
spaces deeper, so the same entry reads right in a function and in a method. Only such lines are
filled: other braces in the docstring (LaTeX) stay as written. An entry is written here with its
continuation lines indented 4 spaces."""
from __future__ import annotations

import re
from typing import Callable, TypeVar

_F = TypeVar("_F", bound=Callable)
_PLACEHOLDER = re.compile(r"^( *)\{(\w+)\}$", flags=re.M)


def entries(*texts: str) -> str:
    """Several entries as the text of one placeholder."""
    return "\n".join(texts)


def filled_doc(doc: str, *notes: dict) -> str:
    """``doc`` with its placeholder lines filled from ``notes``."""
    merged = {k: v for n in notes for k, v in n.items()}

    def indented(match: re.Match) -> str:
        indent = match.group(1)
        return "\n".join(indent + line for line in merged[match.group(2)].split("\n"))
    return _PLACEHOLDER.sub(indented, doc)


def fill_doc(*notes: dict) -> Callable[[_F], _F]:
    """Decorator: the function's docstring with its placeholder lines filled from ``notes``."""
    def fill(fn: _F) -> _F:
        fn.__doc__ = filled_doc(fn.__doc__, *notes)
        return fn
    return fill


_requires_grad = """requires_grad (bool, optional): if autograd should record operations on the returned tensor.
    Default: ``False``"""

factory_notes = {
    "size": """size (int...): a sequence of integers defining the shape of the output tensor. Can be a variable
    number of arguments or a collection like a list or tuple.""",
    "size_sequence": """size (int...): a list, tuple, or :class:`Size` of integers defining the shape of the output
    tensor.""",
    "device": """device (device, optional): the desired device of returned tensor. If ``None``, uses the current
    device for the default tensor type (see :func:`set_default_device`). Default: ``None``""",
    "requires_grad": _requires_grad,
    "pin_memory": """pin_memory (bool, optional): if set, returned tensor would be allocated in the pinned memory.
    Works only for CPU tensors. Default: ``False``""",
    "layout": """layout (layout, optional): the desired layout of returned Tensor (only ``strided``). Default:
    ``None``""",
    "like_input": "input (Tensor): the size of :attr:`input` will determine size of the output tensor.",
}
# the data, dtype and device of tensor() and as_tensor()
factory_notes["data_args"] = entries(
    """data (array_like): initial data for the tensor. Can be a list, tuple, NumPy ``ndarray``, scalar,
    and other types.""",
    """dtype (dtype, optional): the desired data type of returned tensor. If ``None``, infers data type
    from :attr:`data`. Default: ``None``""",
    """device (device, optional): the device of the constructed tensor. If None and data is a tensor
    then the device of data is used. Default: ``None``""")
# dtype, device and requires_grad of a factory in the default dtype and device
factory_notes["factory_kwargs"] = entries(
    """dtype (dtype, optional): the desired data type of returned tensor. If ``None``, uses a global
    default (see :func:`set_default_dtype`). Default: ``None``""",
    factory_notes["device"], _requires_grad)
# ... of ``<factory>_like(input)``: input's dtype and device
factory_notes["like_kwargs"] = entries(
    """dtype (dtype, optional): the desired data type of returned Tensor. If ``None``, defaults to the
    dtype of :attr:`input`. Default: ``None``""",
    """device (device, optional): the desired device of returned tensor. If ``None``, defaults to the
    device of :attr:`input`. Default: ``None``""", _requires_grad)
# ... of ``Tensor.new_<factory>``: this tensor's dtype and device
factory_notes["new_kwargs"] = entries(
    """dtype (dtype, optional): the desired type of returned tensor. If ``None``, same dtype as this
    tensor. Default: ``None``""",
    """device (device, optional): the desired device of returned tensor. If ``None``, same device as
    this tensor. Default: ``None``""", _requires_grad)
