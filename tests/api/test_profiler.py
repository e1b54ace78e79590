"""tinytorch.profiler: record_function regions and Tensor op calls are recorded with real times and
call counts, nested per thread; key_averages().table() is PyTorch's table; the Chrome trace is
valid JSON; schedules record the steps PyTorch's do; the op hooks exist only while recording."""
import gzip
import json
import os
import threading
import time

import pytest

import tinytorch as tt
import tinytorch.profiler
from tinytorch.profiler import ProfilerAction, ProfilerActivity, profile, record_function, schedule

CPU = [ProfilerActivity.CPU]


def _row(table: str, name: str) -> list:
    """The cells of the table row whose Name is ``name``."""
    for line in table.splitlines():
        cells = line.split()
        if cells and cells[0] == name:
            return cells
    raise AssertionError(f"no row {name!r} in\n{table}")


def _us(cell: str) -> float:
    for unit, scale in (("ms", 1e3), ("us", 1.0), ("s", 1e6)):
        if cell.endswith(unit):
            return float(cell[: -len(unit)]) * scale
    raise ValueError(cell)


def _run_model(x, w, n):
    with record_function("model_inference"):
        for _ in range(n):
            with record_function("layer"):
                y = (x @ w).relu()
                y.sum()
        time.sleep(0.01)


def test_table_lists_regions_and_ops_with_call_counts():
    x, w = tt.randn(32, 32), tt.randn(32, 32)
    with profile(activities=CPU) as prof:
        _run_model(x, w, 3)
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=10)
    header = [line for line in table.splitlines() if "Name" in line][0].split("  ")
    header = [h.strip() for h in header if h.strip()]
    assert header == ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"]
    assert _row(table, "model_inference")[-1] == "1"
    assert _row(table, "layer")[-1] == "3"
    for op in ("aten::matmul", "aten::relu", "aten::sum"):
        assert _row(table, op)[-1] == "3"
    top = _row(table, "model_inference")
    assert top[3] == "100.00%"                       # the outermost region is all of the time
    assert _us(top[4]) >= 10_000                      # it slept 10 ms
    # sorted by total CPU time: model_inference first, then layer
    names = [line.split()[0] for line in table.splitlines()[3:] if line.strip() and not line.startswith("-")]
    assert names[:2] == ["model_inference", "layer"]
    assert table.rstrip().splitlines()[-1].startswith("Self CPU time total: ")


def test_times_nest_and_add_up():
    x, w = tt.randn(16, 16), tt.randn(16, 16)
    with profile(activities=CPU) as prof:
        _run_model(x, w, 2)
    events = prof.events()
    outer = [e for e in events if e.name == "model_inference"][0]
    layers = [e for e in events if e.name == "layer"]
    assert [e.cpu_parent for e in layers] == [outer, outer]
    assert all(e.cpu_parent in layers for e in events if e.name.startswith("aten::"))
    assert outer.cpu_time_total >= sum(e.cpu_time_total for e in layers) + 10_000 * 0.9
    assert outer.self_cpu_time_total == pytest.approx(outer.cpu_time_total - sum(e.cpu_time_total for e in layers))
    for e in events:
        assert 0 <= e.self_cpu_time_total <= e.cpu_time_total
        for c in e.cpu_children:
            assert e.time_range.start <= c.time_range.start and c.time_range.end <= e.time_range.end
    avg = {a.key: a for a in prof.key_averages()}
    assert avg["layer"].count == 2
    assert avg["layer"].cpu_time_total == pytest.approx(sum(e.cpu_time_total for e in layers))
    assert avg["layer"].cpu_time == pytest.approx(avg["layer"].cpu_time_total / 2)
    # every event's self time sums to the outermost event's total
    assert prof.key_averages().self_cpu_time_total == pytest.approx(outer.cpu_time_total)


def test_record_function_as_decorator_and_in_recursion():
    @record_function("fib")
    def fib(n):
        return n if n < 2 else fib(n - 1) + fib(n - 2)

    with profile(activities=CPU) as prof:
        assert fib(5) == 5
    events = [e for e in prof.events() if e.name == "fib"]
    assert len(events) == 15                          # fib(5) makes 15 calls
    assert max(_depth(e) for e in events) == 4
    assert fib(3) == 2                                # outside a profiler it just runs


def _depth(e):
    d = 0
    while e.cpu_parent is not None:
        e, d = e.cpu_parent, d + 1
    return d


