"""fully_shard (FSDP2) and distributed checkpoints on the MPI backend (CPU), 2 and 4 ranks.

The workers (workers/fsdp_*.py) compare against single-process training of the same tiny GPT on
the concatenated batch; see their docstrings for what each checks."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from dist_helpers import launch_ok, needs_mpi


@needs_mpi
@pytest.mark.parametrize("nproc", [2, 4])
def test_fsdp_training_matches_single_process(nproc):
    # float32 with reshard_after_forward on/off, the freed unsharded storage, gradient accumulation,
    # clip_grad_norm_, activation checkpointing (outside and inside blocks), prefetching, bf16
    out = launch_ok("fsdp_train.py", nproc=nproc, ok="fsdp train OK")
    mem = json.loads(re.search(r"^MEM (.*)$", out, re.M).group(1))
    assert mem["world"] == nproc, out
    full = sum(mem["unsharded"].values())
    for r, m in enumerate(mem["per_rank"]):
        # about 1/N of the parameter + gradient + AdamW bytes (padding rows, replicated steps)
        assert sum(m.values()) < full / nproc * 1.35 + 256, (r, m, mem["unsharded"])
    print("MEM", mem)
    print(re.search(r"BF16 .*", out).group(0))


@needs_mpi
@pytest.mark.parametrize("save_at, load_at", [(4, 2), (2, 4)])
def test_fsdp_checkpoint_reshards(tmp_path, save_at, load_at):
    ckpt = str(tmp_path / "ckpt")
    launch_ok("fsdp_checkpoint.py", "save", ckpt, nproc=save_at, ok="fsdp checkpoint save OK")
    launch_ok("fsdp_checkpoint.py", "load", ckpt, nproc=load_at, ok="fsdp checkpoint load OK")


@needs_mpi
@pytest.mark.parametrize("nproc", [2, 4])
def test_fsdp_less_common_uses(nproc):
    launch_ok("fsdp_edges.py", nproc=nproc, ok="fsdp edges OK")


@needs_mpi
def test_fsdp_errors_on_every_rank(tmp_path):
    launch_ok("fsdp_errors.py", str(tmp_path / "ckpt"), nproc=2, ok="fsdp errors OK")


def test_dcp_round_trip_without_process_group(tmp_path):
    """A plain model and its AdamW state through dcp.save/load in one process (no_dist): bfloat16
    and 0-dim tensors, JSON values, and loading into differently initialized objects."""
    import tinytorch as tt
    import tinytorch.distributed.checkpoint as dcp
    import tinytorch.nn as nn
    from tinytorch.distributed.checkpoint.state_dict import (get_model_state_dict, get_optimizer_state_dict,
                                                             set_model_state_dict, set_optimizer_state_dict)

    def build(seed):
        tt.manual_seed(seed)
        m = nn.Sequential(nn.Linear(3, 5), nn.LayerNorm(5))
        m.register_buffer("lowp", tt.randn(4, 2).bfloat16())
        return m, tt.optim.AdamW(m.parameters(), lr=0.1)

    m, opt = build(0)
    m(tt.randn(2, 3)).sum().backward()
    opt.step()
    index = dcp.save({"model": get_model_state_dict(m), "optim": get_optimizer_state_dict(m, opt), "note": "x"},
                     checkpoint_id=tmp_path, no_dist=True)
    assert index["tensors"]["model.0.weight"]["chunks"] == [{"file": "__0_0.safetensors", "rows": [0, 5]}]
    m2, opt2 = build(1)
    sd = {"model": get_model_state_dict(m2), "optim": get_optimizer_state_dict(m2, opt2), "note": ""}
    dcp.load(sd, checkpoint_id=tmp_path, no_dist=True)
    set_model_state_dict(m2, sd["model"])
    set_optimizer_state_dict(m2, opt2, sd["optim"])
    assert sd["note"] == "x"
    for (k, a), b in zip(m.state_dict().items(), m2.state_dict().values()):
        np.testing.assert_array_equal(a.float().numpy(), b.float().numpy(), err_msg=k)
    for p, q in zip(m.parameters(), m2.parameters()):
        for key in ("step", "exp_avg", "exp_avg_sq"):
            np.testing.assert_array_equal(opt.state[p][key].numpy(), opt2.state[q][key].numpy(), err_msg=key)
    assert opt2.param_groups[0]["betas"] == opt.param_groups[0]["betas"]
