"""Every public nn module, nn.functional function, top-level function and Tensor method has a
docstring with a summary and an Args section that names its parameters (in PyTorch's words, written
on the object in its source), so help(nn.Conv2d), help(tinytorch.add) and help(tinytorch.Tensor.view)
are useful."""
from __future__ import annotations

import inspect
import pydoc
import re

import pytest

import tinytorch
import tinytorch.nn as nn
import tinytorch.nn.functional as F

# no constructor arguments to document (PyTorch documents these without Args), or the base class
NO_ARGS = {"Module", "Identity", "Sequential", "Container", "LogSigmoid", "Sigmoid", "Softsign", "Tanh", "Tanhshrink"}

MODULES = sorted(n for n in dir(nn) if inspect.isclass(getattr(nn, n)) and issubclass(getattr(nn, n), nn.Module))
FUNCTIONS = sorted(n for n in dir(F) if not n.startswith("_") and callable(getattr(F, n))
                   and not inspect.isclass(getattr(F, n)) and not inspect.ismodule(getattr(F, n)))


def _documented_names(doc: str) -> list:
    block = inspect.cleandoc(doc).split("Args:", 1)[1]
    return re.findall(r"^    (\w+)(?: \(|:)", block, flags=re.M)


def _entries(doc: str) -> list:
    """The entry lines of the Args and Keyword args sections (``name (type): description``)."""
    out = []
    for section in re.split(r"^(?:Args|Keyword args):\n", inspect.cleandoc(doc), flags=re.M)[1:]:
        for line in section.split("\n"):
            if line and not line.startswith("    "):
                break   # the next section
            if re.match(r"    \*{0,2}\w", line):
                out.append(line)
    return out


def _check_entries(qualname: str, doc: str) -> None:
    # each entry gives a description (and, where it names a type, a non-empty one)
    for line in _entries(doc):
        assert re.fullmatch(r"    \*{0,2}\w+(?: \(\S.*?\))?: \S.*", line), f"{qualname}: malformed Args entry {line!r}"


