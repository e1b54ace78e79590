"""bench/'s shared machinery: which tinytorch a bench imports (bench/_harness.py), gpt_bench's
shapes (per-preset vocabulary, torch.compile default) and llm_bench's llama.cpp runner."""
from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"


@pytest.fixture
def bench(monkeypatch):
    """Imports bench modules by name (as ``python bench/X.py`` does); sys.path and the modules are
    restored afterwards."""
    monkeypatch.syspath_prepend(str(BENCH))
    before = set(sys.modules)
    yield importlib.import_module
    for name in set(sys.modules) - before:
        if name in ("_harness", "gpt_bench", "llm_bench") or name.startswith("gpt_demo_"):
            sys.modules.pop(name)


def _root_on_path(pythonpath: str | None) -> bool:
    """Whether the repository root is still on sys.path after ``import _harness``, in a process
    started from the root with '' (the working directory) first on sys.path, as ``python -c`` has."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    code = ("import os, sys; sys.path.insert(0, 'bench'); import _harness; "
            f"print(any(os.path.realpath(p or '.') == {str(ROOT)!r} for p in sys.path))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip() == "True"


def test_harness_drops_source_tree_unless_pythonpath_names_it():
    assert _root_on_path(None) is False
    assert _root_on_path(str(ROOT)) is True


def test_benches_put_only_their_own_folder_on_sys_path():
    for path in sorted(BENCH.glob("*.py")):
        inserted = re.findall(r"sys\.path\.insert\(\d+, (.*)\)$", path.read_text(encoding="utf-8"), re.M)
        assert set(inserted) <= {"os.path.dirname(os.path.abspath(__file__))"}, (path.name, inserted)


def test_load_script_names_the_missing_text(bench):
    harness = bench("_harness")
    with pytest.raises(ValueError, match=r"demo/gpt.py has no 'import nothing'"):
        harness.load_script("demo/gpt.py", "gpt_demo_bad", {"import nothing": ""})
    patched = harness.load_script("demo/gpt.py", "gpt_demo_check", {"block_size: int = 64": "block_size: int = 7"})
    assert patched.GPTConfig(vocab_size=3).block_size == 7


def test_gpt_bench_shapes(bench):
    gpt_bench = bench("gpt_bench")
    presets = gpt_bench.load_demo("tinytorch").PRESETS
    gpt2 = gpt_bench.parse_args(["--preset", "gpt2", "--device", "cuda"], presets)
    assert (gpt2.vocab_size, gpt2.batch_size, gpt2.block_size, gpt2.compile) == (50304, 8, 1024, True)
    assert gpt_bench.parse_args(["--preset", "gpt2"], presets).compile is False  # cpu: opt-in
    assert gpt_bench.parse_args(["--preset", "gpt2", "--device", "cuda", "--no-compile"], presets).compile is False
    cpu = gpt_bench.parse_args(["--vocab-size", "50304", "--batch-size", "4", "--compile"], presets)
    assert (cpu.vocab_size, cpu.batch_size, cpu.block_size, cpu.compile) == (50304, 4, 64, True)
    assert gpt_bench.parse_args([], presets).vocab_size == 65
    with pytest.raises(SystemExit):
        gpt_bench.parse_args(["--vocab-size", "0"], presets)


def test_gpt_bench_prints_the_gpt2_shape():
    env = dict(os.environ)   # the tinytorch the tests run against (installed, or PYTHONPATH for a dev build)
    out = subprocess.run([sys.executable, "bench/gpt_bench.py", "--preset", "gpt2", "--batch-size", "1",
                          "--block-size", "8", "--steps", "1", "--rounds", "1", "--no-compile"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    # GPT-2 small's 124.5M parameters with 8 positions instead of 1024: 124.48M - 1016 * 768
    assert ("GPT gpt2 training step: 12 layers, 12 heads, width 768, vocab 50304, 1x8 tokens, float32, cpu, "
            "2 threads; 123.7M parameters") in out.stdout, out.stdout


def _fake_llama_bench(tmp_path: Path, body: str) -> str:
    exe = tmp_path / "llama-bench"
    exe.write_text("#!/bin/sh\n" + body + "\n")
    exe.chmod(0o755)
    return str(exe)


def test_llama_bench_run_reads_its_json(bench, tmp_path):
    llm_bench = bench("llm_bench")
    exe = _fake_llama_bench(tmp_path, """echo "$@" > %s/args
echo '[{"n_prompt": 512, "n_gen": 0, "avg_ts": 1234.5}]'""" % tmp_path)
    assert llm_bench.llama_bench_run(exe, "m.gguf", 2, 512, 0)() == 1234.5
    assert (tmp_path / "args").read_text().split() == ["-m", "m.gguf", "-t", "2", "-p", "512", "-n", "0", "-r", "1",
                                                       "-o", "json"]
    with pytest.raises(RuntimeError, match="no single -p 0 -n 64 result"):
        llm_bench.llama_bench_run(exe, "m.gguf", 2, 0, 64)()
    failing = _fake_llama_bench(tmp_path, "echo 'bad model' >&2; exit 3")
    with pytest.raises(RuntimeError, match=r"exited 3(.|\n)*bad model"):
        llm_bench.llama_bench_run(failing, "m.gguf", 1, 512, 0)()


def test_llama_cpp_load_reads_the_log_timestamps(bench, tmp_path):
    llm_bench = bench("llm_bench")
    exe = _fake_llama_bench(tmp_path, "exit 0")
    (tmp_path / "llama-completion").write_text("""#!/bin/sh
echo '0.00.002.500 I llama_completion: load the model and apply lora adapter, if any' >&2
echo '0.00.130.000 I llama_context: constructing llama_context' >&2
echo '0.01.000.500 I system_info: n_threads = 1' >&2
""")
    (tmp_path / "llama-completion").chmod(0o755)
    got = llm_bench.llama_cpp_load(exe, "m.gguf", 1, 3)
    assert got["llama.cpp load"] == pytest.approx(0.1275)
    assert got["llama.cpp ready"] == pytest.approx(0.998)
    assert 0 < got["llama.cpp process"] < 10
    (tmp_path / "llama-completion").write_text("#!/bin/sh\necho 'no timestamps here'\n")
    with pytest.raises(RuntimeError, match="logged no 'load the model"):
        llm_bench.llama_cpp_load(exe, "m.gguf", 1, 1)
