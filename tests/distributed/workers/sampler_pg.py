import tinytorch.distributed as dist
from tinytorch.utils.data.distributed import DistributedSampler

dist.init_process_group("mpi")
rank, ws = dist.get_rank(), dist.get_world_size()
s = DistributedSampler(list(range(21)), shuffle=True, seed=5)
assert (s.num_replicas, s.rank) == (ws, rank)
for epoch in range(2):
    s.set_epoch(epoch)
    parts = [None] * ws
    dist.all_gather_object(parts, list(s))
    flat = [i for p in parts for i in p]
    assert set(flat) == set(range(21)) and len(flat) == 22, parts
print(f"rank {rank}: sampler OK", flush=True)
