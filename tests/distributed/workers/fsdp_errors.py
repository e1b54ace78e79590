"""Bad input to fully_shard, the state-dict functions and dcp: clear errors naming the argument,
raised on every rank alike (each case ends with a barrier: no rank is left in a collective)."""
import os
import sys

import tinytorch as tt
import tinytorch.distributed as dist
import tinytorch.distributed.checkpoint as dcp
import tinytorch.nn as nn
from tinytorch.distributed import init_device_mesh
from tinytorch.distributed.checkpoint.state_dict import (StateDictOptions, get_model_state_dict,
                                                         set_model_state_dict)
from tinytorch.distributed.fsdp import fully_shard

from fsdp_common import GPT, make_model

ckpt = sys.argv[1]
dist.init_process_group()
rank, world = dist.get_rank(), dist.get_world_size()


def raises(exc, *needles):
    class _Check:
        def __enter__(self):
            return self

        def __exit__(self, typ, value, tb):
            assert typ is not None, f"expected {exc.__name__} containing {needles}"
            assert issubclass(typ, exc), f"expected {exc.__name__}, got {typ.__name__}: {value}"
            for n in needles:
                assert n in str(value), f"{n!r} not in: {value}"
            dist.barrier()        # every rank raised and got here
            return True
    return _Check()


def sharded(model):
    for b in model.blocks:
        fully_shard(b)
    return fully_shard(model)


# ---- fully_shard's arguments
with raises(NotImplementedError, "mesh must be 1-D"):
    fully_shard(make_model().blocks[0], mesh=init_device_mesh("cpu", (1, 2)))
with raises(ValueError, "mesh.device_type is 'cuda'"):
    fully_shard(make_model().blocks[0], mesh=init_device_mesh("cuda", (2,)))
m = make_model()
fully_shard(m.blocks[0])
with raises(ValueError, "already sharded (an FSDPModule)"):
    fully_shard(m.blocks[0])
m = make_model()
fully_shard(m)
with raises(ValueError, "apply fully_shard bottom-up"):
    fully_shard(m.blocks[0])
with raises(NotImplementedError, "reshard_after_forward must be a bool"):
    fully_shard(make_model(), reshard_after_forward=2)
# every rank must build the same model: a collective check, raised on all ranks
with raises(RuntimeError, "differ across ranks"):
    fully_shard(nn.Linear(4, 3 + rank))

# ---- a checkpoint of another model
model = sharded(make_model())
dcp.save({"model": get_model_state_dict(model)}, checkpoint_id=ckpt)
three = sharded(make_model(n_blocks=3))       # blocks.2.* are not in the checkpoint
with raises(RuntimeError, "missing keys", "model.blocks.2.fc1.weight"):
    dcp.load({"model": get_model_state_dict(three)}, checkpoint_id=ckpt)
one = sharded(make_model(n_blocks=1))         # the checkpoint's blocks.1.* are not in the model
with raises(RuntimeError, "unexpected keys", "model.blocks.1.fc1.weight"):
    dcp.load({"model": get_model_state_dict(one)}, checkpoint_id=ckpt)


class Wider(GPT):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(8, 14)
wide = sharded(Wider())
with raises(RuntimeError, "size mismatch for model.head.weight", "[13, 8]", "[14, 8]"):
    dcp.load({"model": get_model_state_dict(wide)}, checkpoint_id=ckpt)
# only rank 1's template is wrong: every rank raises (rank 0 names rank 1)
sd = get_model_state_dict(model)
if rank == 1:
    sd["extra.weight"] = sd.pop("ln_f.weight")
with raises(RuntimeError, "missing keys", "model.extra.weight", *(["(raised on rank 1)"] if rank == 0 else [])):
    dcp.load({"model": sd}, checkpoint_id=ckpt)
with raises(FileNotFoundError, "checkpoint_id", "is not a directory"):
    dcp.load({"model": get_model_state_dict(model)}, checkpoint_id=os.path.join(ckpt, "nowhere"))
with raises(TypeError, "state_dict['step_fn']", "nothing is pickled"):
    dcp.save({"step_fn": print}, checkpoint_id=ckpt + "_bad")
with raises(ValueError, "rank 1's state_dict has other keys"):
    dcp.save({"a": tt.zeros(2)} if rank == 0 else {"b": tt.zeros(2)}, checkpoint_id=ckpt + "_bad")

# ---- set_model_state_dict with the wrong names / shapes
full = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True))
bad = dict(full)
bad.pop("head.bias")
bad["head.weight"] = tt.zeros(14, 8)
with raises(RuntimeError, 'Missing key(s) in state_dict: "head.bias"', "size mismatch for head.weight"):
    set_model_state_dict(model, bad, options=StateDictOptions(full_state_dict=True))
with raises(ValueError, "broadcast_from_rank0=True needs full_state_dict=True"):
    set_model_state_dict(model, full, options=StateDictOptions(broadcast_from_rank0=True))
keys = set_model_state_dict(model, {k: v for k, v in full.items() if k != "head.bias"},
                            options=StateDictOptions(full_state_dict=True, strict=False))
assert keys.missing_keys == ["head.bias"] and keys.unexpected_keys == [], keys
dist.barrier()
dist.destroy_process_group()
print(f"rank {rank}: fsdp errors OK", flush=True)
