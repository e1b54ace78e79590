"""The meta device, as PyTorch's: tensors with a shape, a dtype and strides but no storage. Ops on
them compute only their results' shapes and dtypes (autograd included), so a model built under
``with tinytorch.device("meta"):`` costs no memory; ``Module.to_empty(device=...)`` then gives it real,
uninitialised storage for ``reset_parameters`` or ``load_state_dict``. Reading a meta tensor's values
(``item``, ``cpu``, ``numpy``, printing values, an op whose result's size depends on them) raises."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
import tinytorch.nn.functional as F

NO_DATA = "Cannot copy out of meta tensor; no data!"


def _meta(*shape, dtype=tt.float32):
    return tt.empty(*shape, dtype=dtype, device="meta")


def test_meta_device_and_tensors():
    d = tt.device("meta")
    assert (d.type, d.index, str(d), repr(d)) == ("meta", None, "meta", "device(type='meta')")
    x = _meta(3, 4)
    assert x.is_meta and not x.is_cpu and not x.is_cuda and not tt.ones(1).is_meta
    assert (x.shape, x.dtype, x.device, x.stride()) == ((3, 4), tt.float32, d, (4, 1))
    assert repr(x) == "tensor(..., device='meta', size=(3, 4))"
    assert repr(_meta(2, dtype=tt.int64)) == "tensor(..., device='meta', size=(2,), dtype=tinytorch.int64)"
    assert tt.ones(2, 3).to("meta").is_meta and tt.tensor([1.0, 2.0], device="meta").shape == (2,)


# op -> the shape and dtype its result must have
OPS = {
    "matmul": (lambda: _meta(4, 5) @ _meta(5, 3), (4, 3), tt.float32),
    "bf16 linear": (lambda: F.linear(_meta(2, 5).bfloat16(), _meta(7, 5).bfloat16()), (2, 7), tt.bfloat16),
    "broadcast add with a scalar": (lambda: _meta(4, 1) + _meta(5) * 2.0, (4, 5), tt.float32),
    "sum over a dim": (lambda: _meta(4, 5).sum(0), (5,), tt.float32),
    "softmax": (lambda: _meta(4, 5).softmax(-1), (4, 5), tt.float32),
    "conv2d": (lambda: F.conv2d(_meta(2, 3, 8, 8), _meta(4, 3, 3, 3), padding=1), (2, 4, 8, 8), tt.float32),
    "attention": (lambda: F.scaled_dot_product_attention(_meta(1, 2, 5, 8), _meta(1, 2, 5, 8), _meta(1, 2, 5, 8),
                                                          is_causal=True), (1, 2, 5, 8), tt.float32),
    "cross_entropy": (lambda: F.cross_entropy(_meta(4, 10), _meta(4, dtype=tt.int64)), (), tt.float32),
    "embedding": (lambda: F.embedding(_meta(3, dtype=tt.int64), _meta(10, 6)), (3, 6), tt.float32),
    "index_select": (lambda: _meta(4, 5)[_meta(3, dtype=tt.int64)], (3, 5), tt.float32),
    "topk values": (lambda: _meta(4, 5).topk(2).values, (4, 2), tt.float32),
    "argmax": (lambda: _meta(4, 5).argmax(-1), (4,), tt.int64),
    "comparison": (lambda: _meta(4, 5) > 0, (4, 5), tt.bool),
    "cat": (lambda: tt.cat([_meta(2, 5), _meta(3, 5)]), (5, 5), tt.float32),
    "transpose then contiguous": (lambda: _meta(4, 5).t().contiguous(), (5, 4), tt.float32),
    "half": (lambda: _meta(3).half(), (3,), tt.float16),
    "arange": (lambda: tt.arange(10, device="meta"), (10,), tt.int64),
    "randn": (lambda: tt.randn(2, 3, device="meta"), (2, 3), tt.float32),
}


@pytest.mark.parametrize("name", OPS)
def test_ops_compute_shapes_and_dtypes(name):
    fn, shape, dtype = OPS[name]
    out = fn()
    assert out.is_meta and tuple(out.shape) == shape and out.dtype == dtype


def test_autograd_and_an_optimizer_step_on_meta():
    w = nn.Parameter(_meta(4, 3))
    loss = (_meta(2, 3) @ w.t()).relu().sum()
    loss.backward()
    assert w.grad.is_meta and w.grad.shape == (4, 3)
    tt.optim.AdamW([w], lr=0.1).step()
    assert w.is_meta


READS = {
    "cpu": lambda x: x.cpu(), "tolist": lambda x: x.tolist(), "to cpu": lambda x: x.to("cpu"), "copy into cpu": lambda x: tt.empty(4, 5).copy_(x),
    "boolean mask": lambda x: x[x > 0], "nonzero": lambda x: x.nonzero(), "masked_select": lambda x: x.masked_select(x > 0),
}


@pytest.mark.parametrize("name", READS)
def test_reading_values_raises(name):
    with pytest.raises(NotImplementedError, match="meta tensor"):
        READS[name](_meta(4, 5))


@pytest.mark.parametrize("read", [lambda x: x.sum().item(), lambda x: bool(x.sum()), lambda x: tt.allclose(x, x)],
                         ids=["item", "bool", "allclose"])
def test_item_raises_as_torch(read):
    with pytest.raises(RuntimeError, match=r"Tensor.item\(\) cannot be called on meta tensors"):
        read(_meta(4, 5))


def test_numpy_and_dlpack_refuse_meta():
    with pytest.raises(TypeError, match="can't convert meta device type tensor to numpy"):
        _meta(2).numpy()
    with pytest.raises(TypeError, match="to_dlpack: a meta tensor"):
        _meta(2).__dlpack__()


def test_meta_and_cpu_tensors_do_not_mix():
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device.*meta and cpu"):
        _meta(4, 5) + tt.ones(4, 5)


def _model():
    return nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.LayerNorm(16), nn.Linear(16, 4))


def test_build_on_meta_then_to_empty_and_reset_parameters():
    with tt.device("meta"):
        model = _model()
        embed, lstm, conv = nn.Embedding(10, 4), nn.LSTM(4, 8), nn.Conv2d(3, 8, 3)
    for m in (model, embed, lstm, conv):
        assert all(t.is_meta for t in m.state_dict().values())
    out = model(_meta(2, 8))
    assert out.is_meta and out.shape == (2, 4)
    assert lstm(_meta(5, 1, 4))[0].shape == (5, 1, 8)
    with pytest.raises(NotImplementedError, match=NO_DATA + r".*Module\.to_empty"):
        model.to("cpu")

    model.to_empty(device="cpu")
    tt.manual_seed(0)
    for m in model.modules():
        if hasattr(m, "reset_parameters"):
            m.reset_parameters()
    tt.manual_seed(0)
    reference = _model()
    x = tt.randn(3, 8)
    np.testing.assert_array_equal(model(x).detach().numpy(), reference(x).detach().numpy())


def test_meta_module_loads_a_state_dict_with_assign():
    source = _model()
    with tt.device("meta"):
        model = _model()
    model.load_state_dict(source.state_dict(), assign=True)
    assert not any(t.is_meta for t in model.state_dict().values())
    x = tt.randn(3, 8)
    np.testing.assert_array_equal(model(x).detach().numpy(), source(x).detach().numpy())


def test_init_functions_run_on_meta():
    for init in (nn.init.normal_, nn.init.trunc_normal_, nn.init.kaiming_uniform_, nn.init.xavier_normal_,
                 nn.init.orthogonal_, nn.init.zeros_):
        w = _meta(6, 4)
        assert init(w) is w and w.is_meta


def test_a_llama_built_on_meta_matches_the_model_it_loads():
    from tinytorch.models.config import LlamaConfig
    from tinytorch.models.llama import LlamaForCausalLM

    cfg = LlamaConfig(vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2)
    tt.manual_seed(0)
    reference = LlamaForCausalLM(cfg)
    with tt.device("meta"):
        model = LlamaForCausalLM(cfg)
    logits = model(tt.randint(0, 100, (1, 5), device="meta"))
    assert logits.is_meta and logits.shape == (1, 5, 100)
    model.to_empty(device="cpu")
    model.load_state_dict(reference.state_dict())
    ids = tt.randint(0, 100, (1, 5))
    np.testing.assert_array_equal(model(ids).detach().numpy(), reference(ids).detach().numpy())
    assert model.generate(ids, max_new_tokens=3).tolist() == reference.generate(ids, max_new_tokens=3).tolist()


def test_every_parametrized_layer_can_be_reset_after_to_empty():
    """The layers with parameters have reset_parameters (PyTorch's), so a meta-built model can be
    initialised: afterwards each equals a freshly built layer from the same seed."""
    makers = {"LayerNorm": lambda: nn.LayerNorm(6), "RMSNorm": lambda: nn.RMSNorm(6), "GroupNorm": lambda: nn.GroupNorm(2, 6),
              "PReLU": lambda: nn.PReLU(6, init=0.1), "Embedding": lambda: nn.Embedding(5, 6),
              "BatchNorm1d": lambda: nn.BatchNorm1d(6), "Linear": lambda: nn.Linear(6, 3)}
    for name, make in makers.items():
        with tt.device("meta"):
            layer = make()
        layer.to_empty(device="cpu")
        tt.manual_seed(1)
        layer.reset_parameters()
        tt.manual_seed(1)
        fresh = make()
        for (k, got), want in zip(layer.state_dict().items(), fresh.state_dict().values()):
            np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=f"{name}.{k}")
