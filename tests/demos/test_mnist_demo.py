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


def _load_demo():
    spec = importlib.util.spec_from_file_location("mnist_demo", DEMO)
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)
    return demo


def test_mnist_demo_every_option_has_help(capsys):
    parser = _load_demo().build_parser()
    options = [a for a in parser._actions if a.option_strings]
    assert len(options) >= 14 and any("--no-progress" in a.option_strings for a in options)
    for a in options:
        assert a.help, f"{a.option_strings} has no help text"
    with pytest.raises(SystemExit):
        parser.parse_args(["--help"])
    assert "--no-progress" in capsys.readouterr().out


def test_mnist_demo_plot_without_matplotlib_fails_before_training(monkeypatch, capsys):
    demo = _load_demo()
    monkeypatch.setitem(__import__("sys").modules, "matplotlib", None)     # import matplotlib -> ImportError
    monkeypatch.setattr(demo, "datasets", lambda args: pytest.fail("training started"))
    with pytest.raises(SystemExit) as e:
        demo.main(["--plot", "loss.png"])
    assert e.value.code == 2 and "--plot needs matplotlib" in capsys.readouterr().err


@pytest.mark.skipif(not (DEMO.parent / "data" / "mnist" / "train-images-idx3-ubyte.gz").exists(),
                    reason="MNIST data not present")
def test_mnist_demo_no_progress_prints_log_lines(tmp_path, monkeypatch, capsys):
    demo = _load_demo()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(__import__("sys").modules, "tqdm", None)           # a progress bar would fail
    demo.main(["--device", "cpu", "--train-limit", "640", "--test-limit", "100", "--log-interval", "5",
               "--no-progress"])
    out = capsys.readouterr().out
    assert out.count("Train Epoch: 1 [") == 2 and "Loss: " in out and "Test set:" in out
