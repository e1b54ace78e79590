"""``DataLoader``: combines a dataset and a sampler, and provides an iterable over the dataset,
in the main process or in worker processes."""
from __future__ import annotations

import itertools
import multiprocessing as python_multiprocessing
import pickle
import queue
import time
import warnings
from typing import Any, Callable, Iterable, List, Optional, Sequence, Union

from tinytorch.cuda import is_available as _cuda_is_available
from tinytorch.utils.data import _random, _worker
from tinytorch.utils.data.collate import default_collate, default_convert
from tinytorch.utils.data.dataset import Dataset, IterableDataset
from tinytorch.utils.data.pin_memory import pin_memory
from tinytorch.utils.data.sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

_collate_fn_t = Callable[[List[Any]], Any]
_worker_init_fn_t = Callable[[int], None]


class _InfiniteConstantSampler(Sampler):
    """Yields None forever: the sampler of an IterableDataset (which draws its own samples)."""

    def __iter__(self):
        while True:
            yield None


def _default_mp_context():
    # fork shares the dataset copy-on-write (and tensors, which can't be pickled, need no pickling).
    methods = python_multiprocessing.get_all_start_methods()
    return python_multiprocessing.get_context("fork" if "fork" in methods else None)


class DataLoader:
    r"""Data loader combines a dataset and a sampler, and provides an iterable over the given dataset.

    Supports map-style and iterable-style datasets with single- or multi-process loading,
    customizing loading order and optional automatic batching (collation).

    Args:
        dataset (Dataset): dataset from which to load the data.
        batch_size (int, optional): how many samples per batch to load (default: ``1``).
        shuffle (bool, optional): set to ``True`` to have the data reshuffled at every epoch
            (default: ``False``).
        sampler (Sampler or Iterable, optional): defines the strategy to draw samples from the
            dataset. Can be any ``Iterable`` with ``__len__`` implemented. If specified, :attr:`shuffle`
            must not be specified.
        batch_sampler (Sampler or Iterable, optional): like :attr:`sampler`, but returns a batch of
            indices at a time. Mutually exclusive with :attr:`batch_size`, :attr:`shuffle`,
            :attr:`sampler`, and :attr:`drop_last`.
        num_workers (int, optional): how many subprocesses to use for data loading. ``0`` means that
            the data will be loaded in the main process. (default: ``0``)
        collate_fn (Callable, optional): merges a list of samples to form a mini-batch of Tensor(s).
        pin_memory (bool, optional): if ``True``, the data loader will copy Tensors into device/CUDA
            pinned memory before returning them. Without a CUDA GPU it warns and has no effect, as
            PyTorch. (default: ``False``)
        drop_last (bool, optional): set to ``True`` to drop the last incomplete batch, if the dataset
            size is not divisible by the batch size. (default: ``False``)
        timeout (numeric, optional): if positive, the timeout value for collecting a batch from
            workers. Should always be non-negative. (default: ``0``)
        worker_init_fn (Callable, optional): if not ``None``, this will be called on each worker
            subprocess with the worker id (an int in ``[0, num_workers - 1]``) as input, after seeding
            and before data loading. (default: ``None``)
        multiprocessing_context (str or context, optional): start method of the workers; defaults to
            ``"fork"`` where available (with another method the dataset must be picklable, and
            tinytorch tensors are not).
        generator (Generator, optional): used by RandomSampler to generate random indexes and by
            multiprocessing to generate ``base_seed`` for workers. (default: ``None``)
        prefetch_factor (int, optional): number of batches loaded in advance by each worker.
            (default value depends on the set value for num_workers: ``None`` if ``num_workers == 0``,
            else ``2``)
        persistent_workers (bool, optional): if ``True``, the data loader will not shut down the
            worker processes after a dataset has been consumed once. (default: ``False``)

    Batches produced by workers travel to the main process as numpy arrays and are rebuilt into
    tensors there; the order of batches is the sampler's order whatever the number of workers."""

    dataset: Dataset
    batch_size: Optional[int]
    num_workers: int
    drop_last: bool
    timeout: float
    sampler: Union[Sampler, Iterable]
    prefetch_factor: Optional[int]

    def __init__(self, dataset: Dataset, batch_size: Optional[int] = 1, shuffle: Optional[bool] = None,
                 sampler: Union[Sampler, Iterable, None] = None,
                 batch_sampler: Union[Sampler[Sequence], Iterable[Sequence], None] = None,
                 num_workers: int = 0, collate_fn: Optional[_collate_fn_t] = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0, worker_init_fn: Optional[_worker_init_fn_t] = None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor: Optional[int] = None,
                 persistent_workers: bool = False) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing. "
                             "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        if prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        if pin_memory and not _cuda_is_available():
            warnings.warn("DataLoader: 'pin_memory' is True but no CUDA GPU is available, so pinned memory "
                          "won't be used", stacklevel=2)
            pin_memory = False
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self._is_iterable = isinstance(dataset, IterableDataset)

        if self._is_iterable:
            if shuffle not in (None, False):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified batch_sampler option, "
                                 f"but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")

        if sampler is None:
            if self._is_iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)  # type: ignore[arg-type]
            else:
                sampler = SequentialSampler(dataset)  # type: ignore[arg-type]
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._iterator: Optional[_BaseDataLoaderIter] = None

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        # The sampler the iterators draw from: batches of indices with auto-collation, else indices.
        return self.batch_sampler if self._auto_collation else self.sampler

    def _get_iterator(self) -> "_BaseDataLoaderIter":
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        return _MultiProcessingDataLoaderIter(self)

    def __iter__(self) -> "_BaseDataLoaderIter":
        # Persistent workers: one iterator (and its worker processes) serves every epoch.
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self) -> int:
        if self._is_iterable:
            length = len(self.dataset)  # type: ignore[arg-type]
            if self.batch_size is not None:
                length = length // self.batch_size if self.drop_last else -(-length // self.batch_size)
            return length
        return len(self._index_sampler)  # type: ignore[arg-type]


