"""``DistributedSampler``: restricts data loading to a subset of the dataset per process."""
from __future__ import annotations

import math
from typing import Iterator, Optional, TypeVar

from tinytorch.utils.data import _random
from tinytorch.utils.data.dataset import Dataset
from tinytorch.utils.data.sampler import Sampler

T_co = TypeVar("T_co", covariant=True)


def _default_world() -> tuple[int, int]:
    """(world size, rank) of the default process group, when tinytorch.distributed provides one."""
    try:
        import tinytorch.distributed as dist  # type: ignore[import-not-found]
    except ImportError:
        dist = None
    if dist is None or not getattr(dist, "is_available", lambda: False)() or not dist.is_initialized():
        raise RuntimeError("DistributedSampler: no initialized process group to take num_replicas/rank from; "
                           "pass num_replicas and rank explicitly")
    return dist.get_world_size(), dist.get_rank()


class DistributedSampler(Sampler[T_co]):
    r"""Sampler that restricts data loading to a subset of the dataset.

    It is especially useful in conjunction with distributed data parallel training. In such a case,
    each process can pass a :class:`~tinytorch.utils.data.DistributedSampler` instance as a
    :class:`~tinytorch.utils.data.DataLoader` sampler, and load a subset of the original dataset that
    is exclusive to it.

    .. note::
        Dataset is assumed to be of constant size and that any instance of it always returns the
        same elements in the same order.

    Args:
        dataset: Dataset used for sampling.
        num_replicas (int, optional): Number of processes participating in distributed training. By
            default, it is retrieved from the current distributed group
            (``tinytorch.distributed.get_world_size()``).
        rank (int, optional): Rank of the current process within :attr:`num_replicas`. By default,
            ``tinytorch.distributed.get_rank()``.
        shuffle (bool, optional): If ``True`` (default), sampler will shuffle the indices.
        seed (int, optional): random seed used to shuffle the sampler if :attr:`shuffle=True`. This
            number should be identical across all processes in the distributed group. Default: ``0``.
        drop_last (bool, optional): if ``True``, then the sampler will drop the tail of the data to
            make it evenly divisible across the number of replicas. If ``False``, the sampler will add
            extra indices to make the data evenly divisible across the replicas. Default: ``False``.

    .. warning::
        In distributed mode, calling the :meth:`set_epoch` method at the beginning of each epoch
        **before** creating the :class:`DataLoader` iterator is necessary to make shuffling work
        properly across multiple epochs. Otherwise, the same ordering will be always used."""

    def __init__(self, dataset: Dataset, num_replicas: Optional[int] = None, rank: Optional[int] = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None or rank is None:
            world, world_rank = _default_world()
            num_replicas = world if num_replicas is None else num_replicas
            rank = world_rank if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(self.dataset)  # type: ignore[arg-type]
        # With drop_last, drop the tail so every replica gets the same amount of data.
        if self.drop_last and n % self.num_replicas != 0:
            self.num_samples = math.ceil((n - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(n / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[T_co]:
        n = len(self.dataset)  # type: ignore[arg-type]
        if self.shuffle:
            # deterministically shuffle based on epoch and seed: the same on every replica
            g = _random.new_generator(self.seed + self.epoch)
            indices = _random.randperm(n, generator=g)
        else:
            indices = list(range(n))
        if not self.drop_last:
            padding_size = self.total_size - len(indices)
            if padding_size <= len(indices):
                indices += indices[:padding_size]
            else:
                indices += (indices * math.ceil(padding_size / len(indices)))[:padding_size]
        else:
            indices = indices[: self.total_size]
        assert len(indices) == self.total_size
        indices = indices[self.rank:self.total_size:self.num_replicas]  # subsample
        assert len(indices) == self.num_samples
        return iter(indices)

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        r"""Set the epoch for this sampler.

        When :attr:`shuffle=True`, this ensures all replicas use a different random ordering for
        each epoch. Otherwise, the next iteration of this sampler will yield the same ordering.

        Args:
            epoch (int): Epoch number."""
        self.epoch = epoch
