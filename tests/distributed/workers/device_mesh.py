"""init_device_mesh over the world: each mesh dimension's groups sum exactly the ranks of their line."""
import faulthandler
import sys

import numpy as np

import tinytorch as tt
import tinytorch.distributed as dist
from tinytorch.distributed.device_mesh import init_device_mesh

faulthandler.dump_traceback_later(100, exit=True)
dist.init_process_group()
rank, ws = dist.get_rank(), dist.get_world_size()
shape = tuple(int(s) for s in sys.argv[1].split("x"))
mesh = init_device_mesh("cpu", shape, mesh_dim_names=("dp", "tp")[:len(shape)])
grid = np.arange(ws).reshape(shape)
coordinate = [int(i) for i in np.argwhere(grid == rank)[0]]
assert mesh.get_coordinate() == coordinate and mesh.shape == shape and mesh.size() == ws
for dim, name in enumerate(mesh.mesh_dim_names):
    line = np.moveaxis(grid, dim, -1)[tuple(c for d, c in enumerate(coordinate) if d != dim)]
    g = mesh.get_group(name)
    assert dist.get_process_group_ranks(g) == line.tolist(), (name, dist.get_process_group_ranks(g), line)
    assert mesh.get_local_rank(name) == coordinate[dim] == dist.get_rank(g)
    t = tt.tensor([float(rank)])
    dist.all_reduce(t, group=g)
    assert float(t) == float(line.sum()), (name, float(t), line)
    sub = mesh[name]
    assert sub.ndim == 1 and sub.mesh.tolist() == line.tolist() and sub.get_group() is g
try:
    init_device_mesh("cpu", (ws + 1,))
except ValueError as e:
    assert "world size" in str(e)
else:
    raise AssertionError("a mesh larger than the world was accepted")
print(f"mesh OK {rank}", flush=True)
dist.destroy_process_group()
