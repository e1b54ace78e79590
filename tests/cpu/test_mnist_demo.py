"""The MNIST demo, short: a few hundred training steps reach > 90% on a test subset."""
import importlib.util
from pathlib import Path

import pytest

DEMO = Path(__file__).resolve().parents[2] / "demo" / "mnist.py"


@pytest.mark.skipif(not (DEMO.parent / "data" / "mnist" / "train-images-idx3-ubyte.gz").exists(),
                    reason="MNIST data not present")
def test_mnist_demo_short_run_learns(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("mnist_demo", DEMO)
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)
    monkeypatch.chdir(tmp_path)
    # 300 steps of 64 images, then 2000 test images; --plot exercises the optional curve
    accuracy = demo.main(["--device", "cpu", "--train-limit", "19200", "--test-limit", "2000",
                          "--log-interval", "50", "--save-model"])
    assert accuracy > 0.90
    assert (tmp_path / "mnist_cnn.pt").exists()
