"""Containers: Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict (and the deprecated Container)."""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Iterable, Iterator, Mapping, Optional, Tuple, Union

from tinytorch.nn.modules.module import Module
from tinytorch.nn.parameter import Parameter


class Sequential(Module):
    """A sequential container. Modules will be added to it in the order they are passed in the constructor.

    Modules called in the order they are passed (or in an OrderedDict's order)."""

    def __init__(self, *args: Module) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, m in args[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def forward(self, x: Any) -> Any:
        for m in self._modules.values():
            x = m(x)
        return x

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return Sequential(OrderedDict(list(self._modules.items())[idx]))
        keys = list(self._modules)
        return self._modules[keys[idx]]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, list(self._modules)[idx], module)

    def __delitem__(self, idx) -> None:
        for k in (list(self._modules)[idx] if isinstance(idx, slice) else [list(self._modules)[idx]]):
            del self._modules[k]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> "Sequential":
        self.add_module(str(len(self)), module)
        return self


class ModuleList(Module):
    """Holds submodules in a list.

    Args:
        modules (iterable or dict, optional): the modules to add. Default: ``None``"""

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _key(self, idx: int) -> str:
        n = len(self)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range")
        return str(idx % n)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return ModuleList(list(self._modules.values())[idx])
        return self._modules[self._key(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        self.add_module(self._key(idx), module)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> "ModuleList":
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> "ModuleList":
        for m in modules:
            self.append(m)
        return self

    def __repr__(self) -> str:
        """Runs of identical submodules print once, as PyTorch: ``(0-2): 3 x Linear(...)``."""
        reprs = [repr(m) for m in self]
        if not reprs:
            return type(self).__name__ + "()"
        blocks: list = []  # [start, end, repr]
        for i, r in enumerate(reprs):
            if blocks and blocks[-1][2] == r:
                blocks[-1][1] = i
            else:
                blocks.append([i, i, r])
        lines = []
        for start, end, r in blocks:
            line = f"({start}): {r}" if start == end else f"({start}-{end}): {end - start + 1} x {r}"
            lines.append(line.replace("\n", "\n  "))
        return type(self).__name__ + "(\n  " + "\n  ".join(lines) + "\n)"

    def insert(self, index: int, module: Module) -> None:
        mods = list(self._modules.values())
        mods.insert(index, module)
        self._modules.clear()
        for i, m in enumerate(mods):
            self.add_module(str(i), m)


class _DictContainer(Module):
    """The mapping reads, deletes and updates of ModuleDict and ParameterDict, over the dict their
    values are registered in (``_entries``: ``_modules`` or ``_parameters``); setting is each one's own."""

    def _entries(self) -> "OrderedDict[str, Any]":
        raise NotImplementedError(f"{type(self).__name__} must name the dict its values are registered in")

    def __delitem__(self, key: str) -> None:
        del self._entries()[key]

    def __len__(self) -> int:
        return len(self._entries())

    def __iter__(self):
        return iter(self._entries())

    def __contains__(self, key: str) -> bool:
        return key in self._entries()

    def keys(self):
        return self._entries().keys()

    def items(self):
        return self._entries().items()

    def values(self):
        return self._entries().values()

    def __getitem__(self, key: str) -> Any:
        return self._entries()[key]

    def _add_all(self, entries) -> None:
        """``update``: set each (key, value) of a mapping or of an iterable of pairs."""
        items = entries.items() if hasattr(entries, "items") else entries
        for k, v in items:
            self[k] = v


class ModuleDict(_DictContainer):
    """Holds submodules in a dictionary.

    Holds submodules in a dictionary (insertion ordered).

    Args:
        modules (iterable or dict, optional): the modules to add. Default: ``None``"""

    def __init__(self, modules: Optional[Union[Mapping[str, Module], Iterable[Tuple[str, Module]]]] = None
                 ) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def _entries(self) -> "OrderedDict[str, Module]":
        return self._modules

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def update(self, modules) -> None:
        self._add_all(modules)

    def pop(self, key: str) -> Module:
        return self._modules.pop(key)


class ParameterList(Module):
    """Holds parameters in a list.

    Args:
        values (iterable, optional): an iterable of Parameters to add to the list. Default: ``None``"""

    def __init__(self, values: Optional[Iterable[Any]] = None) -> None:
        super().__init__()
        if values is not None:
            for v in values:
                self.append(v)

    def __getitem__(self, idx: int) -> Parameter:
        return self._parameters[str(idx % len(self))]

    def __setitem__(self, idx: int, p) -> None:
        self.register_parameter(str(idx % len(self)), p if isinstance(p, Parameter) else Parameter(p))

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())

    def append(self, p) -> "ParameterList":
        self.register_parameter(str(len(self)), p if isinstance(p, Parameter) else Parameter(p))
        return self

    def extend(self, ps) -> "ParameterList":
        for p in ps:
            self.append(p)
        return self


class ParameterDict(_DictContainer):
    """Holds parameters in a dictionary.

    Args:
        parameters (iterable, optional): a mapping (dictionary) of (string : Parameter) or an iterable
            of key-value pairs of type (string, Parameter). Default: ``None``"""

    def __init__(self, parameters: Optional[Union[Mapping[str, Any], Iterable[Tuple[str, Any]]]] = None
                 ) -> None:
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def _entries(self) -> "OrderedDict[str, Parameter]":
        return self._parameters

    def __setitem__(self, key: str, p) -> None:
        self.register_parameter(key, p if isinstance(p, Parameter) else Parameter(p))

    def update(self, parameters) -> None:
        self._add_all(parameters)


class Container(Module):
    """Deprecated: a Module holding the modules given as keyword arguments (subclass Module instead)."""

    def __init__(self, **kwargs: Module) -> None:
        import warnings
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now implemented in `nn.Module`. "
                      "Subclass that instead.", FutureWarning, stacklevel=2)
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)
