"""``SummaryWriter``: logs scalars, histograms and text to TensorBoard event files, as
``torch.utils.tensorboard.SummaryWriter`` (the same files, tags and directory layout)."""
from __future__ import annotations

import os
import socket
import time
from datetime import datetime
from typing import Any, Dict, Optional

from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from tinytorch.utils.tensorboard.summary import histogram, scalar, text


class FileWriter:
    """Writes ``Event`` protos to one event file in ``log_dir`` (asynchronously: flushed every
    ``flush_secs`` seconds or ``max_queue`` events)."""

    def __init__(self, log_dir: str, max_queue: int = 10, flush_secs: int = 120, filename_suffix: str = "") -> None:
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self) -> str:
        return self.event_writer.get_logdir()

    def add_event(self, event: Event, step: Optional[int] = None, walltime: Optional[float] = None) -> None:
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary: Any, global_step: Optional[int] = None, walltime: Optional[float] = None) -> None:
        self.add_event(Event(summary=summary), global_step, walltime)

    def flush(self) -> None:
        self.event_writer.flush()

    def close(self) -> None:
        self.event_writer.close()

    def reopen(self) -> None:
        self.event_writer.reopen()


class SummaryWriter:
    """Writes entries directly to event files in ``log_dir`` to be consumed by TensorBoard.

    Args:
        log_dir (str, optional): the directory; default ``runs/CURRENT_DATETIME_HOSTNAME``.
        comment (str): suffix of the default ``log_dir`` (ignored when ``log_dir`` is given).
        purge_step (int, optional): events with a step at or above it that an earlier run left
            in ``log_dir`` are hidden by TensorBoard (a restart after a crash).
        max_queue (int): events queued before a write to disk. Default: 10
        flush_secs (int): seconds between flushes to disk. Default: 120
        filename_suffix (str): suffix of the event file names."""

    def __init__(self, log_dir: Optional[str] = None, comment: str = "", purge_step: Optional[int] = None,
                 max_queue: int = 10, flush_secs: int = 120, filename_suffix: str = "") -> None:
        if not log_dir:
            current_time = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", current_time + "_" + socket.gethostname() + comment)
        self.log_dir = str(log_dir)
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer: Optional[FileWriter] = None
        self.all_writers: Optional[Dict[str, FileWriter]] = None
        self._get_file_writer()
        # TensorBoard's default histogram bins: +-1e-12 growing by 10% to +-1e20, and 0
        v, buckets = 1e-12, []
        while v < 1e20:
            buckets.append(v)
            v *= 1.1
        self.default_bins = [-b for b in reversed(buckets)] + [0] + buckets

    def _get_file_writer(self) -> FileWriter:
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                self.file_writer.add_event(Event(step=self.purge_step, file_version="brain.Event:2"))
                self.file_writer.add_event(Event(step=self.purge_step,
                                                 session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self) -> str:
        """The directory the event files are written to."""
        return self.log_dir

    def add_scalar(self, tag: str, scalar_value: Any, global_step: Optional[int] = None,
                   walltime: Optional[float] = None, new_style: bool = False, double_precision: bool = False) -> None:
        """Adds a scalar (a Python number, or a one-element tensor or array) at ``global_step``."""
        self._get_file_writer().add_summary(scalar(tag, scalar_value, new_style, double_precision),
                                            global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: Dict[str, Any], global_step: Optional[int] = None,
                    walltime: Optional[float] = None) -> None:
        """Adds several scalars under ``main_tag`` in one chart: each goes to its own run
        directory ``{log_dir}/{main_tag}_{tag}`` (``/`` in ``main_tag`` written as ``_``)."""
        walltime = time.time() if walltime is None else walltime
        logdir = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            fw_tag = logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            fw = self.all_writers.get(fw_tag)
            if fw is None:
                fw = FileWriter(fw_tag, self.max_queue, self.flush_secs, self.filename_suffix)
                self.all_writers[fw_tag] = fw
            fw.add_summary(scalar(main_tag, value), global_step, walltime)

    def add_histogram(self, tag: str, values: Any, global_step: Optional[int] = None, bins: Any = "tensorflow",
                      walltime: Optional[float] = None, max_bins: Optional[int] = None) -> None:
        """Adds a histogram of ``values``; ``bins`` as numpy's ``histogram`` takes them, or
        ``"tensorflow"`` (default) for TensorBoard's exponential bins."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._get_file_writer().add_summary(histogram(tag, values, bins, max_bins=max_bins), global_step, walltime)

    def add_text(self, tag: str, text_string: str, global_step: Optional[int] = None,
                 walltime: Optional[float] = None) -> None:
        """Adds text (markdown) at ``global_step``."""
        self._get_file_writer().add_summary(text(tag, text_string), global_step, walltime)

    def flush(self) -> None:
        """Writes the pending events of every event file to disk."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()

    def close(self) -> None:
        """Flushes and closes every event file; a later ``add_*`` opens a new one."""
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self) -> "SummaryWriter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
