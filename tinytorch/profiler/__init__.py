"""``tinytorch.profiler``: PyTorch's profiler API (``torch.profiler``) over a host-side recorder.

``profile`` records, while it is active (or in the RECORD steps of its ``schedule``):

* every ``record_function(name)`` region (context manager or decorator), and the
  ``ProfilerStep#N`` region of each step when a schedule is given;
* op calls made as ``Tensor`` methods and operators (``x.add(y)``, ``x @ w``, ``x.sum()``,
  ``x.to(...)``), named as PyTorch names them (``aten::add``, ``aten::matmul``). The op hooks are
  put on the Tensor class only while a profiler records, so unprofiled code runs at full speed;
  package functions (``tinytorch.matmul(a, b)``) and ``nn.functional``'s internals are not
  hooked and are seen as part of the regions and methods around them.

Times are host wall times (``time.perf_counter_ns``) with self times that exclude nested events.
With ``ProfilerActivity.CUDA`` on a GPU each event also measures its CUDA time with CUDA events
(the stream's time between the event's start and end, what the "CUDA total" column shows), and
``record_function`` regions synchronize the device at their end. Accepted for PyTorch
compatibility and not measured: ``profile_memory`` (no memory columns), ``with_stack``,
``with_flops``, ``with_modules``. There is no kernel-level (Kineto/CUPTI) trace: the Chrome trace
holds the host events, with each one's CUDA time in its ``args``."""
from __future__ import annotations

import enum
import os
import socket
import time
import warnings
from typing import Any, Callable, Iterable, Optional, Set

from tinytorch.profiler._events import EventList, FunctionEvent, FunctionEventAvg
from tinytorch.profiler._recorder import Trace, record_function


class ProfilerActivity(enum.Enum):
    """The activities a profiler can record (PyTorch's names); tinytorch measures CPU and CUDA."""
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    """What the profiler does at a step, as its ``schedule`` returns."""
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def _cuda_available() -> bool:
    from tinytorch import cuda
    return cuda.is_available()


def supported_activities() -> Set[ProfilerActivity]:
    """The activities this build can record: CPU, and CUDA when a GPU is available."""
    return {ProfilerActivity.CPU} | ({ProfilerActivity.CUDA} if _cuda_available() else set())


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0) -> Callable[[int], ProfilerAction]:
    """A profiler schedule: skips the first ``skip_first`` steps, then cycles through ``wait``
    idle steps, ``warmup`` steps and ``active`` recorded steps, ``repeat`` times (forever when
    0); the last active step of a cycle is RECORD_AND_SAVE (``on_trace_ready`` is called after
    it). With ``skip_first_wait`` the first cycle starts without its wait steps."""
    if not (wait >= 0 and warmup >= 0 and active > 0 and repeat >= 0 and skip_first >= 0):
        raise AssertionError("Invalid profiler schedule arguments")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results")

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"step must be >= 0, got {step}")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        num_steps = wait + warmup + active
        if repeat > 0 and step / num_steps >= repeat:
            return ProfilerAction.NONE
        mod_step = step % num_steps
        if mod_step < wait:
            return ProfilerAction.NONE
        if mod_step < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod_step < num_steps - 1 else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def _default_schedule_fn(_: int) -> ProfilerAction:
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name: str, worker_name: Optional[str] = None,
                              use_gzip: bool = False) -> Callable[["profile"], None]:
    """An ``on_trace_ready`` handler that writes each trace to ``dir_name`` as
    ``{worker_name}.{time_ns}.pt.trace.json`` (``.gz`` with ``use_gzip``); ``worker_name``
    defaults to ``{hostname}_{pid}``."""

    def handler_fn(prof: "profile") -> None:
        os.makedirs(dir_name, exist_ok=True)
        name = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{name}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, file_name))

    return handler_fn