# The loader's settings an iterator copies when it starts: each loader attribute ``name`` (with its
# leading underscore, if any, dropped) becomes the iterator's ``_name``.
_LOADER_SETTINGS = ("dataset", "_is_iterable", "_auto_collation", "drop_last", "_index_sampler", "num_workers",
                    "prefetch_factor", "timeout", "collate_fn", "pin_memory", "persistent_workers", "generator")


class _BaseDataLoaderIter:
    def __init__(self, loader: DataLoader) -> None:
        for name in _LOADER_SETTINGS:
            setattr(self, "_" + name.lstrip("_"), getattr(loader, name))
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = _random.new_seed(loader.generator)
        self._num_yielded = 0

    def __iter__(self) -> "_BaseDataLoaderIter":
        return self

    def _reset(self, loader: DataLoader, first_iter: bool = False) -> None:
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0

    def _next_index(self):
        return next(self._sampler_iter)

    def _next_data(self):
        raise NotImplementedError

    def __next__(self) -> Any:
        data = self._next_data()
        if self._pin_memory:
            data = pin_memory(data)
        self._num_yielded += 1
        return data

    def __len__(self) -> int:
        return len(self._index_sampler)  # type: ignore[arg-type]


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._fetcher = _worker.create_fetcher(self._is_iterable, self._dataset, self._auto_collation,
                                               self._collate_fn, self._drop_last)

    def _next_data(self):
        index = self._next_index()  # may raise StopIteration
        return self._fetcher.fetch(index)  # may raise StopIteration


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Iterates with worker processes; results come back in sampler order.

    Each worker has its own index queue; all share one result queue. Task ``i`` goes to the next
    active worker round-robin; ``_task_info[i]`` holds ``(worker_id,)`` while outstanding and
    ``(worker_id, data)`` once it arrived out of order."""

    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        assert self._num_workers > 0 and self._prefetch_factor is not None
        ctx = loader.multiprocessing_context
        if ctx is None:
            ctx = _default_mp_context()
        elif isinstance(ctx, str):
            ctx = python_multiprocessing.get_context(ctx)
        self._shutdown = False
        self._worker_result_queue = ctx.Queue()
        self._workers_done_event = ctx.Event()
        self._index_queues = []
        self._workers = []
        for i in range(self._num_workers):
            index_queue = ctx.Queue()
            index_queue.cancel_join_thread()  # never block the main process's exit on it
            w = ctx.Process(
                target=_worker.worker_loop,
                args=(self._is_iterable, self._dataset, index_queue, self._worker_result_queue,
                      self._workers_done_event, self._auto_collation, self._collate_fn, self._drop_last,
                      self._base_seed, loader.worker_init_fn, i, self._num_workers, self._persistent_workers),
                daemon=True)
            w.start()
            self._index_queues.append(index_queue)
            self._workers.append(w)
        self._reset(loader, first_iter=True)

    def _reset(self, loader: DataLoader, first_iter: bool = False) -> None:
        super()._reset(loader, first_iter)
        self._send_idx = 0  # next task index to send to a worker
        self._rcvd_idx = 0  # next task index to return to the user
        self._task_info: dict = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            # New epoch on persistent workers: reseed them and wait until each has acknowledged,
            # discarding any results left over from an epoch that was not read to the end.
            seed = _random.new_seed(loader.generator)
            for q in self._index_queues:
                q.put(_worker._ResumeIteration(seed))
            remaining = self._num_workers
            while remaining > 0:
                _, data = self._get_data()
                if isinstance(_, _worker._ResumeIteration):
                    remaining -= 1
        for _ in range(self._prefetch_factor * self._num_workers):  # type: ignore[operator]
            self._try_put_index()

    def _try_get_data(self, timeout: float):
        try:
            return True, pickle.loads(self._worker_result_queue.get(timeout=timeout))
        except queue.Empty:
            pass
        # Nothing arrived in time: a worker that died (killed, segfault, os._exit) would make us wait forever.
        failed = [w for i, w in enumerate(self._workers) if self._workers_status[i] and not w.is_alive()]
        if failed:
            pids = ", ".join(f"{w.pid} (exit code {w.exitcode})" for w in failed)
            self._shutdown_workers()
            raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly")
        return False, None

    def _get_data(self):
        # Short waits up to the deadline: a dead worker is noticed within one interval, and the
        # timeout fires at `timeout` seconds, not later.
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            wait = _worker.MP_STATUS_CHECK_INTERVAL
            if deadline is not None:
                wait = max(min(wait, deadline - time.monotonic()), 0.0)
            success, data = self._try_get_data(wait)
            if success:
                return data
            if deadline is not None and time.monotonic() >= deadline:
                self._shutdown_workers(patience=0.0)    # they are stuck: don't add to the timeout
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")

    def _next_data(self):
        while True:
            # Skip tasks that were sent to IterableDataset workers which have since run dry.
            while self._rcvd_idx < self._send_idx:
                info = self._task_info[self._rcvd_idx]
                worker_id = info[0]
                if len(info) == 2 or self._workers_status[worker_id]:
                    break
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration

            if len(self._task_info[self._rcvd_idx]) == 2:  # arrived earlier, out of order
                data = self._task_info.pop(self._rcvd_idx)[1]
                return self._process_data(data)

            assert not self._shutdown and self._tasks_outstanding > 0
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if self._is_iterable and isinstance(data, _worker._IterableDatasetStopIteration):
                self._workers_status[data.worker_id] = False
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                self._task_info[idx] += (data,)
            else:
                del self._task_info[idx]
                return self._process_data(data)

    def _try_put_index(self) -> None:
        if self._tasks_outstanding >= self._prefetch_factor * self._num_workers:  # type: ignore[operator]
            return
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):  # find the next active worker, if any
            worker_queue_idx = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_queue_idx]:
                break
        else:
            return  # no active worker: the iterable dataset is exhausted
        self._index_queues[worker_queue_idx].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_queue_idx,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _process_data(self, data):
        self._rcvd_idx += 1
        self._try_put_index()
        if isinstance(data, _worker.ExceptionWrapper):
            self._shutdown_workers()
            data.reraise()
        return _worker.unpack(data)

    def _shutdown_workers(self, patience: float = _worker.MP_STATUS_CHECK_INTERVAL * 10) -> None:
        """Stops the workers: each gets `patience` seconds to exit by itself, then is terminated."""
        if getattr(self, "_shutdown", True) or not hasattr(self, "_workers"):
            return  # already shut down, or __init__ failed before starting workers
        self._shutdown = True
        try:
            self._workers_done_event.set()
            for q in self._index_queues:
                try:
                    q.put(None)
                except (OSError, ValueError):
                    pass
            for w in self._workers:
                w.join(timeout=patience)
            for w in self._workers:
                if w.is_alive():
                    w.terminate()  # stuck (e.g. in user code): don't let shutdown hang
                    w.join(timeout=1.0)
        finally:
            for q in self._index_queues + [self._worker_result_queue]:
                q.cancel_join_thread()
                q.close()

    def __del__(self) -> None:
        self._shutdown_workers()
