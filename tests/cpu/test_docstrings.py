"""Every public nn module and nn.functional function has a docstring with an Args section that
names its parameters (in PyTorch's words, from nn/_doc_params.py), so help(nn.Conv2d) is useful."""
from __future__ import annotations

import inspect
import pydoc
import re

import pytest

import tinytorch.nn as nn
import tinytorch.nn.functional as F
from tinytorch.nn import _docstrings

# no constructor arguments to document (PyTorch documents these without Args), or the base class
NO_ARGS = {"Module", "Identity", "Sequential", "Container", "LogSigmoid", "Sigmoid", "Softsign", "Tanh", "Tanhshrink"}

MODULES = sorted(n for n in dir(nn) if inspect.isclass(getattr(nn, n)) and issubclass(getattr(nn, n), nn.Module))
FUNCTIONS = sorted(n for n in dir(F) if not n.startswith("_") and callable(getattr(F, n))
                   and not inspect.isclass(getattr(F, n)) and not inspect.ismodule(getattr(F, n)))


def _documented_names(doc: str) -> list:
    block = inspect.cleandoc(doc).split("Args:", 1)[1]
    return re.findall(r"^    (\w+)(?: \(|:)", block, flags=re.M)


def _signature_names(fn, skip_self: bool) -> list:
    ps = [p for p in inspect.signature(fn).parameters.values()
          if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    return [p.name for p in ps[1 if skip_self else 0:]]


def test_glossary_describes_every_parameter():
    assert _docstrings.MISSING == []


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


@pytest.mark.parametrize("name", FUNCTIONS)
def test_functional_docstring_has_args(name):
    fn = getattr(F, name)
    doc = fn.__doc__ or ""
    assert "Args:" in doc, f"F.{name} has no Args section"
    params = _signature_names(fn, False)
    missing = set(params) - set(_documented_names(doc))
    assert not missing, f"F.{name}: Args lacks {sorted(missing)}"


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
