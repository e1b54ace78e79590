"""Distributed checkpoints of an FSDP model and its AdamW state.

``save DIR`` (run at 4 ranks): trains 2 steps, checks the full state dicts against single-process
training, saves the sharded state with dcp.save, trains 3 more steps and records their losses in
DIR/expected.json. ``load DIR`` (run at 2 ranks): a differently initialized model and a fresh
optimizer load the checkpoint (resharding 4 -> 2) and must continue with the same losses; rank 0
also loads it into a plain, unsharded model in one process (no_dist=True)."""
import json
import os
import sys

import numpy as np

import tinytorch as tt
import tinytorch.distributed as dist
import tinytorch.distributed.checkpoint as dcp
from tinytorch.distributed.checkpoint.state_dict import (StateDictOptions, get_model_state_dict,
                                                         get_optimizer_state_dict, set_model_state_dict,
                                                         set_optimizer_state_dict)
from tinytorch.distributed.fsdp import ShardedTensor, fully_shard

from fsdp_common import batch, loss_of, make_model, reference_losses, rel_close

phase, ckpt = sys.argv[1], sys.argv[2]
dist.init_process_group()
rank, world = dist.get_rank(), dist.get_world_size()
LR, FIRST, THEN = 1e-2, 2, 3
DATA_WORLD = 4                         # the global batch is 4 ranks' worth at 2 and 4 ranks alike


def build(seed):
    model = make_model(seed)
    for b in model.blocks:
        fully_shard(b)
    fully_shard(model)
    return model, tt.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.1)


def my_batch(step):
    """The same global batch at any world size: this rank's share of DATA_WORLD ranks' batches."""
    per = DATA_WORLD // world
    parts = [batch(step, r) for r in range(rank * per, (rank + 1) * per)]
    return tuple(tt.cat([p[i] for p in parts]) for i in range(3))


def train(model, opt, start, steps):
    losses = []
    for step in range(start, start + steps):
        opt.zero_grad()
        loss = loss_of(model, *my_batch(step))
        loss.backward()
        opt.step()
        t = loss.detach().clone()
        dist.all_reduce(t)
        losses.append(float(t.item()) / world)
    return losses


def names_of(model):
    return {id(p): n for n, p in model.named_parameters()}


if phase == "save":
    model, opt = build(0)
    train(model, opt, 0, FIRST)
    _, _, ref, ref_opt = reference_losses(FIRST, DATA_WORLD, lr=LR)
    # full state dicts: every rank gets the gathered tensors, equal to one process's
    full = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True))
    want = ref.state_dict()
    assert list(full) == list(want), (list(full), list(want))
    for k, v in want.items():
        np.testing.assert_allclose(full[k].numpy(), v.numpy(), rtol=1e-5, atol=1e-6, err_msg=k)
    osd = get_optimizer_state_dict(model, opt, options=StateDictOptions(full_state_dict=True))
    ref_names = names_of(ref)
    for p, st in ref_opt.state.items():
        got = osd["state"][ref_names[id(p)]]
        for key in ("exp_avg", "exp_avg_sq", "step"):
            np.testing.assert_allclose(got[key].numpy(), st[key].numpy(), rtol=1e-4, atol=1e-7,
                                       err_msg=f"{ref_names[id(p)]}[{key}]")
    assert osd["param_groups"][0]["params"] == [n for n, _ in ref.named_parameters()]
    # cpu_offload: only rank 0 keeps the full state dict
    off = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
    assert (len(off) == len(want)) if rank == 0 else off == {}, (rank, len(off))
    # the sharded state dict: this rank's rows, sharing storage with the parameters
    sd = get_model_state_dict(model)
    w = sd["tok.weight"]
    assert isinstance(w, ShardedTensor) and w.shape == (13, 8) and w.to_local().shape[0] == w.stop - w.start
    assert w.to_local()._impl.storage_ptr == model.tok.weight._impl.storage_ptr
    dcp.save({"model": sd, "optim": get_optimizer_state_dict(model, opt), "epoch": 7}, checkpoint_id=ckpt)
    later = train(model, opt, FIRST, THEN)
    ref_later, _, _, _ = reference_losses(THEN, DATA_WORLD, lr=LR, model=ref, opt=ref_opt, start=FIRST)
    rel_close(later, ref_later, 1e-5, "training after the save")
    if rank == 0:
        with open(os.path.join(ckpt, "expected.json"), "w") as f:
            json.dump({"losses": later, "world": world}, f)
        index = json.load(open(os.path.join(ckpt, "metadata.json")))
        chunks = index["tensors"]["model.head.weight"]["chunks"]
        print(f"INDEX head.weight chunks={chunks}", flush=True)
        files = sorted(f for f in os.listdir(ckpt) if f.endswith(".safetensors"))
        assert files == [f"__{r}_0.safetensors" for r in range(world)], files
        assert index["world_size"] == world and index["values"]["epoch"] == 7
else:
    expected = json.load(open(os.path.join(ckpt, "expected.json")))
    assert expected["world"] != world, "the point is to load on another world size"
    model, opt = build(123)                              # other weights: loading must replace them all
    state = {"model": get_model_state_dict(model), "optim": get_optimizer_state_dict(model, opt), "epoch": 0}
    dcp.load(state, checkpoint_id=ckpt)
    assert state["epoch"] == 7
    set_model_state_dict(model, state["model"])
    set_optimizer_state_dict(model, opt, state["optim"])
    assert float(opt.state[model.head.weight]["step"].item()) == FIRST
    later = train(model, opt, FIRST, THEN)
    rel_close(later, expected["losses"], 1e-5, f"resumed at {world} ranks from a {expected['world']}-rank checkpoint")
    # a full state dict from rank 0 alone, broadcast: the same weights as the checkpoint's model
    full = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
    other, _ = build(7)
    set_model_state_dict(other, full if rank == 0 else {},
                         options=StateDictOptions(full_state_dict=True, broadcast_from_rank0=True))
    again = get_model_state_dict(other, options=StateDictOptions(full_state_dict=True))
    mine = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True))
    for k in mine:
        np.testing.assert_array_equal(again[k].numpy(), mine[k].numpy(), err_msg=k)
    if rank == 0:
        # the checkpoint into a plain model, in this process alone: whole tensors from every file
        plain = make_model(5)
        sd = {"model": plain.state_dict()}
        dcp.load(sd, checkpoint_id=ckpt, no_dist=True)
        _, _, ref, _ = reference_losses(FIRST, DATA_WORLD, lr=LR)
        for k, v in ref.state_dict().items():
            np.testing.assert_allclose(plain.state_dict()[k].numpy(), v.numpy(), rtol=1e-5, atol=1e-6, err_msg=k)
dist.barrier()
dist.destroy_process_group()
print(f"rank {rank}: fsdp checkpoint {phase} OK", flush=True)
