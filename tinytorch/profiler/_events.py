"""The profiler's results, as ``torch.autograd.profiler_util``: ``FunctionEvent`` (one recorded
region or op call), ``FunctionEventAvg`` (the events of one name summed), and ``EventList`` with
``table()``, ``key_averages()`` and ``export_chrome_trace()``. Times are in microseconds."""
from __future__ import annotations

import gzip
import json
import os
from typing import Any, Dict, List, Optional, Tuple


class Interval:
    """A [start, end] time range in microseconds."""

    def __init__(self, start: float, end: float) -> None:
        self.start, self.end = start, end

    def elapsed_us(self) -> float:
        return self.end - self.start

    def __repr__(self) -> str:
        return f"Interval(start={self.start}, end={self.end})"


class _Unmeasured:
    """PyTorch's memory and FLOP fields, 0: tinytorch's profiler doesn't measure them (sorting a
    table by them works and keeps the order)."""
    cpu_memory_usage = self_cpu_memory_usage = 0
    device_memory_usage = self_device_memory_usage = 0
    cuda_memory_usage = self_cuda_memory_usage = 0
    flops = 0


class FunctionEvent(_Unmeasured):
    """One call of a ``record_function`` region or an op, on one thread.

    ``cpu_time_total`` is its wall time on the host; ``device_time_total`` (alias
    ``cuda_time_total``) the time the CUDA stream spent between its start and end, measured with
    CUDA events when the profiler records ``ProfilerActivity.CUDA`` (0 otherwise). The ``self_``
    times exclude the event's children (the events nested inside it on the same thread)."""

    def __init__(self, id: int, name: str, thread: int, start_us: float, end_us: float, *,
                 category: str = "cpu_op", input_shapes: Optional[List[list]] = None,
                 device_time_us: float = 0.0) -> None:
        self.id = id
        self.name = name
        self.thread = thread
        self.time_range = Interval(start_us, end_us)
        self.category = category          # chrome trace "cat": cpu_op or user_annotation
        self.input_shapes = input_shapes
        self.device_time_total = device_time_us
        self.cpu_children: List["FunctionEvent"] = []
        self.cpu_parent: Optional["FunctionEvent"] = None
        self.count = 1

    @property
    def key(self) -> str:
        return self.name

    @property
    def cpu_time_total(self) -> float:
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def self_device_time_total(self) -> float:
        return max(0.0, self.device_time_total - sum(c.device_time_total for c in self.cpu_children))

    cpu_time = cpu_time_total
    device_time = property(lambda self: self.device_time_total)
    cuda_time_total = property(lambda self: self.device_time_total)
    self_cuda_time_total = property(lambda self: self.self_device_time_total)
    cuda_time = device_time

    def __repr__(self) -> str:
        return (f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} "
                f"cpu_time_total={self.cpu_time_total:.3f}us device_time_total={self.device_time_total:.3f}us "
                f"input_shapes={self.input_shapes}>")


class FunctionEventAvg(_Unmeasured):
    """The events of one key (name, and input shapes when grouped by them) added together:
    ``count`` calls, total and self times, and their averages (``cpu_time``, ``device_time``)."""

    def __init__(self, key: str, input_shapes: Optional[List[list]] = None) -> None:
        self.key = key
        self.input_shapes = input_shapes
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.device_time_total = 0.0
        self.self_device_time_total = 0.0
        self.cpu_parent = None            # averages are never children: a table of them is "top level"

    def add(self, other: Any) -> "FunctionEventAvg":
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.device_time_total += other.device_time_total
        self.self_device_time_total += other.self_device_time_total
        return self

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / self.count if self.count else 0.0

    @property
    def device_time(self) -> float:
        return self.device_time_total / self.count if self.count else 0.0

    cuda_time = device_time
    cuda_time_total = property(lambda self: self.device_time_total)
    self_cuda_time_total = property(lambda self: self.self_device_time_total)

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} count={self.count} cpu_time_total={self.cpu_time_total:.3f}us "
                f"self_cpu_time_total={self.self_cpu_time_total:.3f}us "
                f"device_time_total={self.device_time_total:.3f}us "
                f"input_shapes={self.input_shapes}>")


def _format_time(time_us: float) -> str:
    """PyTorch's table format: 1.234s, 1.234ms or 1.234us."""
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_share(time_us: float, total_us: float) -> str:
    return "NaN" if total_us == 0 else f"{time_us * 100.0 / total_us:.2f}%"


def _average_key(name: str) -> str:
    # every profiler step is one row, as PyTorch's key_averages ("ProfilerStep*")
    return "ProfilerStep*" if name.startswith("ProfilerStep#") else name


_SORT_ALIASES = {"cuda": "device", "gpu": "device"}


