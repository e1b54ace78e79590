"""What runs inside a DataLoader worker process, and the messages it exchanges with the main one.

Tensors refuse pickling, so batches cross the process boundary packed: every tensor becomes a
:class:`_TensorPayload` holding a numpy array of its exact bits; the main process unpacks them
back into tensors (zero-copy from the unpickled array)."""
from __future__ import annotations

import collections.abc
import os
import pickle
import queue
import random
import sys
import traceback
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from tinytorch._core.dtype import _dtype_by_name
from tinytorch._core.threads import set_num_threads
from tinytorch._tensor.raw_bits import from_bits, to_bits
from tinytorch._tensor.tensor import Tensor
from tinytorch.utils.data import _random

# How often a blocked worker or main process wakes up to check on the other side (seconds).
MP_STATUS_CHECK_INTERVAL = 0.2


@dataclass
class WorkerInfo:
    """Information about the current DataLoader worker process (see :func:`get_worker_info`)."""

    id: int
    num_workers: int
    seed: int
    dataset: Any


_worker_info: Optional[WorkerInfo] = None


def get_worker_info() -> Optional[WorkerInfo]:
    r"""Returns the information about the current :class:`~tinytorch.utils.data.DataLoader`
    iterator worker process.

    When called in a worker, this returns an object guaranteed to have the following attributes:

    * :attr:`id`: the current worker id.
    * :attr:`num_workers`: the total number of workers.
    * :attr:`seed`: the random seed set for the current worker. This value is determined by main
      process RNG and the worker id.
    * :attr:`dataset`: the copy of the dataset object in **this** process.

    When called in the main process, this returns ``None``."""
    return _worker_info


# ----------------------------------------------------------------------------- messages
class _IterableDatasetStopIteration:
    """Sent by a worker whose IterableDataset replica is exhausted."""

    def __init__(self, worker_id: int) -> None:
        self.worker_id = worker_id


class _ResumeIteration:
    """Sent to persistent workers at the start of a new epoch; echoed back as an acknowledgement."""

    def __init__(self, seed: Optional[int] = None) -> None:
        self.seed = seed


class ExceptionWrapper:
    """Carries an exception and its traceback text across the process boundary."""

    def __init__(self, exc_info=None, where: str = "in background") -> None:
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def __reduce__(self):
        # The exception class travels by reference; a class that can't be pickled becomes RuntimeError.
        exc_type = self.exc_type
        try:
            pickle.dumps(exc_type)
        except Exception:
            exc_type = RuntimeError
        return (_rebuild_exception_wrapper, (exc_type, self.exc_msg, self.where))

    def reraise(self):
        """Reraises the wrapped exception in the current thread, with the original traceback text."""
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            # KeyError calls repr() on its argument (usually a dict key), which would mangle the text.
            msg = KeyErrorMessage(msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            # Exceptions whose constructors need other arguments: fall back to RuntimeError.
            raise RuntimeError(msg) from None
        raise exception


def _rebuild_exception_wrapper(exc_type, exc_msg, where):
    w = ExceptionWrapper.__new__(ExceptionWrapper)
    w.exc_type, w.exc_msg, w.where = exc_type, exc_msg, where
    return w


class KeyErrorMessage(str):
    """str subclass that returns itself in repr, so KeyError shows the traceback text verbatim."""

    def __repr__(self):
        return self


# ----------------------------------------------------------------------------- tensor transport
class _TensorPayload:
    __slots__ = ("array", "dtype", "requires_grad")

    def __init__(self, array: np.ndarray, dtype: str, requires_grad: bool) -> None:
        self.array, self.dtype, self.requires_grad = array, dtype, requires_grad

    def __reduce__(self):
        return (_TensorPayload, (self.array, self.dtype, self.requires_grad))


def _map_structure(obj: Any, fn_leaf, is_leaf) -> Any:
    if is_leaf(obj):
        return fn_leaf(obj)
    if isinstance(obj, (str, bytes)) or obj is None:
        return obj
    if isinstance(obj, collections.abc.Mapping):
        items = {k: _map_structure(v, fn_leaf, is_leaf) for k, v in obj.items()}
        try:
            return type(obj)(items)  # type: ignore[call-arg]
        except TypeError:
            return items
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(_map_structure(v, fn_leaf, is_leaf) for v in obj))
    if isinstance(obj, (list, tuple)):
        out = [_map_structure(v, fn_leaf, is_leaf) for v in obj]
        try:
            return type(obj)(out)
        except TypeError:
            return out
    return obj


