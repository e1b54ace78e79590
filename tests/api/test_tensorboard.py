"""tinytorch.utils.tensorboard: SummaryWriter writes event files that TensorBoard's own reader reads
back (scalars, grouped scalars, histograms, text); without the tensorboard package the import fails
with PyTorch's ImportError."""
import importlib
import os
import sys
import types

import numpy as np
import pytest

import tinytorch as tt


def _drop_cached_modules(monkeypatch):
    for name in list(sys.modules):
        if name.startswith("tinytorch.utils.tensorboard"):
            monkeypatch.delitem(sys.modules, name)


def test_import_error_without_tensorboard(monkeypatch):
    _drop_cached_modules(monkeypatch)
    monkeypatch.setitem(sys.modules, "tensorboard", None)     # `import tensorboard` now fails
    with pytest.raises(ImportError, match="TensorBoard logging requires TensorBoard version 1.15 or above"):
        importlib.import_module("tinytorch.utils.tensorboard")


def test_import_error_with_old_tensorboard(monkeypatch):
    _drop_cached_modules(monkeypatch)
    old = types.ModuleType("tensorboard")
    old.__version__ = "1.14.0"
    monkeypatch.setitem(sys.modules, "tensorboard", old)
    with pytest.raises(ImportError, match="TensorBoard logging requires TensorBoard version 1.15 or above"):
        importlib.import_module("tinytorch.utils.tensorboard")


def _events(log_dir):
    """Every event of the event files directly in log_dir, in order."""
    from tensorboard.backend.event_processing.event_file_loader import LegacyEventFileLoader
    files = sorted(f for f in os.listdir(log_dir) if f.startswith("events.out.tfevents"))
    assert files, os.listdir(log_dir)
    out = []
    for f in files:
        out.extend(LegacyEventFileLoader(os.path.join(log_dir, f)).Load())   # the events as written
    return out


def _values(events, tag):
    return [(e.step, v) for e in events if e.HasField("summary") for v in e.summary.value if v.tag == tag]


def test_summary_writer_writes_readable_event_files(tmp_path):
    pytest.importorskip("tensorboard")
    from tinytorch.utils.tensorboard import SummaryWriter
    log_dir = str(tmp_path / "run")
    values = np.random.default_rng(0).normal(size=1000)
    with SummaryWriter(log_dir) as w:
        assert w.get_logdir() == log_dir
        for step in range(3):
            w.add_scalar("loss", tt.tensor(1.0 / (step + 1)), step)
        w.add_scalar("lr", 0.125, 7, walltime=1234.5)
        w.add_scalars("acc", {"train": 0.5, "val": tt.tensor([0.25])}, 1)
        w.add_histogram("weights", tt.tensor(values), 2)
        w.add_histogram("w16", tt.tensor(values).half(), 2, bins=10)
        w.add_text("notes", "hello **tensorboard**", 4)
    events = _events(log_dir)
    assert events[0].file_version == "brain.Event:2"
    loss = _values(events, "loss")
    assert [s for s, _ in loss] == [0, 1, 2]
    np.testing.assert_allclose([v.simple_value for _, v in loss], [1.0, 0.5, 1 / 3], rtol=1e-7)
    (lr_event,) = [e for e in events if any(v.tag == "lr" for v in e.summary.value)]
    assert lr_event.step == 7 and lr_event.wall_time == 1234.5 and lr_event.summary.value[0].simple_value == 0.125

    ((_, hist),) = _values(events, "weights")
    h = hist.histo
    assert h.num == 1000 and h.min == values.min() and h.max == values.max()
    assert h.sum == pytest.approx(values.sum()) and h.sum_squares == pytest.approx(values @ values)
    assert sum(h.bucket) == 1000 and len(h.bucket) == len(h.bucket_limit)
    assert list(h.bucket_limit) == sorted(h.bucket_limit)
    ((_, hist16),) = _values(events, "w16")
    assert hist16.histo.num == 1000 and sum(hist16.histo.bucket) == 1000 and len(hist16.histo.bucket) <= 11

    ((step, text),) = _values(events, "notes/text_summary")
    assert step == 4 and text.metadata.plugin_data.plugin_name == "text"
    assert text.tensor.string_val == [b"hello **tensorboard**"]

    # add_scalars: one run directory per key, the values under the main tag
    for key, expected in (("train", 0.5), ("val", 0.25)):
        sub = os.path.join(log_dir, f"acc_{key}")
        ((s, v),) = _values(_events(sub), "acc")
        assert s == 1 and v.simple_value == expected


def test_summary_writer_flush_close_and_reopen(tmp_path):
    pytest.importorskip("tensorboard")
    from tinytorch.utils.tensorboard import SummaryWriter
    w = SummaryWriter(str(tmp_path), flush_secs=3600)
    w.add_scalar("x", 1.0, 0)
    w.flush()                                          # on disk before close
    assert [s for s, _ in _values(_events(str(tmp_path)), "x")] == [0]
    w.close()
    w.close()                                          # closing twice is harmless
    w.add_scalar("x", 2.0, 1)                          # a new event file after close
    w.close()
    assert sorted(v.simple_value for _, v in _values(_events(str(tmp_path)), "x")) == [1.0, 2.0]
    with pytest.raises(AssertionError, match="one element"):
        SummaryWriter(str(tmp_path / "bad")).add_scalar("y", tt.ones(3), 0)


def test_purge_step_and_default_log_dir(tmp_path, monkeypatch):
    pytest.importorskip("tensorboard")
    from tensorboard.compat.proto.event_pb2 import SessionLog
    from tinytorch.utils.tensorboard import SummaryWriter
    with SummaryWriter(str(tmp_path), purge_step=5) as w:
        w.add_scalar("x", 1.0, 5)
    starts = [e for e in _events(str(tmp_path)) if e.HasField("session_log")]
    assert starts and starts[0].step == 5 and starts[0].session_log.status == SessionLog.START
    monkeypatch.chdir(tmp_path)
    with SummaryWriter(comment="_exp") as w:
        assert w.get_logdir().startswith("runs" + os.sep) and w.get_logdir().endswith("_exp")
