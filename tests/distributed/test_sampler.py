"""DistributedSampler: partitions cover the dataset exactly once per epoch; set_epoch reshuffles."""
from __future__ import annotations

import pytest

from tinytorch.utils.data import DataLoader
from tinytorch.utils.data.distributed import DistributedSampler


@pytest.mark.parametrize("n,ws", [(10, 2), (11, 3), (7, 3), (64, 4)])
@pytest.mark.parametrize("shuffle", [True, False])
def test_partitions_cover_once(n, ws, shuffle):
    data = list(range(n))
    for epoch in range(2):
        parts = []
        for r in range(ws):
            s = DistributedSampler(data, num_replicas=ws, rank=r, shuffle=shuffle, seed=3)
            s.set_epoch(epoch)
            parts.append(list(s))
        assert len({len(p) for p in parts}) == 1
        flat = [i for p in parts for i in p]
        assert set(flat) == set(data)                      # every sample, once ...
        assert len(flat) - n == (-n) % ws                  # ... plus the padding that evens them out
        for r in range(ws):
            for q in range(r + 1, ws):
                overlap = set(parts[r]) & set(parts[q])
                assert len(overlap) <= (-n) % ws
        drop = [list(DistributedSampler(data, num_replicas=ws, rank=r, shuffle=shuffle, drop_last=True))
                for r in range(ws)]
        flat = [i for p in drop for i in p]
        assert len(flat) == len(set(flat)) == (n // ws) * ws


def test_set_epoch_reshuffles_through_dataloader():
    data = list(range(40))
    s = DistributedSampler(data, num_replicas=2, rank=0, shuffle=True, seed=0)
    dl = DataLoader(data, batch_size=5, sampler=s)
    orders = []
    for epoch in range(3):
        s.set_epoch(epoch)
        orders.append([int(x) for b in dl for x in b.tolist()])
    assert orders[0] != orders[1] and orders[1] != orders[2]
    s.set_epoch(0)
    assert [int(x) for b in dl for x in b.tolist()] == orders[0]


def test_needs_process_group_or_explicit_ranks():
    with pytest.raises(RuntimeError, match="num_replicas"):
        DistributedSampler(list(range(4)))
    with pytest.raises(ValueError, match="Invalid rank"):
        DistributedSampler(list(range(4)), num_replicas=2, rank=2)
