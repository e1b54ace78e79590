"""Every test under tests/distributed gets the ``dist`` marker."""
from __future__ import annotations

import os

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def pytest_collection_modifyitems(config, items):
    for item in items:
        if str(item.fspath).startswith(HERE):
            item.add_marker(pytest.mark.dist)