def _signature_names(fn, skip_self: bool) -> list:
    ps = [p for p in inspect.signature(fn).parameters.values()
          if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    return [p.name for p in ps[1 if skip_self else 0:]]


@pytest.mark.parametrize("name", MODULES)
def test_module_docstring_has_args(name):
    cls = getattr(nn, name)
    if name in NO_ARGS:
        assert not _signature_names(cls.__init__, True), f"{name} takes arguments: document them"
        return
    doc = cls.__doc__ or ""
    assert "Args:" in doc, f"nn.{name} has no Args section"
    assert doc.split("\n")[0].strip(), f"nn.{name} has no summary line"
    # every constructor parameter is named in Args
    missing = set(_signature_names(cls.__init__, True)) - set(_documented_names(doc))
    assert not missing, f"nn.{name}: Args lacks {sorted(missing)}"
    _check_entries(f"nn.{name}", doc)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_functional_docstring_has_args(name):
    fn = getattr(F, name)
    doc = fn.__doc__ or ""
    assert "Args:" in doc, f"F.{name} has no Args section"
    params = _signature_names(fn, False)
    missing = set(params) - set(_documented_names(doc))
    assert not missing, f"F.{name}: Args lacks {sorted(missing)}"
    _check_entries(f"F.{name}", doc)


def test_help_conv2d_reads_like_pytorch():
    text = pydoc.render_doc(nn.Conv2d, renderer=pydoc.plaintext)
    assert "Applies a 2D convolution over an input signal composed of several input planes." in text
    assert "in_channels (int): number of channels in the input image." in text
    assert "bias (bool): if set to ``False``, the layer will not learn an additive bias. Default: ``True``" in text
    assert "padding_mode (str, optional)" in text
    text = pydoc.render_doc(F.cross_entropy, renderer=pydoc.plaintext)
    assert "label_smoothing (float, optional)" in text and "Default: ``-100``" in text


def test_defaults_come_from_the_signature():
    doc = nn.LayerNorm.__doc__
    assert "eps (float): a value added for numerical stability. Default: ``1e-05``" in doc
    assert "Default: ``0.5``" in F.dropout.__doc__


# ---- the top level and the Tensor methods
TOP_LEVEL = sorted(n for n, v in vars(tinytorch).items() if not n.startswith("_") and callable(v)
                   and not inspect.isclass(v) and not isinstance(v, tinytorch.dtype))
METHODS = sorted(n for n in dir(tinytorch.Tensor) if not n.startswith("_") and callable(getattr(tinytorch.Tensor, n))
                 and not isinstance(inspect.getattr_static(tinytorch.Tensor, n), property))


def _all_parameter_names(fn, skip_self: bool) -> list:
    # *size and *tensors are documented (as PyTorch's ``size (int...)``); **kwargs is not
    ps = [p for p in inspect.signature(fn).parameters.values() if p.kind is not p.VAR_KEYWORD]
    return [p.name for p in ps[1 if skip_self else 0:]]


def _check_documented(qualname: str, fn, params: list) -> None:
    doc = fn.__doc__ or ""
    first = doc.strip().split("\n")[0]
    assert first and not first.startswith(("Args:", "Keyword args:")), f"{qualname} has no summary line"
    if not params:
        return
    assert "Args:" in doc, f"{qualname} has no Args section"
    missing = set(params) - set(_documented_names(doc))
    assert not missing, f"{qualname}: Args lacks {sorted(missing)}"
    _check_entries(qualname, doc)


@pytest.mark.parametrize("name", TOP_LEVEL)
def test_top_level_docstring_has_args(name):
    fn = getattr(tinytorch, name)
    _check_documented(f"tinytorch.{name}", fn, _all_parameter_names(fn, False))


@pytest.mark.parametrize("name", METHODS)
def test_tensor_method_docstring_has_args(name):
    fn = getattr(tinytorch.Tensor, name)
    skip_self = not isinstance(inspect.getattr_static(tinytorch.Tensor, name), (staticmethod, classmethod))
    _check_documented(f"Tensor.{name}", fn, _all_parameter_names(fn, skip_self))


def test_a_function_whose_args_lack_a_parameter_is_reported():
    def brand_new(input, zorp=3, *, dim=0):
        """Returns something new.

        Args:
            input (Tensor): the input tensor.
            dim (int): the dimension."""

    with pytest.raises(AssertionError, match="lacks \\['zorp'\\]"):
        _check_documented("tinytorch.brand_new", brand_new, _all_parameter_names(brand_new, False))
    with pytest.raises(AssertionError, match="malformed Args entry"):
        _check_entries("brand_new", "Returns x.\n\nArgs:\n    input (Tensor):\n    dim (int): the dimension.")


def test_help_add_reads_like_pytorch():
    text = pydoc.render_doc(tinytorch.add, renderer=pydoc.plaintext)
    assert "other (Tensor or Number): the tensor or number to add to :attr:`input`." in text
    assert "Keyword args:" in text and "alpha (Number): the multiplier for :attr:`other`. Default: ``1``" in text
    assert "TensorBase" not in text        # Cython's embedded signature line is dropped
    text = pydoc.render_doc(tinytorch.Tensor.view, renderer=pydoc.plaintext)
    assert "shape (Size or int...): the desired size." in text and "self (" not in text
    doc = tinytorch.sum.__doc__
    assert "keepdim (bool): whether the output tensor has :attr:`dim` retained or not. Default: ``False``" in doc
    assert "dtype (dtype, optional): the desired data type of returned tensor. If specified" in doc
    # an in-place variant reads as its function (Tensor.addcdiv_ as addcdiv)
    assert "tensor2 (Tensor): the denominator tensor." in tinytorch.Tensor.addcdiv_.__doc__
    assert "size (int...): a sequence of integers defining the shape" in tinytorch.zeros.__doc__
