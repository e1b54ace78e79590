"""``tinytorch.onnx``: ONNX export is not implemented. PyTorch's exporter traces the program into
a graph (TorchScript or torch.export/FX); tinytorch runs eagerly and has no graph capture to
build an ONNX graph from. To export a tinytorch model, load its state_dict into the same PyTorch
model (``tinytorch.save(..., format="torch")`` once available, or safetensors) and call
``torch.onnx.export`` there."""
from __future__ import annotations

from typing import Any

_REASON = ("tinytorch.onnx.export is not implemented: tinytorch runs eagerly and has no graph "
           "capture to build an ONNX graph from; load the weights into the PyTorch model and use "
           "torch.onnx.export (see docs/compat.md)")


def export(model: Any, args: Any = (), f: Any = None, *unused: Any, **kwargs: Any) -> None:
    """Raises NotImplementedError: tinytorch has no ONNX exporter (see the module docstring)."""
    raise NotImplementedError(_REASON)


def dynamo_export(model: Any, *args: Any, **kwargs: Any) -> None:
    """Raises NotImplementedError, as ``export``."""
    raise NotImplementedError(_REASON)


def is_in_onnx_export() -> bool:
    """False: tinytorch never runs a model under an ONNX export."""
    return False


__all__ = ["export", "dynamo_export", "is_in_onnx_export"]
