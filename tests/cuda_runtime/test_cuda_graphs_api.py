"""The CUDA graph API without a GPU: it exists and raises a clear error; the pieces a graph
replays that run on any device (capturable optimizer steps, the static-cache decode step) equal
their eager counterparts."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.optim as optim

from support.numeric import GRAD_TOL, TOL, assert_close

no_gpu = pytest.mark.skipif(tt.cuda.is_available(), reason="checks the errors raised where CUDA is missing")


@no_gpu
@pytest.mark.parametrize("call", [
    lambda: tt.cuda.CUDAGraph(),
    lambda: tt.cuda.graph_pool_handle(),
    lambda: tt.cuda.make_graphed_callables(lambda x: x * 2, (tt.ones(2),)),
], ids=["CUDAGraph", "graph_pool_handle", "make_graphed_callables"])
def test_graph_api_raises_without_cuda(call):
    with pytest.raises(RuntimeError, match="tinytorch.cuda"):
        call()


def test_graph_api_exists_as_in_pytorch():
    for name in ("CUDAGraph", "graph", "graph_pool_handle", "make_graphed_callables", "is_current_stream_capturing"):
        assert callable(getattr(tt.cuda, name)), name
    for method in ("capture_begin", "capture_end", "replay", "reset", "pool"):
        assert callable(getattr(tt.cuda.CUDAGraph, method)), method
    if not tt.cuda.is_available():
        assert tt.cuda.is_current_stream_capturing() is False


ADAM_CASES = [dict(), dict(weight_decay=0.1), dict(amsgrad=True, maximize=True),
              dict(weight_decay=0.1, decoupled_weight_decay=True), dict(betas=(0.8, 0.99), eps=1e-6)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kw", ADAM_CASES, ids=str)
def test_capturable_adam_equals_the_fused_step(kw, dtype):
    rng = np.random.default_rng(0)
    w0 = rng.uniform(-1, 1, (7, 5))
    grads = [rng.uniform(-1, 1, (7, 5)) for _ in range(6)]
    results = []
    for capturable in (False, True):
        p = tt.tensor(w0, dtype=getattr(tt, dtype), requires_grad=True)
        opt = optim.Adam([p], lr=0.05, capturable=capturable, **kw)
        for g in grads:
            p.grad = tt.tensor(g, dtype=getattr(tt, dtype))
            opt.step()
        results.append((p.detach(), opt.state[p]))
    (fused, st_f), (cap, st_c) = results
    assert_close(cap, fused, dtype, tol=GRAD_TOL[dtype])
    assert_close(st_c["exp_avg_sq"], st_f["exp_avg_sq"], dtype, tol=GRAD_TOL[dtype])
    assert float(st_c["step"]) == float(st_f["step"]) == len(grads)


@pytest.mark.parametrize("cls,kw", [(optim.Adadelta, dict(lr=1.0)), (optim.RMSprop, dict(lr=0.01, momentum=0.5)),
                                    (optim.AdamW, dict(lr=0.01))], ids=lambda v: getattr(v, "__name__", ""))
def test_capturable_step_free_optimizers_equal_the_plain_step(cls, kw):
    rng = np.random.default_rng(1)
    w0 = rng.uniform(-1, 1, (4, 3)).astype(np.float32)
    grads = [rng.uniform(-1, 1, (4, 3)).astype(np.float32) for _ in range(4)]
    out = []
    for capturable in (False, True):
        p = tt.tensor(w0, requires_grad=True)
        opt = cls([p], capturable=capturable, **kw)
        for g in grads:
            p.grad = tt.tensor(g)
            opt.step()
        out.append(p.detach())
        assert float(opt.state[p]["step"]) == len(grads)
    assert_close(out[1], out[0], "float32", tol=GRAD_TOL["float32"])


def test_capturable_raises_for_optimizers_without_a_capturable_step():
    p = tt.zeros(3, requires_grad=True)
    opt = optim.NAdam([p], capturable=True)
    p.grad = tt.ones(3)
    with pytest.raises(NotImplementedError, match="capturable=True is implemented for"):
        opt.step()


def test_static_cache_decode_step_equals_eager_decoding():
    from tinytorch.models import LlamaConfig, LlamaForCausalLM
    from tinytorch.models.graph_decode import static_decode_logits
    tt.manual_seed(0)
    cfg = LlamaConfig(vocab_size=97, hidden_size=48, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=6, num_key_value_heads=2, max_position_embeddings=64)
    model = LlamaForCausalLM(cfg).eval()
    ids = tt.tensor([[3, 5, 7, 11, 13], [1, 2, 3, 4, 5]])
    with tt.no_grad():
        static, eager = model.make_cache(2, 12), model.make_cache(2, 12)
        tok = model(ids, past_key_values=static, logits_to_keep=1)[:, -1].argmax(-1)
        model(ids, past_key_values=eager, logits_to_keep=1)
        for pos in range(5, 9):   # four steps: the static step writes and reads the same cache
            want = model(tok[:, None], past_key_values=eager)[:, -1]
            got = static_decode_logits(model, tok[:, None], tt.tensor([pos]), static)
            assert_close(got, want, "float32", tol=TOL["float32"])
            tok = want.argmax(-1)


def test_generate_with_cuda_graph_needs_a_gpu_model():
    from tinytorch.models import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(vocab_size=31, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=32)
    model = LlamaForCausalLM(cfg).eval()
    with pytest.raises(ValueError, match="cuda_graph=True needs the model on a CUDA device"):
        model.generate([1, 2, 3], 4, cuda_graph=True)
