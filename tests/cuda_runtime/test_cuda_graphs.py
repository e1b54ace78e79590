"""CUDA graphs: replays equal eager execution (a training step over several replays,
make_graphed_callables' forward and backward, random numbers), the private memory pool, the
errors raised for what a capture cannot hold, and graph-replayed greedy decoding."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
import tinytorch.nn.functional as F
import tinytorch.optim as optim

from support.numeric import GRAD_TOL, assert_close, to_numpy

pytestmark = pytest.mark.cuda

DEV = "cuda"


def rand(*shape, seed=0, requires_grad=False):
    t = tt.tensor(np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32), device=DEV)
    return t.requires_grad_(requires_grad)


def warm_up(fn, iters=3):
    side = tt.cuda.Stream()
    side.wait_stream(tt.cuda.current_stream())
    with tt.cuda.stream(side):
        for _ in range(iters):
            fn()
    tt.cuda.current_stream().wait_stream(side)


def test_replay_recomputes_from_new_inputs():
    x = rand(33, 65)
    warm_up(lambda: (x * 2 + 1).sin())
    g = tt.cuda.CUDAGraph()
    with tt.cuda.graph(g):
        y = (x * 2 + 1).sin()
    for seed in range(1, 4):
        new = np.random.default_rng(seed).uniform(-1, 1, (33, 65)).astype(np.float32)
        x.copy_(tt.tensor(new, device=DEV))
        g.replay()
        assert_close(y, np.sin(new.astype(np.float64) * 2 + 1), "float32")


def mlp(seed):
    tt.manual_seed(seed)
    return nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Dropout(0.0), nn.Linear(32, 5)).to(DEV)


OPTIMIZERS = [
    (optim.SGD, dict(lr=0.1, momentum=0.9)),
    (optim.Adam, dict(lr=0.01, capturable=True)),
    (optim.AdamW, dict(lr=0.01, weight_decay=0.1, amsgrad=True, capturable=True)),
    (optim.Adadelta, dict(lr=1.0)),
    (optim.RMSprop, dict(lr=0.01, capturable=True)),
]


@pytest.mark.parametrize("zero_inside", [False, True], ids=["grads-to-none", "zero_grad-in-graph"])
@pytest.mark.parametrize("opt_cls,kw", OPTIMIZERS, ids=lambda v: getattr(v, "__name__", ""))
def test_training_step_replays_equal_eager_training(opt_cls, kw, zero_inside):
    eager, graphed = mlp(0), mlp(0)
    opt_e, opt_g = opt_cls(eager.parameters(), **kw), opt_cls(graphed.parameters(), **kw)
    batches = [(rand(16, 20, seed=s), tt.tensor(np.random.default_rng(s).integers(0, 5, 16), device=DEV))
               for s in range(8)]

    def eager_step(model, opt, x, y):
        opt.zero_grad(set_to_none=not zero_inside)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    for x, y in batches[:3]:  # warm-up: the same three eager steps for both models
        eager_step(eager, opt_e, x, y)
    static_x, static_y = batches[0][0].clone(), batches[0][1].clone()
    side = tt.cuda.Stream()
    side.wait_stream(tt.cuda.current_stream())
    with tt.cuda.stream(side):
        for x, y in batches[:3]:
            eager_step(graphed, opt_g, x, y)
    tt.cuda.current_stream().wait_stream(side)
    g = tt.cuda.CUDAGraph()
    if not zero_inside:
        opt_g.zero_grad(set_to_none=True)
    with tt.cuda.graph(g):
        if zero_inside:
            opt_g.zero_grad(set_to_none=False)
        loss = F.cross_entropy(graphed(static_x), static_y)
        loss.backward()
        opt_g.step()
    for x, y in batches[3:]:
        static_x.copy_(x)
        static_y.copy_(y)
        g.replay()
        assert_close(loss, eager_step(eager, opt_e, x, y), "float32", tol=GRAD_TOL["float32"], what="loss")
    for pe, pg in zip(eager.parameters(), graphed.parameters()):
        assert_close(pg, pe, "float32", tol=GRAD_TOL["float32"], what=f"{opt_cls.__name__} parameter")
        assert_close(pg.grad, pe.grad, "float32", tol=GRAD_TOL["float32"], what="gradient")
    if kw.get("capturable"):  # the step count advanced on the device, once per replay
        st = opt_g.state[next(iter(graphed.parameters()))]["step"]
        assert st.is_cuda and float(st.cpu()) == 8.0


def test_loss_of_every_replay_equals_eager():
    eager, graphed = mlp(1), mlp(1)
    x0 = rand(16, 20, seed=9)
    warm_up(lambda: graphed(x0).sum().backward())
    for p in graphed.parameters():
        p.grad = None
    g = tt.cuda.CUDAGraph()
    with tt.cuda.graph(g):
        out = graphed(x0).square().mean()
    for s in range(3):
        x = rand(16, 20, seed=20 + s)
        x0.copy_(x)
        g.replay()
        assert_close(out, eager(x).square().mean(), "float32")


@pytest.mark.parametrize("as_module", [True, False], ids=["module", "function"])
def test_make_graphed_callables_forward_and_backward_equal_eager(as_module):
    tt.manual_seed(3)
    eager = nn.Sequential(nn.Linear(12, 24), nn.Tanh(), nn.Linear(24, 6)).to(DEV)
    tt.manual_seed(3)
    graphed_mod = nn.Sequential(nn.Linear(12, 24), nn.Tanh(), nn.Linear(24, 6)).to(DEV)
    sample = rand(8, 12, requires_grad=True)
    if as_module:
        graphed = tt.cuda.make_graphed_callables(graphed_mod, (sample,))
    else:
        w = rand(12, 6, seed=4, requires_grad=True)
        w_eager = w.detach().clone().requires_grad_(True)
        graphed = tt.cuda.make_graphed_callables(lambda x, w: (x @ w).sin() * 2, (sample, w))
    for s in range(3):
        xg = rand(8, 12, seed=10 + s, requires_grad=True)
        xe = xg.detach().clone().requires_grad_(True)
        if as_module:
            yg, ye = graphed(xg), eager(xe)
        else:
            yg, ye = graphed(xg, w), (xe @ w_eager).sin() * 2
        assert_close(yg, ye, "float32")
        up = rand(8, 6, seed=30 + s)
        (yg * up).sum().backward()
        (ye * up).sum().backward()
        assert_close(xg.grad, xe.grad, "float32", tol=GRAD_TOL["float32"])
    pairs = zip(graphed_mod.parameters(), eager.parameters()) if as_module else [(w, w_eager)]
    for pg, pe in pairs:   # accumulated over the three backward passes
        assert_close(pg.grad, pe.grad, "float32", tol=GRAD_TOL["float32"])


def test_private_pool_keeps_capture_memory_from_other_tensors():
    x = rand(256, 256)
    warm_up(lambda: (x * 3).exp() * 2)
    g = tt.cuda.CUDAGraph()
    with tt.cuda.graph(g):
        tmp = x * 3
        tmp_ptr = tmp.data_ptr()
        y = tmp.exp() * 2
        del tmp                     # freed during capture: stays in the graph's pool
    eager = [tt.empty(256, 256, device=DEV) for _ in range(8)]
    assert tmp_ptr not in [e.data_ptr() for e in eager]
    assert y.data_ptr() not in [e.data_ptr() for e in eager]
    x.copy_(rand(256, 256, seed=5))
    for e in eager:
        e.fill_(7.0)               # eager writes never land in the graph's memory
    g.replay()
    assert_close(y, np.exp(to_numpy(x).astype(np.float64) * 3) * 2, "float32")
    del eager
    before = tt.cuda.memory_reserved()
    del y
    g.reset()
    tt.cuda.empty_cache()
    assert tt.cuda.memory_reserved() < before


def test_graphs_share_a_pool_and_replay_in_capture_order():
    x = rand(64, 64)
    warm_up(lambda: (x + 1) * 2)
    pool = tt.cuda.graph_pool_handle()
    g1, g2 = tt.cuda.CUDAGraph(), tt.cuda.CUDAGraph()
    with tt.cuda.graph(g1, pool=pool):
        a = x + 1
    with tt.cuda.graph(g2, pool=g1.pool()):
        b = a * 2
    for s in range(3):
        new = rand(64, 64, seed=40 + s)
        x.copy_(new)
        g1.replay()
        g2.replay()
        assert_close(b, (to_numpy(new).astype(np.float64) + 1) * 2, "float32")


def test_dropout_in_a_graph_draws_as_eager_code_does():
    x = tt.ones(4096, device=DEV)
    warm_up(lambda: F.dropout(x, 0.5))
    g = tt.cuda.CUDAGraph()
    with tt.cuda.graph(g):
        y = F.dropout(x, 0.5)
    masks = []
    tt.manual_seed(123)
    for _ in range(3):
        g.replay()
        masks.append(to_numpy(y).copy())
    tt.manual_seed(123)
    for m in masks:   # the same generator state gives the same numbers, replay or not
        np.testing.assert_array_equal(m, to_numpy(F.dropout(x, 0.5)))
    assert not np.array_equal(masks[0], masks[1])       # every replay draws new numbers
    assert 0.4 < (masks[0] == 0).mean() < 0.6


def test_python_scalar_operands_and_their_backward_are_capturable():
    # where/masked_fill/clamp take Python scalars, filled on the device (no host copy to capture)
    x = rand(257, requires_grad=True)
    mask = x.detach() > 0

    def body():
        (tt.where(mask, x, 0.5) + x.masked_fill(mask, 1.0) + tt.clamp(x, tt.tensor(-0.5), tt.tensor(0.5))).sum().backward()
    warm_up(body)
    x.grad = None
    g = tt.cuda.CUDAGraph()
    with tt.cuda.graph(g):
        body()
    for s in range(2):
        new = np.random.default_rng(50 + s).uniform(-1, 1, 257).astype(np.float32)
        with tt.no_grad():
            x.copy_(tt.tensor(new, device=DEV))
        g.replay()
        m = to_numpy(mask)
        assert_close(x.grad, m * 1.0 + (~m) * 1.0 + (np.abs(new) < 0.5), "float32")


def _capture_raises(body, match):
    g = tt.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match=match):
        with tt.cuda.graph(g):
            body()
    # the failed capture left nothing behind: a new capture on the same stream works
    x = rand(8)
    g2 = tt.cuda.CUDAGraph()
    with tt.cuda.graph(g2):
        y = x + 1
    g2.replay()
    assert_close(y, to_numpy(x).astype(np.float64) + 1, "float32")
    assert not tt.cuda.is_current_stream_capturing()


@pytest.mark.parametrize("what,match", [
    ("item", "copying a CUDA tensor to the CPU"),
    ("cpu", "copying a CUDA tensor to the CPU"),
    ("to_gpu", "copying a CPU tensor to the GPU"),
    ("synchronize", "synchronize"),
    ("nonzero", "nonzero"),
    ("generator", "default generator"),
    ("adam", "capturable is False"),
    ("attention_dropout", "dropout_p > 0"),
])
def test_illegal_operations_during_capture_raise(what, match):
    x = rand(16, 4, requires_grad=True)
    gen = tt.Generator(device=DEV)
    gen.manual_seed(99)
    q = rand(1, 2, 8, 16)
    opt = optim.Adam([x], lr=0.1)
    x.grad = tt.ones_like(x)
    opt.step()
    bodies = {
        "item": lambda: (x * 2).sum().item(),
        "cpu": lambda: (x * 2).cpu(),
        "to_gpu": lambda: tt.ones(3).to(DEV),
        "synchronize": lambda: tt.cuda.synchronize(),
        "nonzero": lambda: (x > 0).nonzero(),
        "generator": lambda: tt.rand(16, device=DEV, generator=gen),
        "adam": lambda: opt.step(),
        "attention_dropout": lambda: F.scaled_dot_product_attention(q, q, q, dropout_p=0.5),
    }
    _capture_raises(bodies[what], match)


def test_capture_api_misuse_raises():
    g = tt.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="holds no capture"):
        g.replay()
    with pytest.raises(RuntimeError, match="default stream"):
        g.capture_begin()          # the current stream is the default one
    with pytest.raises(ValueError, match="capture_error_mode"):
        tt.cuda.graph(g, capture_error_mode="loose").__enter__()


def tiny_llama():
    from tinytorch.models import LlamaConfig, LlamaForCausalLM
    tt.manual_seed(0)
    cfg = LlamaConfig(vocab_size=97, hidden_size=48, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=6, num_key_value_heads=2, max_position_embeddings=64)
    return LlamaForCausalLM(cfg, device=DEV).eval()


@pytest.mark.parametrize("eos", [None, 7], ids=["no-eos", "eos"])
def test_graph_decoding_gives_the_eager_greedy_tokens(eos):
    model = tiny_llama()
    ids = tt.tensor([[3, 5, 7, 11, 13], [2, 4, 6, 8, 10]], device=DEV)
    eager = model.generate(ids, 12, eos_token_id=eos)
    graphed = model.generate(ids, 12, eos_token_id=eos, cuda_graph=True)
    np.testing.assert_array_equal(to_numpy(graphed), to_numpy(eager))
    one = model.generate(ids[:1], 9, cuda_graph=True)
    np.testing.assert_array_equal(to_numpy(one), to_numpy(model.generate(ids[:1], 9)))


def test_graph_decoding_rejects_what_it_cannot_capture():
    model = tiny_llama()
    ids = tt.tensor([[3, 5, 7]], device=DEV)
    with pytest.raises(NotImplementedError, match="greedy"):
        model.generate(ids, 4, do_sample=True, cuda_graph=True)
    with pytest.raises(ValueError, match="CUDA device"):
        model.to("cpu").generate(ids.cpu(), 4, cuda_graph=True)

