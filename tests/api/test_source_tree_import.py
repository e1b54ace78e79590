"""Importing tinytorch from a source tree without its compiled extensions (e.g. `python -m ...` from
the repository root, where the current directory comes first on sys.path) raises one clear
ImportError that says what to do, instead of "cannot import name '_C' from partially initialized
module"."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import tinytorch


def _python_files_only(d: str, names: list[str]) -> list[str]:
    return [n for n in names if n == "__pycache__" or not (n.endswith(".py") or os.path.isdir(os.path.join(d, n)))]


def test_source_tree_without_extensions_says_what_to_do(tmp_path):
    src = os.path.dirname(tinytorch.__file__)
    shutil.copytree(src, tmp_path / "tinytorch", ignore=_python_files_only)
    assert not [f for _, _, fs in os.walk(tmp_path) for f in fs if not f.endswith(".py")]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # `python -c` puts the current directory first on sys.path: the copy shadows the installed package
    p = subprocess.run([sys.executable, "-c", "import tinytorch"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode != 0
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError: you are importing tinytorch from its source tree"), p.stderr
    assert "without its compiled extensions" in last and "pip install ." in last and "dev_link.sh" in last
    assert str(tmp_path / "tinytorch") in last
    assert "During handling" not in p.stderr and "partially initialized" not in p.stderr, p.stderr
