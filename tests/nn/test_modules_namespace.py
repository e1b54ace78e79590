"""``torch.nn.modules.<submodule>.<Class>``: PyTorch's module paths as attribute chains, after only
``import tinytorch as torch`` (checked in a fresh interpreter: the tests of this process may
have imported any submodule already)."""
from __future__ import annotations

import json
import os
import pkgutil
import subprocess
import sys

import tinytorch
import tinytorch.nn.modules as modules_pkg

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(tinytorch.__file__)))   # the tinytorch under test
SUBMODULES = sorted(m.name for m in pkgutil.iter_modules(modules_pkg.__path__))

# PyTorch paths that programs spell out (subclassing the private bases, isinstance checks)
CHAINS = [
    "nn.modules.dropout.Dropout", "nn.modules.linear.Linear", "nn.modules.module.Module", "nn.modules.conv.Conv2d",
    "nn.modules.conv._ConvNd", "nn.modules.batchnorm._BatchNorm", "nn.modules.batchnorm._NormBase",
    "nn.modules.loss._Loss", "nn.modules.loss._WeightedLoss", "nn.modules.container.Sequential",
    "nn.modules.activation.ReLU", "nn.modules.sparse.Embedding", "nn.modules.rnn.LSTM",
    "nn.modules.normalization.LayerNorm", "nn.modules.transformer.TransformerEncoderLayer",
    "nn.modules.lazy.LazyModuleMixin", "nn.modules.pooling.MaxPool2d",
    "nn.modules.linear_cross_entropy_options.LinearCrossEntropyOptions",
]


def _fresh(script: str) -> dict:
    env = dict(os.environ, PYTHONPATH=_ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_every_submodule_is_an_attribute_after_import_tinytorch():
    assert {"module", "linear", "conv", "dropout", "batchnorm", "linear_cross_entropy_options"} <= set(SUBMODULES)
    out = _fresh(
        "import json, types, tinytorch as torch\n"
        f"names = {SUBMODULES!r}\n"
        "print(json.dumps({n: getattr(getattr(torch.nn.modules, n, None), '__name__', None) for n in names}))\n")
    assert out == {n: f"tinytorch.nn.modules.{n}" for n in SUBMODULES}


def test_pytorch_attribute_chains_name_the_classes():
    out = _fresh(
        "import json, functools, tinytorch as torch\n"
        f"chains = {CHAINS!r}\n"
        "res = {}\n"
        "for c in chains:\n"
        "    obj = functools.reduce(getattr, c.split('.'), torch)\n"
        "    res[c] = [obj.__module__, obj.__name__]\n"
        "print(json.dumps(res))\n")
    for chain in CHAINS:
        assert out[chain][1] == chain.rsplit(".", 1)[1], chain
    import tinytorch as tt
    assert tt.nn.modules.linear.Linear is tt.nn.Linear and tt.nn.modules.module.Module is tt.nn.Module
    assert issubclass(tt.nn.BatchNorm2d, tt.nn.modules.batchnorm._BatchNorm)
    assert issubclass(tt.nn.CrossEntropyLoss, tt.nn.modules.loss._WeightedLoss)


def test_unknown_names_raise_attribute_error():
    import pytest

    import tinytorch as tt
    for name in ("no_such_submodule", "utils.x", "__all__", "__wrapped__"):
        with pytest.raises(AttributeError, match="has no attribute"):
            getattr(tt.nn.modules, name)
    assert not hasattr(tt.nn.modules, "no_such_submodule")
