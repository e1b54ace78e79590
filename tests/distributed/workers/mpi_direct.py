"""Started by plain `mpiexec -n 2` (no launcher, no env vars): the MPI world is the group."""
import tinytorch as tt
import tinytorch.distributed as dist

dist.init_process_group("mpi")
t = tt.ones(3) * (dist.get_rank() + 1)
dist.all_reduce(t)
assert t.tolist() == [3.0, 3.0, 3.0], t
print(f"rank {dist.get_rank()}: direct OK", flush=True)
