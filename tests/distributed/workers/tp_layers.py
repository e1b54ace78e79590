"""Parallel styles on single layers against the whole layer (no grad): nn.Linear column-/row-wise
with each input/output layout, nn.Embedding split by embedding dim and by vocabulary (padding_idx,
every token range), packed QuantizedLinear rows and whole-block columns (Q4_1, Q4_K, Q6_K); a
dp x tp mesh (4 ranks) with the model on its tp sub-mesh; and the errors: a plan naming a missing
module, heads not divisible by the mesh, a 2-D mesh, sizes that do not split, unsupported modules
and formats, a module parallelized twice, a single-process KV cache."""
import faulthandler

import numpy as np

import tinytorch as tt
import tinytorch.distributed as dist
import tinytorch.nn as nn
from tinytorch.distributed.device_mesh import init_device_mesh
from tinytorch.distributed.tensor import Replicate, Shard
from tinytorch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module
from tinytorch.models import LlamaConfig, LlamaForCausalLM, tensor_parallel_plan
from tinytorch.nn import QuantizedLinear

faulthandler.dump_traceback_later(150, exit=True)
dist.init_process_group()
rank, ws = dist.get_rank(), dist.get_world_size()
mesh = init_device_mesh("cpu", (ws,))
rng = np.random.default_rng(0)


def close(actual, expected, what):
    a, e = actual.numpy(), expected.numpy()
    np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-6 * max(float(np.abs(e).max()), 1e-30), err_msg=what)


def mine(full, dim):
    n = full.shape[dim] // ws
    return full.narrow(dim, rank * n, n)


def raises(exc, words, fn):
    try:
        fn()
    except exc as e:
        for w in words:
            assert w in str(e), f"{w!r} not in the {exc.__name__}: {e}"
        return
    raise AssertionError(f"expected {exc.__name__} mentioning {words}")


def linear(i, o, bias=True):
    tt.manual_seed(11)
    return nn.Linear(i, o, bias=bias)


