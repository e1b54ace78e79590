"""demo/post_train.py with --device cuda on tiny configs: LoRA-DPO on a tiny Llama and GRPO on the
arithmetic task run on the GPU (sampling with tinytorch.multinomial there) and learn as on the CPU."""
import math

import numpy as np
import pytest
from support.script_loader import loaded

pytestmark = pytest.mark.cuda


@pytest.fixture(scope="module")
def demo():
    yield from loaded("demo/post_train.py", "post_train_demo_cuda")


def test_dpo_tiny_on_cuda(demo, tmp_path):
    r = demo.main(["dpo", "--tiny", "--tiny-hidden", "32", "--steps", "12", "--lr", "2e-3", "--no-progress",
                   "--device", "cuda", "--out", str(tmp_path / "a.safetensors")])
    losses, margins = [h[1] for h in r["history"]], [h[2] for h in r["history"]]
    assert losses[0] == pytest.approx(math.log(2), abs=1e-3)
    assert np.mean(losses[-4:]) < losses[0] - 0.05 and np.mean(margins[-4:]) > 0.1
    assert r["train"]["accuracy"] >= 0.9 and (tmp_path / "a.safetensors").exists()


def test_grpo_tiny_on_cuda(demo):
    r = demo.main(["grpo", "--hidden", "32", "--pretrain-steps", "300", "--steps", "40", "--group-size", "6",
                   "--lr", "2e-3", "--no-progress", "--device", "cuda"])
    assert r["end_accuracy"] > r["start_accuracy"] + 0.1
    assert r["last_reward"] > r["first_reward"] + 0.05
