"""FSDP (fully_shard) training against single-process training on the concatenated batch.

Every rank runs the reference itself (the model is tiny) and checks its own FSDP run against it:
losses (float32: 1e-5 relative), the gathered parameters, memory per rank, gradient accumulation
with set_requires_gradient_sync, clip_grad_norm_, activation checkpointing, prefetching, and mixed
precision. Prints one ``fsdp train OK`` line per rank; rank 0 also prints ``MEM``/``BF16`` lines
with the measured numbers."""
import json
import sys

import numpy as np

import tinytorch as tt
import tinytorch.distributed as dist
import tinytorch.nn as nn
from tinytorch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict
from tinytorch.distributed.fsdp import FSDPModule, MixedPrecisionPolicy, fully_shard

from fsdp_common import (batch, global_batch, loss_of, make_model, reference_losses, rel_close, state_bytes)

dist.init_process_group()
rank, world = dist.get_rank(), dist.get_world_size()
STEPS = 4
cases = sys.argv[1].split(",") if len(sys.argv) > 1 else ["all"]


def want(name):
    return "all" in cases or name in cases


def shard(model, reshard_after_forward=True, mp_policy=MixedPrecisionPolicy()):
    for b in model.blocks:
        fully_shard(b, reshard_after_forward=reshard_after_forward, mp_policy=mp_policy)
    fully_shard(model, reshard_after_forward=reshard_after_forward, mp_policy=mp_policy)
    return model


def train(model, steps=STEPS, micro=1, clip=None, lr=1e-2, on_step=None):
    opt = tt.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.1)
    losses, norms = [], []
    for step in range(steps):
        opt.zero_grad()
        total = tt.zeros(())
        for k in range(micro):
            last = k == micro - 1
            model.set_requires_gradient_sync(last)
            loss = loss_of(model, *batch(micro * step + k, rank)) / micro
            loss.backward()
            if not last:
                assert all(p.grad is None for p in model.parameters()), "no-sync backward must not reduce"
            total = total + loss.detach()
        if clip is not None:
            norms.append(float(nn.utils.clip_grad_norm_(model.parameters(), clip).item()))
        if on_step is not None:
            on_step(model, opt)
        opt.step()
        dist.all_reduce(total)
        losses.append(float(total.item()) / world)
    return losses, norms, opt


def full_params(model):
    sd = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True))
    return {k: v.numpy() for k, v in sd.items()}


def check_params(model, ref, what, rtol=1e-5, atol=1e-6):
    got = full_params(model)
    for k, v in ref.state_dict().items():
        np.testing.assert_allclose(got[k], v.numpy(), rtol=rtol, atol=atol, err_msg=f"{what}: {k}")


ref_losses, _, ref_model, ref_opt = reference_losses(STEPS, world)

# ---- float32, reshard_after_forward on and off: the same losses and parameters as one process
for raf in (True, False):
    if not want("fp32"):
        break
    model = shard(make_model(), reshard_after_forward=raf)
    assert isinstance(model, FSDPModule) and type(model).__name__ == "FSDPGPT"
    assert isinstance(model.blocks[0], FSDPModule) and not isinstance(model.blocks, FSDPModule)
    losses, _, opt = train(model)
    rel_close(losses, ref_losses, 1e-5, f"fp32 reshard_after_forward={raf}")
    check_params(model, ref_model, f"fp32 reshard_after_forward={raf}")
    if raf:
        mem = state_bytes(model, opt)
        full = state_bytes(ref_model, ref_opt)
        counts = [None] * world
        dist.all_gather_object(counts, mem)
        if rank == 0:
            print("MEM " + json.dumps({"world": world, "unsharded": full, "per_rank": counts}), flush=True)
        total, total_full = sum(mem.values()), sum(full.values())
        # 1/N of the unsharded bytes, plus padding rows and the replicated 4-byte AdamW steps
        assert total <= total_full / world * 1.35 + 4 * 64, (mem, full)

# ---- reshard_after_forward really frees: after forward no storage of a block's unsharded weight
# is held by the graph (its storage use count is ours alone), and backward still matches
if want("free"):
    model = shard(make_model())
    grabbed = []
    model.blocks[0].fc1.register_forward_hook(lambda m, a, o: grabbed.append(m.weight._impl))
    loss = loss_of(model, *batch(0, rank))
    # the TensorImpl the forward used: no other TensorImpl shares its storage, and nothing but our
    # list refers to it (not the autograd graph, not the module): its memory goes with our list
    assert grabbed[0].storage_use_count == 1, f"unsharded fc1.weight shared ({grabbed[0].storage_use_count})"
    assert sys.getrefcount(grabbed[0]) == 2, f"unsharded fc1.weight still referenced ({sys.getrefcount(grabbed[0])})"
    assert model.blocks[0].fc1.weight.shape[0] < 10 or world == 1, "outside forward the parameter is the shard"
    grabbed.clear()
    loss.backward()
    ref = make_model()
    loss_of(ref, *global_batch(0, world)).backward()
    sharded = model.blocks[0].fc1.weight
    full_grad = sharded._fsdp_param.sharded_state(sharded.grad).full_tensor()
    np.testing.assert_allclose(full_grad.numpy(), ref.blocks[0].fc1.weight.grad.numpy(), rtol=1e-5, atol=1e-7)