def test_no_hooks_outside_a_recording_profiler():
    before = {name: tt.Tensor.__dict__[name] for name in ("add", "__matmul__", "sum", "__getitem__", "to")}
    with profile(activities=CPU):
        assert tt.Tensor.__dict__["add"] is not before["add"]      # hooked while recording
        x = tt.ones(2) + 1
    for name, fn in before.items():
        assert tt.Tensor.__dict__[name] is fn, name
    with record_function("idle"):                                  # no profiler: nothing recorded, no error
        x = x * 2
    assert x.tolist() == [4.0, 4.0]


def test_exceptions_inside_regions_are_recorded_and_propagate():
    with profile(activities=CPU) as prof:
        with pytest.raises(RuntimeError):
            with record_function("failing"):
                tt.ones(2, 3) @ tt.ones(2, 3)
    names = [e.name for e in prof.events()]
    assert "failing" in names and "aten::matmul" in names


def test_record_shapes_groups_by_input_shape():
    with profile(activities=CPU, record_shapes=True) as prof:
        for n in (4, 4, 8):
            tt.ones(n, 3) @ tt.ones(3, 2)
    plain = prof.key_averages()
    assert [(a.key, a.count) for a in plain if a.key == "aten::matmul"] == [("aten::matmul", 3)]
    grouped = {(a.key, str(a.input_shapes)): a.count for a in prof.key_averages(group_by_input_shape=True)}
    assert grouped[("aten::matmul", "[[4, 3], [3, 2]]")] == 2
    assert grouped[("aten::matmul", "[[8, 3], [3, 2]]")] == 1
    table = prof.key_averages(group_by_input_shape=True).table(sort_by="count")
    assert "Input Shapes" in table and "[[4, 3], [3, 2]]" in table


def test_sort_by_and_row_limit():
    with profile(activities=CPU) as prof:
        with record_function("slow"):
            time.sleep(0.005)
        for _ in range(4):
            with record_function("often"):
                pass
    avg = prof.key_averages()
    by_count = avg.table(sort_by="count", row_limit=1)
    assert "often" in by_count and "slow" not in by_count
    by_time = avg.table(sort_by="self_cpu_time_total", row_limit=1)
    assert "slow" in by_time and "often" not in by_time
    assert "often" in avg.table(row_limit=-1) and "slow" in str(avg)
    with pytest.raises(AttributeError):
        avg.table(sort_by="no_such_column")


def test_long_names_are_cut_to_the_column():
    name = "a_very_long_region_name_" * 4
    with profile(activities=CPU) as prof:
        with record_function(name):
            pass
    table = prof.key_averages().table(max_name_column_width=30)
    assert name[:27] + "..." in table and name not in table


def test_chrome_trace_is_valid_json(tmp_path):
    x = tt.randn(8, 8)
    with profile(activities=CPU, record_shapes=True) as prof:
        with record_function("outer"):
            (x @ x).sum()
    for path in (tmp_path / "trace.json", tmp_path / "trace.json.gz"):
        prof.export_chrome_trace(str(path))
        opener = gzip.open if str(path).endswith(".gz") else open
        with opener(path, "rt") as f:
            doc = json.load(f)
        spans = {e["name"]: e for e in doc["traceEvents"] if e["ph"] == "X"}
        assert set(spans) >= {"outer", "aten::matmul", "aten::sum"}
        outer, mm = spans["outer"], spans["aten::matmul"]
        assert outer["cat"] == "user_annotation" and mm["cat"] == "cpu_op"
        assert outer["ts"] <= mm["ts"] and mm["ts"] + mm["dur"] <= outer["ts"] + outer["dur"] + 1e-3
        assert mm["args"]["Input Dims"] == [[8, 8], [8, 8]]
        assert mm["pid"] == os.getpid() and mm["tid"] == outer["tid"]
        assert doc["displayTimeUnit"] == "ms" and doc["baseTimeNanoseconds"] > 0


def test_schedule_actions_match_torch():
    fn = schedule(skip_first=1, wait=1, warmup=1, active=2, repeat=2)
    A = ProfilerAction
    got = [fn(i) for i in range(11)]
    assert got == [A.NONE, A.NONE, A.WARMUP, A.RECORD, A.RECORD_AND_SAVE,
                   A.NONE, A.WARMUP, A.RECORD, A.RECORD_AND_SAVE, A.NONE, A.NONE]
    with pytest.raises(AssertionError):
        schedule(wait=0, warmup=0, active=0)


