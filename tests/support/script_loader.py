"""Loads a demo or script file as a module for tests (registered in sys.modules while in use, since
dataclasses look their module up)."""
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Iterator

ROOT = Path(__file__).resolve().parents[2]


def loaded(relative_path: str, name: str) -> Iterator[ModuleType]:
    """Yields ``relative_path`` (from the repository root) executed as module ``name``; for
    ``yield from`` in a pytest fixture, so the module is dropped again afterwards."""
    spec = importlib.util.spec_from_file_location(name, ROOT / relative_path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
        yield mod
    finally:
        sys.modules.pop(name, None)
