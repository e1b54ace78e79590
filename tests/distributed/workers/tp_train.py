"""Tensor-parallel training against single-process training of the same weights (float32): the
outputs, the input gradient and every parameter's gradient (a shard's against the matching slice of
the whole gradient), then the loss after an SGD step. Cases: a column- then row-parallel MLP with
biases; whole tiny Llama models under tensor_parallel_plan (vocabulary-parallel embedding, untied
and tied with the LM head, whose logits are gathered before the cross-entropy); a sequence-parallel
block (SequenceParallel norm, all-gather into the column-parallel layer, reduce-scatter out of the
row-parallel one) with PrepareModuleInput/PrepareModuleOutput around it. At 4 ranks also TP
composed with FSDP on a 2 x 2 (dp, tp) mesh: the plan over mesh["tp"], fully_shard over mesh["dp"]
on each layer and the root, each dp line training on its own batch, the losses (averaged over dp)
against single-process AdamW on the concatenated batch within 1e-5 relative."""
import faulthandler

import numpy as np

import tinytorch as tt
import tinytorch.distributed as dist
import tinytorch.nn as nn
import tinytorch.nn.functional as F
from tinytorch.distributed.device_mesh import init_device_mesh
from tinytorch.distributed.tensor import Replicate, Shard
from tinytorch.distributed.fsdp import fully_shard
from tinytorch.distributed.tensor.parallel import (ColwiseParallel, PrepareModuleInput, PrepareModuleOutput,
                                                   RowwiseParallel, SequenceParallel, parallelize_module)
from tinytorch.models import LlamaConfig, LlamaForCausalLM, tensor_parallel_plan

faulthandler.dump_traceback_later(150, exit=True)
dist.init_process_group()
rank, ws = dist.get_rank(), dist.get_world_size()
mesh = init_device_mesh("cpu", (ws,))
RTOL = 1e-5


def close(actual, expected, what):
    # atol at RTOL of the tensor's largest value: a gradient summed in another order (sharded matmuls)
    # differs by float32 rounding of its largest terms, which a near-zero element can't hide (the
    # AVX2 and AVX-512 kernels sum in different orders, too)
    a, e = actual.detach().numpy(), expected.detach().numpy()
    np.testing.assert_allclose(a, e, rtol=RTOL, atol=RTOL * max(float(np.abs(e).max()), 1e-30), err_msg=what)


def local_slice(full, shard):
    """The slice of full that this rank's shard holds (the one dimension where their sizes differ)."""
    if tuple(full.shape) == tuple(shard.shape):
        return full
    dims = [d for d in range(full.dim()) if full.shape[d] != shard.shape[d]]
    assert len(dims) == 1 and full.shape[dims[0]] == ws * shard.shape[dims[0]], (full.shape, shard.shape)
    n = shard.shape[dims[0]]
    return full.narrow(dims[0], rank * n, n)


def compare_grads(tp, ref, what):
    ref_params = dict(ref.named_parameters())
    names = [n for n, _ in tp.named_parameters()]
    assert names == list(ref_params), (names, list(ref_params))
    for name, p in tp.named_parameters():
        r = ref_params[name]
        assert p.grad is not None and r.grad is not None, f"{what}: {name} has no gradient"
        close(p.grad, local_slice(r.grad, p.grad), f"{what}: gradient of {name}")
        close(p, local_slice(r, p), f"{what}: value of {name}")


def step_both(tp, ref, loss_fn, what, steps=2):
    """Forward/backward/SGD steps on both, comparing losses and gradients each step."""
    opt = tt.optim.SGD(tp.parameters(), lr=0.05)
    ref_opt = tt.optim.SGD(ref.parameters(), lr=0.05)
    for step in range(steps):
        opt.zero_grad()
        ref_opt.zero_grad()
        loss, ref_loss = loss_fn(tp), loss_fn(ref)
        close(loss, ref_loss, f"{what}: loss at step {step}")
        loss.backward()
        ref_loss.backward()
        compare_grads(tp, ref, f"{what} step {step}")
        opt.step()
        ref_opt.step()


def check_mse_training(tp, ref, xs, target, what):
    """The mean squared error against target on input xs: the outputs, the input gradient and every
    parameter's gradient against ref's, then SGD steps on both."""
    x_tp, x_ref = xs.clone().requires_grad_(True), xs.clone().requires_grad_(True)
    out, ref_out = tp(x_tp), ref(x_ref)
    close(out, ref_out, f"{what} output")
    ((out - target) ** 2).mean().backward()
    ((ref_out - target) ** 2).mean().backward()
    close(x_tp.grad, x_ref.grad, f"{what} input gradient")
    compare_grads(tp, ref, what)
    step_both(tp, ref, lambda m: ((m(xs) - target) ** 2).mean(), what)


# ------------------------------------------------------------------ column- then row-parallel MLP
class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.Linear(16, 32)
        self.down = nn.Linear(32, 16)

    def forward(self, x):
        return self.down(F.gelu(self.up(x)))