def pack(obj: Any) -> Any:
    """Replaces every tensor in a nested structure with a picklable payload."""
    return _map_structure(obj, lambda t: _TensorPayload(to_bits(t), t.dtype.name, t.requires_grad),
                          lambda x: isinstance(x, Tensor))


def unpack(obj: Any) -> Any:
    """Inverse of :func:`pack`, run in the main process."""
    def rebuild(p: _TensorPayload):
        t = from_bits(p.array, _dtype_by_name(p.dtype))
        return t.requires_grad_(True) if p.requires_grad else t
    return _map_structure(obj, rebuild, lambda x: isinstance(x, _TensorPayload))


# ----------------------------------------------------------------------------- fetchers
class _MapDatasetFetcher:
    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool) -> None:
        self.dataset, self.auto_collation, self.collate_fn, self.drop_last = dataset, auto_collation, collate_fn, drop_last

    def fetch(self, possibly_batched_index):
        if self.auto_collation:
            if callable(getattr(self.dataset, "__getitems__", None)):
                data = self.dataset.__getitems__(possibly_batched_index)
            else:
                data = [self.dataset[idx] for idx in possibly_batched_index]
        else:
            data = self.dataset[possibly_batched_index]
        return self.collate_fn(data)


class _IterableDatasetFetcher:
    def __init__(self, dataset, auto_collation: bool, collate_fn, drop_last: bool) -> None:
        self.dataset, self.auto_collation, self.collate_fn, self.drop_last = dataset, auto_collation, collate_fn, drop_last
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in possibly_batched_index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if len(data) == 0 or (self.drop_last and len(data) < len(possibly_batched_index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


def create_fetcher(is_iterable: bool, dataset, auto_collation: bool, collate_fn, drop_last: bool):
    cls = _IterableDatasetFetcher if is_iterable else _MapDatasetFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)


# ----------------------------------------------------------------------------- the worker loop
def _seed_worker(seed: int) -> None:
    random.seed(seed)
    _random.manual_seed(seed)
    np.random.seed(seed % 2**32)


def _put(data_queue, msg) -> None:
    # Pickle here rather than in the queue's feeder thread, which would print and drop an
    # unpicklable batch, leaving the main process waiting for it forever.
    data_queue.put(pickle.dumps(msg, protocol=pickle.HIGHEST_PROTOCOL))


def worker_loop(is_iterable: bool, dataset, index_queue, data_queue, done_event, auto_collation: bool,
                collate_fn, drop_last: bool, base_seed: int, init_fn, worker_id: int, num_workers: int,
                persistent_workers: bool) -> None:
    """Serves (task index, sample indices) requests from ``index_queue`` until told to stop (None),
    putting (task index, packed batch or ExceptionWrapper) on ``data_queue``."""
    global _worker_info
    parent = os.getppid()
    try:
        set_num_threads(1)  # N workers x all-core kernels would oversubscribe the CPU
        seed = base_seed + worker_id
        _seed_worker(seed)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)

        init_exception = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = create_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")

        iteration_end = False
        while True:
            try:
                r = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                if os.getppid() != parent:  # the main process died: nobody will ever read our results
                    break
                continue
            if isinstance(r, _ResumeIteration):
                _put(data_queue, (r, None))
                iteration_end = False
                if r.seed is not None:
                    _seed_worker(r.seed + worker_id)
                if init_exception is None:
                    try:
                        fetcher = create_fetcher(is_iterable, dataset, auto_collation, collate_fn, drop_last)
                    except Exception:
                        init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
                continue
            if r is None:
                break
            if done_event.is_set() or iteration_end:
                continue  # shutting down, or this replica is exhausted: drop the task
            idx, index = r
            data: Any
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = pack(fetcher.fetch(index))  # type: ignore[union-attr]
                except Exception as e:
                    if isinstance(e, StopIteration) and is_iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            try:
                _put(data_queue, (idx, data))
            except Exception:  # e.g. an unpicklable batch: report it instead of losing the task
                _put(data_queue, (idx, ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")))
            del data, idx, index, r
    except KeyboardInterrupt:
        pass
    if done_event.is_set():
        # The main process won't drain the queue any more; don't block exit on flushing it.
        data_queue.cancel_join_thread()
        data_queue.close()
