"""demo/gpt.py, tiny: a few steps train, checkpoint, resume, sample; BitLinear and Chuck variants."""
import math

import pytest
from support.script_loader import loaded

TINY = ["--n-layer", "1", "--n-embd", "32", "--n-head", "2", "--block-size", "16", "--batch-size", "8",
        "--eval-iters", "2", "--sample-len", "24", "--samples", "1", "--no-progress", "--device", "cpu",
        "--warmup", "2", "--lr", "1e-2"]


@pytest.fixture(scope="module")
def demo():
    yield from loaded("demo/gpt.py", "gpt_demo")


def test_gpt_demo_trains_checkpoints_resumes_and_samples(demo, tmp_path):
    out = str(tmp_path / "run")
    r = demo.main(TINY + ["--max-steps", "24", "--eval-interval", "12", "--out-dir", out, "--grad-accum", "2"])
    assert r["step"] == 24 and [h[0] for h in r["history"]] == [12, 24]
    first_val, last_val = r["history"][0][2], r["history"][-1][2]
    assert last_val < math.log(65) - 0.5  # learnt the character frequencies at least
    assert last_val < first_val + 0.1
    assert len(r["samples"]) == 1 and len(r["samples"][0]) == 24
    assert (tmp_path / "run" / "ckpt.safetensors").exists()
    r2 = demo.main(TINY + ["--max-steps", "27", "--eval-interval", "3", "--out-dir", out, "--resume"])
    assert r2["step"] == 27 and [h[0] for h in r2["history"]] == [12, 24, 27]
    with pytest.raises(ValueError, match="config"):
        demo.main(["--n-layer", "2"] + TINY[2:] + ["--max-steps", "28", "--out-dir", out, "--resume"])


@pytest.mark.parametrize("extra", [["--bitlinear"], ["--optimizer", "chuck"]])
def test_gpt_demo_variants_run(demo, tmp_path, extra):
    r = demo.main(TINY + ["--max-steps", "4", "--eval-interval", "4", "--out-dir", str(tmp_path)] + extra)
    assert r["step"] == 4 and math.isfinite(r["history"][-1][2])


def test_gpt_demo_plot_needs_matplotlib(demo, tmp_path, monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_matplotlib(name, *a, **k):
        if name == "matplotlib":
            raise ImportError("no matplotlib")
        return real_import(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_matplotlib)
    with pytest.raises(SystemExit):
        demo.main(TINY + ["--max-steps", "1", "--plot", str(tmp_path / "loss.png")])
