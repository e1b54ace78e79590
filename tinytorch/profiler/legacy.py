"""PyTorch's older profiler API, ``torch.autograd.profiler``: ``profile(use_cuda=...)`` with
``table()``/``key_averages()``/``export_chrome_trace()`` on the profiler itself,
``record_function`` and ``emit_nvtx``. The same recorder as ``tinytorch.profiler`` (see its
docstring for what is recorded)."""
from __future__ import annotations

import contextlib
import warnings
from typing import Any, Iterator, Optional

from tinytorch.profiler import ProfilerActivity, profile as _profile
from tinytorch.profiler._events import EventList, FunctionEvent, FunctionEventAvg
from tinytorch.profiler._recorder import record_function


class profile:
    """Context manager that profiles the code inside it (``torch.autograd.profiler.profile``).

    Args:
        enabled (bool): with ``False`` the context manager does nothing. Default: ``True``
        use_cuda (bool): deprecated spelling of ``use_device="cuda"``.
        use_device (str, optional): ``"cuda"`` also measures each event's CUDA time.
        record_shapes (bool): record the input shapes of op calls.
        with_flops, profile_memory, with_stack, with_modules, use_kineto, use_cpu,
        experimental_config, acc_events, custom_trace_id_callback: accepted for PyTorch
            compatibility; not measured."""

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False, use_device: Optional[str] = None,
                 record_shapes: bool = False, with_flops: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_modules: bool = False, use_kineto: bool = False,
                 use_cpu: bool = True, experimental_config: Any = None, acc_events: bool = False,
                 custom_trace_id_callback: Any = None) -> None:
        self.enabled = enabled
        if use_cuda:
            warnings.warn("The attribute `use_cuda` will be deprecated soon, please use "
                          "``use_device = 'cuda'`` instead.", FutureWarning, stacklevel=2)
            use_device = "cuda"
        self.use_device = use_device
        self.record_shapes = record_shapes
        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if use_device == "cuda" else [])
        self._profiler = _profile(activities=activities, record_shapes=record_shapes) if enabled else None
        self._entered = False

    def __enter__(self) -> "profile":
        if self._profiler is not None:
            if self._entered:
                raise RuntimeError("Profiler context manager is not reentrant")
            self._entered = True
            self._profiler.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._profiler is not None:
            self._profiler.stop()

    @property
    def function_events(self) -> EventList:
        """Every recorded event (``FunctionEvent``s, by start time)."""
        if self._profiler is None:
            raise RuntimeError("Profiler didn't finish running: it was created with enabled=False")
        return self._profiler.events()

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0) -> EventList:
        return self.function_events.key_averages(group_by_input_shape, group_by_stack_n)

    def table(self, sort_by: Optional[str] = None, row_limit: int = 100, max_src_column_width: int = 75,
              max_name_column_width: int = 55, max_shapes_column_width: int = 80, header: Optional[str] = None,
              top_level_events_only: bool = False) -> str:
        """The table of every event (not averaged; ``key_averages().table()`` averages)."""
        return self.function_events.table(sort_by=sort_by, row_limit=row_limit,
                                          max_src_column_width=max_src_column_width,
                                          max_name_column_width=max_name_column_width,
                                          max_shapes_column_width=max_shapes_column_width, header=header,
                                          top_level_events_only=top_level_events_only)

    def total_average(self) -> FunctionEventAvg:
        return self.function_events.total_average()

    @property
    def self_cpu_time_total(self) -> float:
        return self.function_events.self_cpu_time_total

    def export_chrome_trace(self, path: str) -> None:
        self.function_events.export_chrome_trace(path)

    def __str__(self) -> str:
        return self.table()


@contextlib.contextmanager
def emit_nvtx(enabled: bool = True, record_shapes: bool = False) -> Iterator[None]:
    """Accepted and ignored: tinytorch emits no NVTX ranges."""
    yield


def kineto_available() -> bool:
    """False: tinytorch's profiler is not built on Kineto."""
    return False


__all__ = ["profile", "record_function", "emit_nvtx", "kineto_available", "EventList", "FunctionEvent",
           "FunctionEventAvg"]