class EventList(list):
    """A list of ``FunctionEvent`` (``prof.events()``) or ``FunctionEventAvg``
    (``prof.key_averages()``), printed as PyTorch's profiler table."""

    def __init__(self, *args: Any, with_device: bool = False, trace_start_ns: int = 0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._with_device = with_device
        self._trace_start_ns = trace_start_ns

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shapes: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> "EventList":
        """The events averaged by name (and by input shapes with ``group_by_input_shapes``), in the
        order each key first appears."""
        stats: Dict[Tuple, FunctionEventAvg] = {}
        for e in self:
            shapes = e.input_shapes if group_by_input_shapes else None
            key = (_average_key(e.key), str(shapes) if group_by_input_shapes else None)
            if key not in stats:
                stats[key] = FunctionEventAvg(key[0], shapes)
            stats[key].add(e)
        return EventList(stats.values(), with_device=self._with_device, trace_start_ns=self._trace_start_ns)

    def total_average(self) -> FunctionEventAvg:
        total = FunctionEventAvg("Total")
        for e in self:
            total.add(e)
        return total

    def table(self, sort_by: Optional[str] = None, row_limit: int = 100, max_src_column_width: int = 75,
              max_name_column_width: int = 55, max_shapes_column_width: int = 80, header: Optional[str] = None,
              top_level_events_only: bool = False) -> str:
        """The events as a text table (PyTorch's columns: Name, Self CPU %, Self CPU, CPU total %,
        CPU total, CPU time avg, the same for CUDA when device time was recorded, # of Calls, and
        Input Shapes when the events carry them), sorted by ``sort_by`` (an attribute such as
        ``"cpu_time_total"`` or ``"self_cuda_time_total"``, largest first), at most ``row_limit``
        rows (all of them when it is negative)."""
        return _build_table(self, sort_by=sort_by, row_limit=row_limit, max_name_column_width=max_name_column_width,
                            max_shapes_column_width=max_shapes_column_width, header=header,
                            top_level_events_only=top_level_events_only, with_device=self._with_device)

    def __str__(self) -> str:
        return self.table()

    def export_chrome_trace(self, path: str) -> None:
        """Writes the events as a Chrome trace (JSON, gzip-compressed when ``path`` ends in
        ``.gz``), for chrome://tracing or Perfetto."""
        write_chrome_trace(path, [e for e in self if isinstance(e, FunctionEvent)], self._trace_start_ns)


def _build_table(events: EventList, *, sort_by: Optional[str], row_limit: int, max_name_column_width: int,
                 max_shapes_column_width: int, header: Optional[str], top_level_events_only: bool,
                 with_device: bool) -> str:
    if not events:
        return ""
    rows = list(events)
    if sort_by is not None:
        attr = sort_by
        for old, new in _SORT_ALIASES.items():
            attr = attr.replace(old, new)
        rows.sort(key=lambda e: getattr(e, attr), reverse=True)
    if top_level_events_only:
        rows = [e for e in rows if e.cpu_parent is None]
    if row_limit is not None and row_limit >= 0:
        rows = rows[:row_limit]
    has_shapes = any(e.input_shapes for e in rows)
    sum_self_cpu = sum(e.self_cpu_time_total for e in events)
    sum_self_device = sum(e.self_device_time_total for e in events)

    name_width = min(max(len(e.key) for e in rows) + 4, max_name_column_width)
    columns = [("Name", name_width), ("Self CPU %", 12), ("Self CPU", 12), ("CPU total %", 12), ("CPU total", 12),
               ("CPU time avg", 12)]
    if with_device:
        columns += [("Self CUDA", 12), ("Self CUDA %", 12), ("CUDA total", 12), ("CUDA time avg", 12)]
    columns += [("# of Calls", 12)]
    shapes_width = 0
    if has_shapes:
        shapes_width = min(max(len(str(e.input_shapes)) for e in rows) + 4, max_shapes_column_width)
        columns += [("Input Shapes", shapes_width)]

    def line(cells: List[str]) -> str:
        return "".join(f"{c:>{w}}  " for c, (_, w) in zip(cells, columns))

    def clip(text: str, width: int) -> str:
        return text if len(text) <= width else text[: width - 3] + "..."

    sep = "".join("-" * w + "  " for _, w in columns)
    out = []
    if header is not None:
        out += ["=" * len(sep), header]
    out += [sep, line([c for c, _ in columns]), sep]
    for e in rows:
        cells = [clip(e.key, name_width),
                 _format_share(e.self_cpu_time_total, sum_self_cpu), _format_time(e.self_cpu_time_total),
                 _format_share(e.cpu_time_total, sum_self_cpu), _format_time(e.cpu_time_total),
                 _format_time(e.cpu_time_total / e.count if e.count else 0.0)]
        if with_device:
            cells += [_format_time(e.self_device_time_total), _format_share(e.self_device_time_total, sum_self_device),
                      _format_time(e.device_time_total),
                      _format_time(e.device_time_total / e.count if e.count else 0.0)]
        cells.append(str(e.count))
        if has_shapes:
            cells.append(clip(str(e.input_shapes or []), shapes_width))
        out.append(line(cells))
    out.append(sep)
    out.append(f"Self CPU time total: {_format_time(sum_self_cpu)}")
    if with_device:
        out.append(f"Self CUDA time total: {_format_time(sum_self_device)}")
    return "\n".join(out) + "\n"


def write_chrome_trace(path: str, events: List[FunctionEvent], trace_start_ns: int) -> None:
    """The Chrome trace-event JSON of ``events``: one complete ("X") event each, ``ts``/``dur``
    in microseconds from the trace's start (``baseTimeNanoseconds`` is that start on the wall
    clock), the op's input shapes under ``args["Input Dims"]`` when recorded."""
    pid = os.getpid()
    trace: List[Dict[str, Any]] = [{"name": "process_name", "ph": "M", "ts": 0, "pid": pid, "tid": 0,
                                    "args": {"name": "python"}}]
    for e in events:
        args: Dict[str, Any] = {"External id": e.id}
        if e.input_shapes is not None:
            args["Input Dims"] = e.input_shapes
        if e.device_time_total:
            args["device_duration_us"] = round(e.device_time_total, 3)
        trace.append({"ph": "X", "cat": e.category, "name": e.name, "pid": pid, "tid": e.thread,
                      "ts": round(e.time_range.start, 3), "dur": round(e.cpu_time_total, 3), "args": args})
    doc = {"schemaVersion": 1, "deviceProperties": [], "traceEvents": trace, "traceName": str(path),
           "displayTimeUnit": "ms", "baseTimeNanoseconds": trace_start_ns}
    data = json.dumps(doc)
    if str(path).endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as f:
            f.write(data)
    else:
        with open(path, "w", encoding="utf-8") as f:
            f.write(data)