def mlp_case():
    tt.manual_seed(1)
    ref = MLP()
    tt.manual_seed(1)
    tp = parallelize_module(MLP(), mesh, {"up": ColwiseParallel(), "down": RowwiseParallel()})
    assert tp.up.weight.shape == (32 // ws, 16) and tp.down.weight.shape == (16, 32 // ws)
    rng = np.random.default_rng(0)
    xs = tt.tensor(rng.standard_normal((3, 5, 16)), dtype=tt.float32)
    target = tt.tensor(rng.standard_normal((3, 5, 16)), dtype=tt.float32)
    check_mse_training(tp, ref, xs, target, "MLP")


# ----------------------------------------------------------------------------- whole Llama models
def llama_case(model_type, **extra):
    heads = 4 if ws <= 2 else 2 * ws
    cfg = LlamaConfig(model_type=model_type, vocab_size=96, hidden_size=32, intermediate_size=64,
                      num_hidden_layers=2, num_attention_heads=heads, num_key_value_heads=heads // 2,
                      max_position_embeddings=32, **extra)
    tt.manual_seed(3)
    ref = LlamaForCausalLM(cfg)
    tt.manual_seed(3)
    tp = LlamaForCausalLM(cfg)
    parallelize_module(tp, mesh, tensor_parallel_plan(tp))
    rng = np.random.default_rng(5)
    ids = tt.tensor(rng.integers(0, 96, (2, 9)))
    targets = tt.tensor(rng.integers(0, 96, (2 * 9,)))

    def loss(m):
        return F.cross_entropy(m(ids).reshape(-1, cfg.vocab_size), targets)
    step_both(tp, ref, loss, model_type)
    if cfg.tie_word_embeddings:
        assert tp.lm_head.weight is tp.model.embed_tokens.weight


# ------------------------------------------------------------------------------ sequence parallel
class SPBlock(nn.Module):
    """x + down(gelu(up(norm(x)))) on a sequence shard."""

    def __init__(self):
        super().__init__()
        self.norm = nn.RMSNorm(16)
        self.up = nn.Linear(16, 32)
        self.down = nn.Linear(32, 16, bias=False)

    def forward(self, x):
        return x + self.down(F.gelu(self.up(self.norm(x))))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = SPBlock()
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        return self.head(self.block(x))


def sp_case():
    T = 4 * ws
    tt.manual_seed(4)
    ref = Net()
    tt.manual_seed(4)
    tp = Net()
    with tt.no_grad():
        ref.block.norm.weight.copy_(tt.rand(16) + 0.5)
        tp.block.norm.weight.copy_(ref.block.norm.weight)
    parallelize_module(tp, mesh, {
        # the block gets the whole sequence and hands it back whole; inside it runs on shards
        "block": PrepareModuleInput(input_layouts=(Replicate(),), desired_input_layouts=(Shard(1),)),
        "block.norm": SequenceParallel(),
        "block.up": ColwiseParallel(input_layouts=Shard(1)),
        "block.down": RowwiseParallel(output_layouts=Shard(1)),
    })
    parallelize_module(tp.block, mesh, PrepareModuleOutput(output_layouts=Shard(1), desired_output_layouts=Replicate()))
    rng = np.random.default_rng(2)
    xs = tt.tensor(rng.standard_normal((2, T, 16)), dtype=tt.float32)
    target = tt.tensor(rng.standard_normal((2, T, 4)), dtype=tt.float32)
    check_mse_training(tp, ref, xs, target, "sequence parallel")


# ------------------------------------------------------------------- TP x FSDP on a 2-D mesh
def tp_fsdp_case(steps=4):
    mesh2 = init_device_mesh("cpu", (2, ws // 2), mesh_dim_names=("dp", "tp"))
    dp_rank, dp_group = mesh2.get_local_rank("dp"), mesh2["dp"].get_group()
    cfg = LlamaConfig(vocab_size=96, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=32)
    tt.manual_seed(6)
    ref = LlamaForCausalLM(cfg)
    tt.manual_seed(6)
    model = LlamaForCausalLM(cfg)
    parallelize_module(model, mesh2["tp"], tensor_parallel_plan(model))
    for layer in model.model.layers:
        fully_shard(layer, mesh=mesh2["dp"])
    fully_shard(model, mesh=mesh2["dp"])
    opt = tt.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)
    ref_opt = tt.optim.AdamW(ref.parameters(), lr=1e-2, weight_decay=0.1)

    def batch(step, dp):
        r = np.random.default_rng(100 * step + dp)
        return tt.tensor(r.integers(0, 96, (2, 9))), tt.tensor(r.integers(0, 96, (2 * 9,)))

    def loss_of(m, ids, targets):
        return F.cross_entropy(m(ids).reshape(-1, cfg.vocab_size), targets)
    for step in range(steps):
        opt.zero_grad()
        ref_opt.zero_grad()
        loss = loss_of(model, *batch(step, dp_rank))       # the tp ranks of a dp line share its batch
        loss.backward()
        opt.step()
        parts = [batch(step, d) for d in range(2)]
        ref_loss = loss_of(ref, tt.cat([p[0] for p in parts]), tt.cat([p[1] for p in parts]))
        ref_loss.backward()
        ref_opt.step()
        mean = loss.detach().clone()
        dist.all_reduce(mean, group=dp_group)
        a, e = float(mean.item()) / 2, float(ref_loss.item())
        assert abs(a - e) <= RTOL * abs(e), f"TP x FSDP: loss at step {step}: {a} against single-process {e}"
    if rank == 0:
        print(f"TP x FSDP on a 2x{ws // 2} mesh: losses match single-process training over {steps} steps",
              flush=True)


mlp_case()
llama_case("llama")
llama_case("qwen2", tie_word_embeddings=True)
sp_case()
if ws == 4:
    tp_fsdp_case()
dist.barrier()
print(f"rank {rank}: TP training OK", flush=True)
dist.destroy_process_group()
