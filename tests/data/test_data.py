"""tinytorch.utils.data: datasets, samplers, collation and the DataLoader (with worker processes)."""
from __future__ import annotations

import collections
import os
import time

import numpy as np
import pytest

import tinytorch as tt
from tinytorch.utils.data import (
    BatchSampler, ConcatDataset, DataLoader, Dataset, DistributedSampler, IterableDataset, RandomSampler,
    SequentialSampler, Subset, SubsetRandomSampler, TensorDataset, WeightedRandomSampler, default_collate,
    get_worker_info, random_split,
)
from tinytorch.utils.data import _random


def gen(seed):
    return _random.new_generator(seed)


class Squares(Dataset):
    def __init__(self, n=23):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return np.full((2, 3), i, dtype=np.float32), i * i


class Failing(Squares):
    def __getitem__(self, i):
        if i == 5:
            raise ValueError("sample 5 is broken")
        return super().__getitem__(i)


class Dying(Squares):
    def __getitem__(self, i):
        if i == 5 and get_worker_info() is not None:
            os._exit(3)
        return super().__getitem__(i)


class WorkerIds(Squares):
    def __getitem__(self, i):
        info = get_worker_info()
        return {"i": i, "worker": -1 if info is None else info.id, "seed": 0 if info is None else info.seed}