class profile:
    """Profiler context manager (``torch.profiler.profile``); see the module docstring for what
    it records.

    Args:
        activities (iterable of ProfilerActivity, optional): CPU and/or CUDA. Default: CPU, and
            CUDA when a GPU is available.
        schedule (Callable, optional): step -> ProfilerAction (see ``schedule()``); without one
            the profiler records from start to stop.
        on_trace_ready (Callable, optional): called with the profiler each time a trace is
            complete (at the end of each active cycle, and at stop).
        record_shapes (bool): record the input shapes of op calls (``Input Shapes`` column,
            ``key_averages(group_by_input_shape=True)``).
        profile_memory, with_stack, with_flops, with_modules, experimental_config,
        execution_trace_observer, acc_events, custom_trace_id_callback: accepted for PyTorch
            compatibility; not measured.
        use_cuda (bool, optional): deprecated; adds ``ProfilerActivity.CUDA``."""

    def __init__(self, *, activities: Optional[Iterable[ProfilerActivity]] = None,
                 schedule: Optional[Callable[[int], ProfilerAction]] = None,
                 on_trace_ready: Optional[Callable[["profile"], Any]] = None, record_shapes: bool = False,
                 profile_memory: bool = False, with_stack: bool = False, with_flops: bool = False,
                 with_modules: bool = False, experimental_config: Any = None, execution_trace_observer: Any = None,
                 acc_events: bool = False, use_cuda: Optional[bool] = None,
                 custom_trace_id_callback: Optional[Callable[[], str]] = None) -> None:
        chosen = set(activities) if activities else supported_activities()
        if use_cuda is not None:
            warnings.warn("The use_cuda parameter is deprecated, please use activities argument instead.",
                          FutureWarning, stacklevel=2)
            if use_cuda:
                chosen.add(ProfilerActivity.CUDA)
        self.activities = chosen
        self._with_device = ProfilerActivity.CUDA in chosen
        if self._with_device and not _cuda_available():
            warnings.warn("CUDA is not available, disabling CUDA profiling", stacklevel=2)
            self._with_device = False
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.on_trace_ready = on_trace_ready
        self.record_steps = schedule is not None
        self.schedule = schedule if schedule is not None else _default_schedule_fn
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self.step_rec_fn: Optional[record_function] = None
        self._trace: Optional[Trace] = None
        self._events: Optional[EventList] = None

    # ------------------------------------------------------------ the trace's life cycle
    def _prepare_trace(self) -> None:
        self._trace = Trace(record_shapes=self.record_shapes, with_device=self._with_device)

    def _start_trace(self) -> None:
        if self._trace is None:
            self._prepare_trace()
        self._trace.start()

    def _stop_trace(self) -> None:
        if self._trace is not None:
            self._events = self._trace.stop()
            self._trace = None

    def _trace_ready(self) -> None:
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _transit_action(self, prev: ProfilerAction, current: Optional[ProfilerAction]) -> None:
        A = ProfilerAction
        if current is None:                       # stop()
            steps = {A.WARMUP: ["start", "stop"], A.RECORD: ["stop", "ready"],
                     A.RECORD_AND_SAVE: ["stop", "ready"]}.get(prev, [])
        elif (prev == current and prev != A.RECORD_AND_SAVE) or (prev, current) == (A.RECORD, A.RECORD_AND_SAVE):
            steps = []
        elif prev == A.NONE:
            steps = ["prepare"] if current == A.WARMUP else ["prepare", "start"]
        elif prev == A.WARMUP:
            steps = ["start", "stop"] if current == A.NONE else ["start"]
            if current == A.NONE:
                warnings.warn("Incorrect schedule: WARMUP followed by NONE")
        elif prev == A.RECORD:
            warnings.warn(f"Incorrect schedule: RECORD followed by {current.name}")
            steps = ["stop"]
        else:                                     # RECORD_AND_SAVE: the cycle's trace is complete
            steps = {A.NONE: ["stop", "ready"], A.WARMUP: ["stop", "ready", "prepare"]}.get(
                current, ["stop", "ready", "prepare", "start"])
        run = {"prepare": self._prepare_trace, "start": self._start_trace, "stop": self._stop_trace,
               "ready": self._trace_ready}
        for s in steps:
            run[s]()

    def start(self) -> None:
        """Starts profiling (the ``with`` statement calls it)."""
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self._transit_action(ProfilerAction.NONE, self.current_action)
        if self.record_steps:
            self.step_rec_fn = record_function("ProfilerStep#" + str(self.step_num))
            self.step_rec_fn.__enter__()

    def stop(self) -> None:
        """Stops profiling; the last trace is complete (``on_trace_ready`` is called for it)."""
        if self.record_steps and self.step_rec_fn is not None:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        self._transit_action(self.current_action, None)

    def step(self) -> None:
        """Signals the end of a step (a training iteration) to the schedule."""
        if self.record_steps and self.step_rec_fn is not None:
            self.step_rec_fn.__exit__(None, None, None)
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit_action(prev, self.current_action)
        if self.record_steps:
            self.step_rec_fn = record_function("ProfilerStep#" + str(self.step_num))
            self.step_rec_fn.__enter__()

    def __enter__(self) -> "profile":
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # ------------------------------------------------------------ results
    def _finished(self) -> EventList:
        if self._events is None:
            raise RuntimeError("Profiler didn't finish running: the results are there once a trace is complete "
                               "(after the with block, stop(), or in on_trace_ready)")
        return self._events

    def events(self) -> EventList:
        """The events of the last complete trace (``FunctionEvent``s, by start time)."""
        return self._finished()

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        """The last trace's events averaged by name (and by input shapes with
        ``group_by_input_shape``, which needs ``record_shapes=True``); print ``.table()``."""
        return self._finished().key_averages(group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def export_chrome_trace(self, path: str) -> None:
        """Writes the last trace as Chrome trace-event JSON (gzip when ``path`` ends in ``.gz``)."""
        self._finished().export_chrome_trace(path)


__all__ = ["profile", "record_function", "schedule", "ProfilerActivity", "ProfilerAction", "supported_activities",
           "tensorboard_trace_handler", "EventList", "FunctionEvent", "FunctionEventAvg"]
