"""Config modules as PyTorch's (``torch._dynamo.config``, ``torch._inductor.config``, ...): a
module whose settings are read and set as attributes (nested groups such as
``config.triton.cudagraphs`` too), with ``patch()`` to change some for a block or a function,
``get_config_copy()``, ``save_config()``/``load_config()`` and ``to_dict()``.

Reading a name the module doesn't define raises AttributeError, as PyTorch's config does.
Setting one is accepted and stored (PyTorch raises there): these settings steer a compiler
tinytorch doesn't have, so a program that sets one of PyTorch's many options that is not listed
here should still run."""
from __future__ import annotations

import __future__
import contextlib
import copy
import pickle
from types import ModuleType
from typing import Any, Dict, Optional, Union


class _SubConfig:
    """A group of settings (``config.triton``): ``config.triton.x`` is the setting "triton.x"."""

    def __init__(self, config: "ConfigModule", prefix: str) -> None:
        object.__setattr__(self, "_config", config)
        object.__setattr__(self, "_prefix", prefix)

    def __getattr__(self, name: str) -> Any:
        return self._config.__getattr__(self._prefix + name)

    def __setattr__(self, name: str, value: Any) -> None:
        self._config.__setattr__(self._prefix + name, value)

    def __dir__(self) -> list:
        n = len(self._prefix)
        return sorted({k[n:].split(".")[0] for k in self._config._values if k.startswith(self._prefix)})


class ConfigModule(ModuleType):
    """The class of a config module (``install_config_module`` gives it to one)."""

    _values: Dict[str, Any]
    _defaults: Dict[str, Any]
    _groups: set

    def __getattr__(self, name: str) -> Any:
        values = self.__dict__.get("_values")
        if values is not None:
            if name in values:
                return values[name]
            if name in self.__dict__["_groups"]:
                return _SubConfig(self, name + ".")
        raise AttributeError(f"{self.__name__}.{name} does not exist")

    def __setattr__(self, name: str, value: Any) -> None:
        values = self.__dict__.get("_values")
        if values is None or name.startswith("__") or name in self.__dict__:
            super().__setattr__(name, value)
        elif name in self.__dict__["_groups"]:
            raise AttributeError(f"{self.__name__}.{name} is a group of settings; set its members")
        else:
            values[name] = value

    def __delattr__(self, name: str) -> None:
        values = self.__dict__["_values"]
        if name in self.__dict__["_defaults"]:
            values[name] = copy.deepcopy(self.__dict__["_defaults"][name])   # back to its default
        else:
            values.pop(name, None)

    def __dir__(self) -> list:
        return sorted(set(super().__dir__()) | {k.split(".")[0] for k in self._values})

    def get_config_copy(self) -> Dict[str, Any]:
        """Every setting (dotted names for groups) and its value, copied."""
        return copy.deepcopy(self._values)

    def shallow_copy_dict(self) -> Dict[str, Any]:
        return dict(self._values)

    to_dict = shallow_copy_dict

    def save_config(self) -> bytes:
        """The settings, pickled (``load_config`` takes them back)."""
        return pickle.dumps(self._values, protocol=2)

    def load_config(self, maybe_pickled_config: Union[bytes, Dict[str, Any]]) -> None:
        config = maybe_pickled_config if isinstance(maybe_pickled_config, dict) else \
            pickle.loads(maybe_pickled_config)
        self._values.update(config)

    def get_hash(self) -> bytes:
        import hashlib
        return hashlib.md5(repr(sorted(self._values.items(), key=lambda kv: kv[0])).encode()).digest()

    def patch(self, arg1: Optional[Union[str, Dict[str, Any]]] = None, arg2: Any = None,
              **kwargs: Any) -> "_ConfigPatch":
        """Changes settings for a ``with`` block or for every call of a decorated function:
        ``patch("name", value)``, ``patch({"name": value})`` or ``patch(name=value)``."""
        if arg1 is not None:
            if arg2 is not None:
                if not isinstance(arg1, str):
                    raise AssertionError("patch(name, value): name must be a string")
                changes = {arg1: arg2}
            else:
                if not isinstance(arg1, dict):
                    raise AssertionError("patch(changes): changes must be a dict")
                changes = dict(arg1)
            changes.update(kwargs)
        else:
            changes = kwargs
        return _ConfigPatch(self, changes)


class _ConfigPatch(contextlib.ContextDecorator):
    def __init__(self, config: ConfigModule, changes: Dict[str, Any]) -> None:
        self.config, self.changes = config, changes
        self._prior: list = []

    def __enter__(self) -> None:
        values = self.config._values
        missing = object()
        self._prior.append({k: values.get(k, missing) for k in self.changes})
        self._missing = missing
        values.update(self.changes)

    def __exit__(self, *exc: Any) -> bool:
        values = self.config._values
        for k, v in self._prior.pop().items():
            if v is self._missing:
                values.pop(k, None)
            else:
                values[k] = v
        return False


def install_config_module(module: ModuleType) -> None:
    """Turns ``module``'s public settings (module-level values, and the values of its classes
    as dotted groups) into a config module's settings."""
    values: Dict[str, Any] = {}
    groups: set = set()

    def collect(source: Dict[str, Any], prefix: str) -> None:
        for name, value in list(source.items()):
            if (name.startswith("_") or isinstance(value, (ModuleType, __future__._Feature))
                    or (callable(value) and not isinstance(value, type))):
                continue
            if isinstance(value, type):
                if value.__module__ != module.__name__:
                    continue                      # an imported class, not a group
                groups.add(prefix + name)
                collect(dict(vars(value)), prefix + name + ".")
            else:
                values[prefix + name] = value
            if not prefix:
                delattr(module, name)

    collect(dict(vars(module)), "")
    module.__dict__["_values"] = values
    module.__dict__["_defaults"] = copy.deepcopy(values)
    module.__dict__["_groups"] = groups
    module.__class__ = ConfigModule