# ---- gradient accumulation: two micro-batches, the first without gradient sync
if want("accum"):
    ref_acc, _, _, _ = reference_losses(STEPS, world, micro=2)
    model = shard(make_model())
    losses, _, _ = train(model, micro=2)
    rel_close(losses, ref_acc, 1e-5, "gradient accumulation (set_requires_gradient_sync)")

# ---- clip_grad_norm_ on the shards: the global norm, and the same clipped training
if want("clip"):
    ref_c, ref_norms, _, _ = reference_losses(STEPS, world, clip=0.5)
    model = shard(make_model())
    losses, norms, _ = train(model, clip=0.5)
    rel_close(norms, ref_norms, 1e-5, "clip_grad_norm_ total norm")
    rel_close(losses, ref_c, 1e-5, "clipped training")
    assert max(ref_norms) > 0.5, ref_norms        # the clip was active
    ref = make_model()
    loss_of(ref, *global_batch(0, world)).backward()
    model = shard(make_model())
    loss_of(model, *batch(0, rank)).backward()
    for norm_type in (1.0, 3.0, float("inf")):    # max_norm large: measures without scaling
        got = float(nn.utils.clip_grad_norm_(model.parameters(), 1e9, norm_type=norm_type).item())
        expect = float(nn.utils.clip_grad_norm_(ref.parameters(), 1e9, norm_type=norm_type).item())
        rel_close([got], [expect], 1e-5, f"clip_grad_norm_ norm_type={norm_type}")

# ---- activation checkpointing composes: checkpoint(block, x) re-runs the block's forward (and its
# all-gather) inside backward; a checkpoint inside the block re-runs with the block's unsharded
# parameters, all-gathered again by the block's pre-backward hook
for where in ("outer", "inner"):      # checkpoint(block, x) / checkpoint(mlp, h) inside each block
    for raf in (True, False):
        if want("ckpt"):
            model = shard(make_model(act_ckpt=where), reshard_after_forward=raf)
            losses, _, _ = train(model)
            rel_close(losses, ref_losses, 1e-5, f"activation checkpointing ({where}, reshard_after_forward={raf})")

# ---- explicit forward/backward prefetching: all-gathers issued early, same numbers
if want("prefetch"):
    model = shard(make_model())
    b0, b1 = model.blocks
    b0.set_modules_to_forward_prefetch([b1])
    b1.set_modules_to_backward_prefetch([b0])
    losses, _, _ = train(model)
    rel_close(losses, ref_losses, 1e-5, "prefetch")

# ---- mixed precision: bfloat16 parameters and compute, float32 gradient reduction. The reference
# emulates it in one process (a bfloat16 copy of float32 master weights computes each rank's
# micro-batch, gradients averaged in float32, AdamW on the float32 masters). Tolerances: against the
# emulation 1e-3, since only the float32 order of the gradient sum differs (~1e-7 relative), which
# at worst flips the bfloat16 rounding of a few weights (2**-8 relative each, diluted in the loss);
# against float32 training 1e-2, bfloat16's precision: unit roundoff 2**-9 = 2e-3 per rounding, a
# few roundings deep (weights, matmul outputs, activations), averaged over every logit.
if want("bf16"):
    mp = MixedPrecisionPolicy(param_dtype=tt.bfloat16, reduce_dtype=tt.float32)
    model = shard(make_model(), mp_policy=mp)
    losses, _, _ = train(model)
    master = make_model()
    mopt = tt.optim.AdamW(master.parameters(), lr=1e-2, weight_decay=0.1)
    emu = []
    for step in range(STEPS):
        mopt.zero_grad()
        low = make_model()
        with tt.no_grad():
            for p, q in zip(low.parameters(), master.parameters()):
                p.data = q.detach().to(tt.bfloat16)
        total, acc = 0.0, [tt.zeros(q.shape) for q in master.parameters()]
        for r in range(world):
            low.zero_grad()
            loss = loss_of(low, *batch(step, r))
            loss.backward()
            total += float(loss.item()) / world
            for a, p in zip(acc, low.parameters()):   # each rank's bfloat16 gradient, summed in float32
                a.add_(p.grad.float())
        for a, q in zip(acc, master.parameters()):
            q.grad = a / world
        mopt.step()
        emu.append(total)
    e_emu = rel_close(losses, emu, 1e-3, "bf16 against the emulated reference")
    e_fp32 = rel_close(losses, ref_losses, 1e-2, "bf16 against float32 training")
    assert all(p.dtype == tt.float32 for p in model.parameters()), "the shards stay float32"
    if rank == 0:
        print(f"BF16 world={world} rel_err_vs_emulated={e_emu:.2e} rel_err_vs_fp32={e_fp32:.2e}", flush=True)

dist.barrier()
dist.destroy_process_group()
print(f"rank {rank}: fsdp train OK", flush=True)
