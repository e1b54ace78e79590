"""Real PyTorch programs, unmodified (tests/programs/vendor/, under their licences), run as their
authors run them: from a fresh directory, in a child interpreter, with ``import torch`` served by
the installed tinytorch (run_as_torch.py), at a small setting on their own data format."""
import math
import pickle
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
RUN_AS_TORCH = HERE / "run_as_torch.py"


def run(args, cwd, timeout=300):
    r = subprocess.run([sys.executable, str(RUN_AS_TORCH), *map(str, args)], cwd=cwd, capture_output=True,
                       text=True, timeout=timeout)
    assert r.returncode == 0, f"{args} failed ({r.returncode}):\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r.stdout + r.stderr


def test_torch_is_tinytorch(tmp_path):
    (tmp_path / "probe.py").write_text(
        "import torch, torch.nn as nn, torch.nn.functional as F, tinytorch\n"
        "from torch.nn.parallel import DistributedDataParallel\n"
        "assert torch is tinytorch and nn is tinytorch.nn and F is tinytorch.nn.functional\n"
        "assert nn.Module is tinytorch.nn.Module and DistributedDataParallel is tinytorch.nn.parallel.DistributedDataParallel\n"
        "print('torch is tinytorch')\n")
    assert "torch is tinytorch" in run(["probe.py"], tmp_path)


def test_micrograd_own_torch_comparison_tests(tmp_path):
    """micrograd's test/test_engine.py: its scalar engine against torch's tensors, forward and gradients."""
    shutil.copytree(HERE / "vendor" / "micrograd", tmp_path / "micrograd")
    out = run(["-m", "pytest", "-q", "-p", "no:cacheprovider", "test"], tmp_path / "micrograd")
    assert re.search(r"\b2 passed\b", out), out


def _char_dataset(root: Path) -> int:
    """nanoGPT's shakespeare_char layout (data/<name>/{train,val}.bin as uint16, meta.pkl) over this
    repository's README."""
    text = (HERE.parents[1] / "README.md").read_text() * 3
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    ids = np.array([stoi[c] for c in text], dtype=np.uint16)
    n = int(0.9 * len(ids))
    (root / "data" / "tiny").mkdir(parents=True)
    ids[:n].tofile(root / "data" / "tiny" / "train.bin")
    ids[n:].tofile(root / "data" / "tiny" / "val.bin")
    with open(root / "data" / "tiny" / "meta.pkl", "wb") as f:
        pickle.dump({"vocab_size": len(chars), "itos": {i: c for c, i in stoi.items()}, "stoi": stoi}, f)
    return len(chars)


def _losses(out: str) -> dict:
    return {int(s): (float(tr), float(va)) for s, tr, va in
            re.findall(r"step (\d+): train loss ([\d.]+), val loss ([\d.]+)", out)}


def test_nanogpt_trains_checkpoints_and_resumes(tmp_path):
    """nanoGPT's train.py on CPU (its configurator's --key=value overrides): the loss starts at
    ln(vocab) and falls; the checkpoint (torch.save of the model, optimizer and config) resumes."""
    shutil.copytree(HERE / "vendor" / "nanogpt", tmp_path / "nanogpt")
    cwd = tmp_path / "nanogpt"
    vocab = _char_dataset(cwd)
    common = ["--dataset=tiny", "--device=cpu", "--compile=False", "--dtype=float32", "--eval_interval=10",
              "--eval_iters=4", "--log_interval=5", "--block_size=32", "--batch_size=8", "--n_layer=2", "--n_head=2",
              "--n_embd=32", "--warmup_iters=2", "--dropout=0.0", "--learning_rate=3e-3", "--out_dir=out"]
    out = run(["train.py", *common, "--max_iters=30", "--lr_decay_iters=40"], cwd)
    assert f"found vocab_size = {vocab}" in out
    losses = _losses(out)
    assert sorted(losses) == [0, 10, 20, 30], out
    assert abs(losses[0][0] - math.log(vocab)) < 0.1, losses      # an untrained model is uniform over the vocabulary
    assert losses[30][0] < losses[0][0] - 0.5 and losses[30][1] < losses[0][1] - 0.5, losses
    assert (cwd / "out" / "ckpt.pt").exists()

    out = run(["train.py", *common, "--max_iters=40", "--lr_decay_iters=40", "--init_from=resume"], cwd)
    assert "Resuming training from out" in out
    resumed = _losses(out)
    assert sorted(resumed) == [30, 40], out                        # continues at the checkpoint's iteration
    assert abs(resumed[30][0] - losses[30][0]) < 0.05, (losses, resumed)   # the same weights (another eval batch)