x = tt.tensor(rng.standard_normal((2, 3, 8)), dtype=tt.float32)
with tt.no_grad():
    full = linear(8, 12)(x)
    for out_layout, want in ((None, mine(full, -1)), (Replicate(), full)):
        m = parallelize_module(linear(8, 12), mesh, ColwiseParallel(output_layouts=out_layout))
        assert (m.weight.shape, m.bias.shape, m.out_features) == ((12 // ws, 8), (12 // ws,), 12 // ws)
        close(m(x), want, f"colwise, output {out_layout}")
    # sequence-sharded input, gathered before the layer
    m = parallelize_module(linear(8, 12), mesh, ColwiseParallel(input_layouts=Shard(1), output_layouts=Replicate()))
    close(m(mine(tt.cat([x] * ws, 1), 1)), linear(8, 12)(tt.cat([x] * ws, 1)), "colwise from a sequence shard")
    xr = tt.tensor(rng.standard_normal((2, 3, 12)), dtype=tt.float32)
    for bias in (False, True):
        want = linear(12, 8, bias)(xr)
        m = parallelize_module(linear(12, 8, bias), mesh, RowwiseParallel())
        assert m.weight.shape == (8, 12 // ws) and m.in_features == 12 // ws
        close(m(mine(xr, -1)), want, f"rowwise, bias={bias}")          # bias added once
        m = parallelize_module(linear(12, 8, bias), mesh, RowwiseParallel(input_layouts=Replicate()))
        close(m(xr), want, f"rowwise from a replicated input, bias={bias}")
    xs = tt.tensor(rng.standard_normal((2, 2 * ws, 12)), dtype=tt.float32)
    m = parallelize_module(linear(12, 8), mesh, RowwiseParallel(output_layouts=Shard(1)))
    close(m(mine(xs, -1)), mine(linear(12, 8)(xs), 1), "rowwise reduce-scattered along the sequence")

    # embeddings: every token id of the vocabulary, padding_idx in another rank's range than 0's
    ids = tt.tensor([[0, 5, 11, 6], [3, 9, 10, 1]])

    def embedding():
        tt.manual_seed(12)
        return nn.Embedding(12, 8, padding_idx=7)
    want = embedding()(ids)
    m = parallelize_module(embedding(), mesh, ColwiseParallel())
    close(m(ids), mine(want, -1), "embedding split by embedding dim")
    m = parallelize_module(embedding(), mesh, ColwiseParallel(output_layouts=Replicate()))
    close(m(ids), want, "embedding split by embedding dim, gathered")
    m = parallelize_module(embedding(), mesh, RowwiseParallel(input_layouts=Replicate()))
    assert m.weight.shape == (12 // ws, 8)
    close(m(ids), want, "vocabulary-parallel embedding")

    # packed GGUF weights: random blocks with small fp16 scales (every other bit pattern is valid)
    FORMATS = {3: (32, 20, (0, 2)), 12: (256, 144, (0, 2)), 14: (256, 210, (208,))}   # Q4_1, Q4_K, Q6_K

    def packed(qtype, n, k, bias=False):
        values, nbytes, halves = FORMATS[qtype]
        r = np.random.default_rng(qtype)
        raw = r.integers(0, 256, (n, k // values, nbytes), dtype=np.uint8)
        for off in halves:
            scale = r.uniform(0.002, 0.02, raw.shape[:2]) * r.choice([-1.0, 1.0], raw.shape[:2])
            raw[:, :, off:off + 2] = scale.astype(np.float16).view(np.uint8).reshape(raw.shape[:2] + (2,))
        b = r.standard_normal(n).astype(np.float32) if bias else None
        return QuantizedLinear(k, n, qtype, raw.reshape(n, -1), b)
    for qtype, n, k in ((3, 8, 64 * ws), (12, 4, 256 * ws), (14, 4 * ws, 256)):
        xq = tt.tensor(rng.standard_normal((3, k)), dtype=tt.float32)
        want = packed(qtype, n, k, bias=True)(xq)
        m = parallelize_module(packed(qtype, n, k, bias=True), mesh, ColwiseParallel(output_layouts=Replicate()))
        assert m.out_features == n // ws and m.qweight.shape[0] == n // ws
        close(m(xq), want, f"packed {m.qtype_name} split by rows")
        if k % (ws * FORMATS[qtype][0]) == 0:
            m = parallelize_module(packed(qtype, n, k, bias=True), mesh, RowwiseParallel(input_layouts=Replicate()))
            assert m.in_features == k // ws
            close(m(xq), want, f"packed {m.qtype_name} split at block boundaries")
    # training through a packed layer: the input gradient of the dequantized weight
    xq = tt.tensor(rng.standard_normal((3, 64 * ws)), dtype=tt.float32)
with tt.enable_grad():
    a, b = xq.clone().requires_grad_(True), xq.clone().requires_grad_(True)
    m = parallelize_module(packed(3, 8, 64 * ws), mesh, RowwiseParallel(input_layouts=Replicate()))
    m(a).sum().backward()
    packed(3, 8, 64 * ws)(b).sum().backward()
    close(a.grad, b.grad, "input gradient through a row-parallel packed layer")


# ------------------------------------------------------------------------------------- errors
def tiny(heads=4, kv_heads=2, vocab=96):
    cfg = LlamaConfig(vocab_size=vocab, hidden_size=8 * heads, intermediate_size=32, num_hidden_layers=2,
                      num_attention_heads=heads, num_key_value_heads=kv_heads, max_position_embeddings=32)
    tt.manual_seed(0)
    return LlamaForCausalLM(cfg).eval()


model = tiny()
plan = dict(tensor_parallel_plan(model))
plan["model.layers.*.self_attn.wq"] = ColwiseParallel()
raises(ValueError, ["'model.layers.*.self_attn.wq'", "no child matching 'wq'", "q_proj"],
       lambda: parallelize_module(model, mesh, plan))
raises(ValueError, ["'decoder.layers.0'", "no child matching 'decoder'"],
       lambda: parallelize_module(model, mesh, {"decoder.layers.0": ColwiseParallel()}))
raises(ValueError, ["not a module path"], lambda: parallelize_module(model, mesh, {"": ColwiseParallel()}))
raises(TypeError, ["not a ParallelStyle"], lambda: parallelize_module(model, mesh, {"lm_head": "colwise"}))
assert model.model.layers[0].self_attn.q_proj.weight.shape == (32, 32), "a failed plan changed nothing"

odd = tiny(heads=2 * ws + 1 if ws > 1 else 3, kv_heads=1)
raises(ValueError, ["model.layers.0.self_attn", f"{2 * ws + 1} attention heads", "1 key/value heads",
                    f"mesh size {ws}"], lambda: parallelize_module(odd, mesh, tensor_parallel_plan(odd)))
kv = tiny(heads=4, kv_heads=1)
raises(ValueError, ["4 attention heads and 1 key/value heads", f"divisible by the mesh size {ws}"],
       lambda: parallelize_module(kv, mesh, tensor_parallel_plan(kv)))
assert kv.model.layers[0].self_attn.q_proj.out_features == 32 and kv.model.embed_tokens.weight.shape[0] == 96

mesh2 = init_device_mesh("cpu", (ws // 2, 2) if ws >= 2 else (1, 1), mesh_dim_names=("dp", "tp"))
raises(ValueError, ["1-D mesh", f"shape {mesh2.shape}", "mesh['tp']"],
       lambda: parallelize_module(tiny(), mesh2, tensor_parallel_plan(model)))
raises(ValueError, ["ColwiseParallel", "out_features=5", f"{ws} ranks"],
       lambda: parallelize_module(nn.Linear(8, 5), mesh, ColwiseParallel()))
raises(ValueError, ["RowwiseParallel", "0 has in_features=33", f"{ws} ranks"],
       lambda: parallelize_module(nn.Sequential(nn.Linear(33, 4)), mesh, {"0": RowwiseParallel()}))
raises(ValueError, ["model.embed_tokens", "num_embeddings=97", f"{ws} ranks"],
       lambda: parallelize_module(tiny(vocab=97), mesh, tensor_parallel_plan(model)))
raises(NotImplementedError, ["ColwiseParallel", "LayerNorm", "nn.Linear"],
       lambda: parallelize_module(nn.LayerNorm(4), mesh, ColwiseParallel()))
raises(NotImplementedError, ["Q4_K", "blocks of 256", "in_features=256"],
       lambda: parallelize_module(packed(12, 4, 256), mesh, RowwiseParallel()))

heads = dict(heads=2 * ws, kv_heads=ws)
done = parallelize_module(tiny(**heads), mesh, tensor_parallel_plan(model))
raises(ValueError, ["model.embed_tokens", "already parallelized"],
       lambda: parallelize_module(done, mesh, tensor_parallel_plan(done)))
with tt.no_grad():
    # the cache of the whole model holds every KV head; the parallelized attention has 1 of them
    whole = tiny(**heads)
    raises(ValueError, ["key of shape [1, 1, 3, 8]", "does not fit the cache", f"{ws} heads"],
           lambda: done(tt.tensor([[1, 2, 3]]), past_key_values=whole.make_cache(1, 8)))

# a dp x tp mesh: each dp replica runs the model over its tp line
if ws == 4:
    sub = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))["tp"]
    assert sub.size() == 2
    prompt = [[5, 1, 7, 30, 2]]
    with tt.no_grad():
        ref = tiny().generate(prompt, max_new_tokens=10)
        tp = parallelize_module(tiny(), sub, tensor_parallel_plan(model))
        assert tp.model.layers[0].self_attn.num_heads == 2
        assert tp.generate(prompt, max_new_tokens=10).tolist() == ref.tolist()
dist.barrier()
print(f"rank {rank}: TP layers OK", flush=True)
dist.destroy_process_group()
