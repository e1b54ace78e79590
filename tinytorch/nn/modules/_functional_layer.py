"""Layers that are one ``nn.functional`` call (the activations, PixelShuffle, ChannelShuffle). The
class statement names the function; the constructor arguments are annotated class attributes, in
order, as in a dataclass (and as PyTorch's own modules annotate them)::

    class Softplus(FunctionalLayer, function=F.softplus):
        beta: float = 1.0
        threshold: float = 20.0

gives ``__init__(self, beta: float = 1.0, threshold: float = 20.0) -> None`` (the signature
``inspect.signature`` reads) storing both, ``forward(input)`` = ``F.softplus(input, self.beta,
self.threshold)`` and ``extra_repr()`` = ``beta=1.0, threshold=20.0``. In the repr ``inplace``
shows only when set (``inplace=True``), as in PyTorch's; ``shown=(...)`` in the class statement
names the arguments the repr shows when it is not all of them. A subclass without annotations
keeps its base's arguments; a layer with more to do writes that method itself, and
``_check_arguments`` runs once the arguments are stored."""
from __future__ import annotations

import inspect
from typing import Any, Callable, Optional, Sequence

from tinytorch._tensor.tensor import Tensor
from tinytorch.nn.modules.module import Module


def _constructor(cls: type, annotations: dict) -> Callable:
    """``cls.__init__`` over the arguments ``annotations`` declares (defaults: the class attributes)."""
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    params = [inspect.Parameter("self", kind)]
    for name, annotation in annotations.items():
        default = cls.__dict__.get(name, inspect.Parameter.empty)
        params.append(inspect.Parameter(name, kind, default=default, annotation=annotation))
    signature = inspect.Signature(params, return_annotation="None")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        Module.__init__(self)
        for name in annotations:
            setattr(self, name, bound.arguments[name])
        self._check_arguments()

    __init__.__signature__ = signature
    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    __init__.__module__ = cls.__module__
    return __init__


class FunctionalLayer(Module):
    """A layer whose forward is ``function(input, *arguments)`` over its stored constructor arguments."""

    _function: Optional[Callable] = None
    _arguments: tuple = ()    # the constructor arguments, in order
    _shown: tuple = ()        # those extra_repr shows

    def __init_subclass__(cls, function: Optional[Callable] = None, shown: Optional[Sequence[str]] = None,
                          **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if function is not None:
            cls._function = staticmethod(function)
        annotations = inspect.get_annotations(cls)
        if annotations:
            cls._arguments = cls._shown = tuple(annotations)
            if "__init__" not in cls.__dict__:
                cls.__init__ = _constructor(cls, annotations)
        if shown is not None:
            cls._shown = tuple(shown)

    def _check_arguments(self) -> None:
        """Raise for arguments the layer can't take (nothing to check by default)."""

    def forward(self, input: Tensor) -> Tensor:
        return self._function(input, *(getattr(self, name) for name in self._arguments))

    def extra_repr(self) -> str:
        values = {name: getattr(self, name) for name in self._shown if name != "inplace" or self.inplace}
        return ", ".join(f"{name}={value!r}" if isinstance(value, str) else f"{name}={value}"
                         for name, value in values.items())