class Stream(IterableDataset):
    """Splits range(n) among workers, as PyTorch's docs show."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))


def ids(loader):
    return [int(v) for batch in loader for v in batch[1].tolist()]


# ----------------------------------------------------------------------------- datasets
def test_tensor_dataset_and_subset_concat():
    x = tt.arange(12).view(6, 2)
    y = tt.arange(6)
    ds = TensorDataset(x, y)
    assert len(ds) == 6
    a, b = ds[4]
    assert a.tolist() == [8, 9] and b.item() == 4
    with pytest.raises(ValueError):
        TensorDataset(x, tt.arange(5))
    sub = Subset(ds, [5, 0])
    assert len(sub) == 2 and sub[0][1].item() == 5
    cat = ConcatDataset([Squares(3), Squares(4)])
    assert len(cat) == 7 and cat[3][1] == 0 and cat[6][1] == 9 and cat[-1][1] == 9
    assert len(Squares(2) + Squares(5)) == 7
    with pytest.raises(IndexError):
        cat[7]


def test_random_split_lengths_fractions_and_reproducible():
    parts = random_split(range(10), [3, 7], generator=gen(42))
    assert [len(p) for p in parts] == [3, 7]
    assert sorted(list(parts[0]) + list(parts[1])) == list(range(10))
    again = random_split(range(10), [3, 7], generator=gen(42))
    assert list(parts[0]) == list(again[0])
    fr = random_split(range(11), [0.3, 0.3, 0.4], generator=gen(1))
    assert [len(p) for p in fr] == [4, 3, 4]  # floors 3, 3, 4; the remainder 1 goes to the first
    with pytest.raises(ValueError):
        random_split(range(10), [3, 3])


# ----------------------------------------------------------------------------- samplers
def test_sequential_and_batch_sampler():
    assert list(SequentialSampler(range(5))) == [0, 1, 2, 3, 4]
    bs = BatchSampler(SequentialSampler(range(10)), batch_size=3, drop_last=False)
    assert list(bs) == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]] and len(bs) == 4
    bs = BatchSampler(SequentialSampler(range(10)), batch_size=3, drop_last=True)
    assert list(bs) == [[0, 1, 2], [3, 4, 5], [6, 7, 8]] and len(bs) == 3
    with pytest.raises(ValueError):
        BatchSampler(range(3), batch_size=0, drop_last=False)


def test_random_sampler_permutation_and_reproducible():
    s = RandomSampler(range(100), generator=gen(0))
    e1, e2 = list(s), list(s)
    assert sorted(e1) == list(range(100)) and sorted(e2) == list(range(100))
    assert e1 != e2  # a new permutation each epoch
    assert list(RandomSampler(range(100), generator=gen(0))) == e1
    r = list(RandomSampler(range(10), replacement=True, num_samples=70, generator=gen(3)))
    assert len(r) == 70 and all(0 <= v < 10 for v in r) and len(set(r)) < 70
    over = list(RandomSampler(range(10), num_samples=25, generator=gen(3)))
    assert len(over) == 25 and sorted(over[:20]) == sorted(list(range(10)) * 2)
    _random.manual_seed(5)
    a = list(RandomSampler(range(50)))
    _random.manual_seed(5)
    assert list(RandomSampler(range(50))) == a  # no generator: follows the global seed


def test_subset_and_weighted_samplers():
    s = list(SubsetRandomSampler([3, 7, 9, 11], generator=gen(2)))
    assert sorted(s) == [3, 7, 9, 11]
    w = WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], num_samples=4000, generator=gen(0))
    counts = collections.Counter(w)
    assert set(counts) == {1, 3} and 0.2 < counts[1] / 4000 < 0.3
    nr = list(WeightedRandomSampler([1, 1, 1, 1, 1], 5, replacement=False, generator=gen(0)))
    assert sorted(nr) == [0, 1, 2, 3, 4]
    with pytest.raises(RuntimeError):
        WeightedRandomSampler([1, 0, 0], 2, replacement=False)


def test_distributed_sampler_partitions():
    parts = [list(DistributedSampler(range(10), num_replicas=3, rank=r, seed=7)) for r in range(3)]
    assert all(len(p) == 4 for p in parts)
    flat = sum(parts, [])
    assert set(flat) == set(range(10)) and len(flat) == 12  # padded with 2 repeats
    d = DistributedSampler(range(10), num_replicas=3, rank=0, drop_last=True, shuffle=False)
    assert list(d) == [0, 3, 6] and len(d) == 3
    s = DistributedSampler(range(10), num_replicas=2, rank=1)
    first = list(s)
    s.set_epoch(1)
    assert list(s) != first and list(DistributedSampler(range(10), num_replicas=2, rank=1)) == first
    with pytest.raises(RuntimeError, match="num_replicas"):
        DistributedSampler(range(10))
    with pytest.raises(ValueError):
        DistributedSampler(range(10), num_replicas=2, rank=2)


# ----------------------------------------------------------------------------- collate
def test_default_collate_types():
    Point = collections.namedtuple("Point", "x y")
    batch = [{"img": np.ones((2, 2), np.uint8) * i, "label": i, "w": 0.5 * i, "name": f"s{i}",
              "t": tt.tensor([i, i + 1.0]), "p": Point(i, (i, float(i)))} for i in range(3)]
    out = default_collate(batch)
    assert out["img"].dtype is tt.uint8 and tuple(out["img"].shape) == (3, 2, 2)
    assert out["label"].dtype is tt.int64 and out["label"].tolist() == [0, 1, 2]
    assert out["w"].dtype is tt.float64 and out["w"].tolist() == [0.0, 0.5, 1.0]
    assert out["name"] == ["s0", "s1", "s2"]
    assert out["t"].dtype is tt.float32 and out["t"].tolist() == [[0, 1], [1, 2], [2, 3]]
    assert isinstance(out["p"], Point) and out["p"].x.tolist() == [0, 1, 2]
    assert isinstance(out["p"].y, list) and out["p"].y[1].dtype is tt.float64  # tuples -> lists, as PyTorch
    assert default_collate([True, False]).dtype is tt.bool
    assert default_collate([np.float32(1.5), np.float32(2)]).dtype is tt.float32
    bf = default_collate([tt.tensor([1.5, -2.0]).bfloat16(), tt.tensor([3.0, 4.0]).bfloat16()])
    assert bf.dtype is tt.bfloat16 and bf.float().tolist() == [[1.5, -2.0], [3.0, 4.0]]
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([[1, 2], [1]])
    with pytest.raises(TypeError):
        default_collate([object(), object()])


# ----------------------------------------------------------------------------- DataLoader
def test_loader_len_and_order():
    dl = DataLoader(Squares(23), batch_size=5)
    assert len(dl) == 5
    batches = list(dl)
    assert tuple(batches[0][0].shape) == (5, 2, 3) and batches[-1][1].tolist() == [400, 441, 484]
    assert len(DataLoader(Squares(23), batch_size=5, drop_last=True)) == 4
    none = list(DataLoader(Squares(3), batch_size=None))
    assert none[1][1] == 1 and isinstance(none[1][0], tt.Tensor)  # default_convert, no batch dim
    with pytest.raises(ValueError):
        DataLoader(Squares(3), sampler=SequentialSampler(range(3)), shuffle=True)
    with pytest.raises(ValueError):
        DataLoader(Squares(3), prefetch_factor=2)
    with pytest.raises(ValueError):
        DataLoader(Squares(3), persistent_workers=True)


@pytest.mark.skipif(tt.cuda.is_available(), reason="checks the no-GPU path; tests/cuda_runtime checks pinning")
def test_pin_memory_without_a_gpu_warns_and_is_ignored():
    with pytest.warns(UserWarning, match="pin_memory"):
        dl = DataLoader(Squares(7), batch_size=3, pin_memory=True)
    assert dl.pin_memory is False
    assert [b[1].tolist() for b in dl] == [[0, 1, 4], [9, 16, 25], [36]]


def test_pin_memory_walks_nested_batches():
    from tinytorch.utils.data.pin_memory import pin_memory

    class Pinnable:                     # a custom batch type with its own pin_memory(), as PyTorch allows
        def __init__(self, v):
            self.v, self.pinned = v, False

        def pin_memory(self):
            out = Pinnable(self.v)
            out.pinned = True
            return out

    Pair = collections.namedtuple("Pair", "a b")
    out = pin_memory({"x": [Pinnable(1), (Pinnable(2), "s")], "p": Pair(Pinnable(3), 4), "n": None})
    assert isinstance(out["p"], Pair) and out["p"].b == 4 and out["n"] is None
    assert isinstance(out["x"], list) and isinstance(out["x"][1], tuple) and out["x"][1][1] == "s"
    assert [o.pinned for o in (out["x"][0], out["x"][1][0], out["p"].a)] == [True, True, True]
    assert [o.v for o in (out["x"][0], out["x"][1][0], out["p"].a)] == [1, 2, 3]


def test_shuffle_every_sample_once_and_seeded():
    dl = DataLoader(Squares(37), batch_size=4, shuffle=True, generator=gen(123))
    e1 = [int(np.sqrt(v)) for v in ids(dl)]
    e2 = [int(np.sqrt(v)) for v in ids(dl)]
    assert sorted(e1) == list(range(37)) and sorted(e2) == list(range(37)) and e1 != e2
    dl2 = DataLoader(Squares(37), batch_size=4, shuffle=True, generator=gen(123))
    assert [int(np.sqrt(v)) for v in ids(dl2)] == e1


@pytest.mark.parametrize("num_workers", [1, 3])
def test_workers_match_single_process(num_workers):
    tt.exp(tt.ones(10000)).numpy()  # run a kernel in the parent before forking
    ref = list(DataLoader(Squares(23), batch_size=4, shuffle=True, generator=gen(9)))
    got = list(DataLoader(Squares(23), batch_size=4, shuffle=True, generator=gen(9), num_workers=num_workers))
    assert len(got) == len(ref) == 6
    for (a, b), (c, d) in zip(ref, got):
        np.testing.assert_array_equal(a.numpy(), c.numpy())
        assert b.tolist() == d.tolist() and c.dtype is tt.float32 and d.dtype is tt.int64


def test_workers_tensor_dataset_all_dtypes():
    n = 10
    tensors = [tt.arange(n).to(d) for d in (tt.float32, tt.float16, tt.bfloat16, tt.float64, tt.int32, tt.uint8)]
    tensors.append(tt.arange(n) > 4)
    dl = DataLoader(TensorDataset(*tensors), batch_size=3, num_workers=2)
    batches = list(dl)
    assert len(batches) == 4
    for t, col in zip(tensors, zip(*batches)):
        assert all(c.dtype is t.dtype for c in col)
        assert sum((c.tolist() for c in col), []) == t.tolist()


def test_worker_info_seed_and_init_fn(tmp_path):
    def init(worker_id):
        (tmp_path / f"init{worker_id}").write_text(str(get_worker_info().num_workers))

    assert get_worker_info() is None
    out = list(DataLoader(WorkerIds(8), batch_size=2, num_workers=2, worker_init_fn=init, generator=gen(0)))
    workers = sum((b["worker"].tolist() for b in out), [])
    assert workers == [0, 0, 1, 1, 0, 0, 1, 1]  # round-robin batches
    seeds = {w: s for b in out for w, s in zip(b["worker"].tolist(), b["seed"].tolist())}
    assert seeds[1] == seeds[0] + 1
    assert (tmp_path / "init0").read_text() == "2" and (tmp_path / "init1").exists()


def test_iterable_dataset_with_workers():
    single = [v for b in DataLoader(Stream(10), batch_size=3) for v in b.tolist()]
    assert single == list(range(10))
    multi = [v for b in DataLoader(Stream(10), batch_size=2, num_workers=2) for v in b.tolist()]
    assert sorted(multi) == list(range(10))
    with pytest.raises(ValueError):
        DataLoader(Stream(3), shuffle=True)


def test_worker_exception_reraised_with_traceback():
    dl = DataLoader(Failing(12), batch_size=2, num_workers=2)
    with pytest.raises(ValueError) as ei:
        list(dl)
    msg = str(ei.value)
    assert "sample 5 is broken" in msg and "DataLoader worker process" in msg and "Traceback" in msg
    with pytest.raises(ValueError, match="sample 5 is broken"):
        list(DataLoader(Failing(12), batch_size=2))  # same error without workers


def test_dead_worker_raises_not_hangs():
    dl = DataLoader(Dying(12), batch_size=2, num_workers=2)
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match="exited unexpectedly"):
        list(dl)
    assert time.monotonic() - t0 < 10


def test_timeout():
    class Slow(Squares):
        def __getitem__(self, i):
            time.sleep(0.8)
            return i

    with pytest.raises(RuntimeError, match="timed out"):
        next(iter(DataLoader(Slow(4), num_workers=1, timeout=0.3)))


def test_timeout_is_exact_and_a_dead_worker_is_noticed_before_it():
    class Slow(Squares):
        def __getitem__(self, i):
            time.sleep(30)
            return i

    it = iter(DataLoader(Slow(4), num_workers=1, timeout=1.0))
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match="timed out after 1.0 seconds"):
        next(it)
    assert 1.0 <= time.monotonic() - t0 < 2.0

    class Dies(Squares):
        def __getitem__(self, i):
            os._exit(3)

    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match="exited unexpectedly"):
        next(iter(DataLoader(Dies(4), num_workers=1, timeout=60)))
    assert time.monotonic() - t0 < 10           # not the 60 s timeout


def test_iterator_deletion_shuts_workers_down():
    it = iter(DataLoader(Squares(100), batch_size=2, num_workers=2))
    next(it)
    procs = list(it._workers)
    assert all(p.is_alive() for p in procs)
    del it
    for p in procs:
        p.join(timeout=5)
    assert not any(p.is_alive() for p in procs)


def test_persistent_workers_reused_across_epochs():
    dl = DataLoader(Squares(9), batch_size=2, shuffle=True, num_workers=2, persistent_workers=True,
                    generator=gen(4))
    e1 = ids(dl)
    pids = [p.pid for p in dl._iterator._workers]
    e2 = ids(dl)
    assert [p.pid for p in dl._iterator._workers] == pids and all(p.is_alive() for p in dl._iterator._workers)
    assert sorted(e1) == sorted(e2) == [i * i for i in range(9)]
    it = iter(dl)  # an epoch abandoned half-way must not leak stale batches into the next one
    next(it)
    assert sorted(ids(dl)) == [i * i for i in range(9)]
    procs = dl._iterator._workers
    del dl, it
    for p in procs:
        p.join(timeout=5)
    assert not any(p.is_alive() for p in procs)