def test_schedule_records_active_steps_and_calls_on_trace_ready(tmp_path):
    traces = []

    def ready(p):
        traces.append([e.name for e in p.events()])

    handler = tinytorch.profiler.tensorboard_trace_handler(str(tmp_path), worker_name="w0")
    with profile(activities=CPU, schedule=schedule(wait=1, warmup=1, active=2, repeat=2),
                 on_trace_ready=lambda p: (ready(p), handler(p))) as prof:
        for step in range(8):
            with record_function(f"step_body_{step}"):
                pass
            prof.step()
    assert len(traces) == 2
    assert [n for n in traces[0] if n.startswith("ProfilerStep") or n.startswith("step_body")] == \
        ["ProfilerStep#2", "step_body_2", "ProfilerStep#3", "step_body_3"]
    assert "step_body_6" in traces[1] and "step_body_4" not in traces[1]
    assert {a.key: a.count for a in prof.key_averages()}["ProfilerStep*"] == 2
    files = sorted(os.listdir(tmp_path))
    assert len(files) == 2 and all(f.startswith("w0.") and f.endswith(".pt.trace.json") for f in files)
    with open(tmp_path / files[0]) as f:
        assert any(e["name"] == "ProfilerStep#2" for e in json.load(f)["traceEvents"])


def test_results_need_a_finished_trace():
    prof = profile(activities=CPU)
    with pytest.raises(RuntimeError, match="didn't finish"):
        prof.key_averages()
    prof.start()
    tt.ones(2).sum()
    prof.stop()
    assert "aten::sum" in prof.key_averages().table()


def test_ops_on_other_threads_are_recorded_with_their_thread():
    def work():
        with record_function("worker"):
            tt.ones(3).exp()

    with profile(activities=CPU) as prof:
        t = threading.Thread(target=work)
        t.start()
        t.join()
        with record_function("main"):
            tt.ones(3).exp()
    events = {e.name: e for e in prof.events() if e.name in ("worker", "main")}
    assert events["worker"].thread != events["main"].thread
    exps = [e for e in prof.events() if e.name == "aten::exp"]
    assert sorted(e.cpu_parent.name for e in exps) == ["main", "worker"]


def test_activities_and_legacy_profiler():
    assert ProfilerActivity.CPU in tinytorch.profiler.supported_activities()
    from tinytorch.profiler import legacy
    with legacy.profile() as prof:
        with legacy.record_function("block"):
            tt.ones(4).sqrt()
    table = prof.table(sort_by="cpu_time_total")
    assert "block" in table and "aten::sqrt" in table
    assert {a.key: a.count for a in prof.key_averages()}["aten::sqrt"] == 1
    with legacy.profile(enabled=False) as off:
        tt.ones(1).sqrt()
    with pytest.raises(RuntimeError):
        off.key_averages()


class _StandInCuda:
    """tinytorch.cuda's Event/synchronize as the profiler uses them, timing on the host clock."""

    def __init__(self):
        self.synchronized = 0
        outer = self

        class Event:
            def __init__(self, enable_timing=False):
                assert enable_timing
                self.t = None

            def record(self, stream=None):
                self.t = time.perf_counter()

            def elapsed_time(self, end):
                assert outer.synchronized, "read before the device was synchronized"
                return (end.t - self.t) * 1e3

        self.Event = Event

    def synchronize(self):
        self.synchronized += 1


def test_cuda_columns_from_device_events(monkeypatch):
    from tinytorch.profiler import _recorder
    cuda = _StandInCuda()
    monkeypatch.setattr(_recorder, "_cuda", lambda: cuda)
    monkeypatch.setattr(tinytorch.profiler, "_cuda_available", lambda: True)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        with record_function("block"):
            tt.ones(64, 64) @ tt.ones(64, 64)
            time.sleep(0.005)
    assert cuda.synchronized >= 2          # at the region's end, and before reading the events
    table = prof.key_averages().table(sort_by="cuda_time_total")
    header = [line for line in table.splitlines() if "Name" in line][0]
    for column in ("Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg", "# of Calls"):
        assert column in header
    assert "Self CUDA time total: " in table
    avg = {a.key: a for a in prof.key_averages()}
    block, mm = avg["block"], avg["aten::matmul"]
    assert block.device_time_total >= 5000 and 0 < mm.device_time_total < block.device_time_total
    assert block.self_device_time_total == pytest.approx(block.device_time_total - mm.device_time_total)
    assert block.cuda_time_total == block.device_time_total
    assert table.splitlines()[3].split()[0] == "block"


@pytest.mark.cuda
def test_cuda_activity_measures_device_time():
    x = tt.randn(512, 512, device="cuda")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        with record_function("gpu_block"):
            for _ in range(5):
                x = x @ x / 512
    table = prof.key_averages().table(sort_by="cuda_time_total")
    assert "CUDA total" in table and "Self CUDA time total" in table
    avg = {a.key: a for a in prof.key_averages()}
    assert avg["aten::matmul"].device_time_total > 0
    assert avg["gpu_block"].device_time_total >= avg["aten::matmul"].device_time_total * 0.99
