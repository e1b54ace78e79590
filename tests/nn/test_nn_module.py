"""nn.Module API (registration, traversal, state dicts, modes, conversion, hooks, repr, deepcopy),
containers, and nn.utils (clip_grad_norm_, clip_grad_value_, parameters_to_vector)."""
import copy
import math

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
from support.numeric import assert_close, to_numpy


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)
        self.bn = nn.BatchNorm1d(4)
        self.register_buffer("scratch", tt.zeros(2), persistent=False)
        self.extra = nn.Buffer(tt.ones(3))
        self.blocks = nn.ModuleList([nn.Linear(4, 4), nn.Linear(4, 2)])

    def forward(self, x):
        x = self.bn(self.fc(x))
        for b in self.blocks:
            x = b(x)
        return x


PARAMS = ["fc.weight", "fc.bias", "bn.weight", "bn.bias", "blocks.0.weight", "blocks.0.bias",
          "blocks.1.weight", "blocks.1.bias"]


# ------------------------------------------------------------------ registration and traversal

def test_named_parameters_buffers_modules():
    n = Net()
    assert [k for k, _ in n.named_parameters()] == PARAMS
    assert [k for k, _ in n.named_parameters(recurse=False)] == []
    assert [k for k, _ in n.fc.named_parameters(prefix="fc")] == ["fc.weight", "fc.bias"]
    assert len(list(n.parameters())) == 8
    assert [k for k, _ in n.named_buffers()] == ["scratch", "extra", "bn.running_mean", "bn.running_var",
                                                 "bn.num_batches_tracked"]
    assert [k for k, _ in n.named_buffers(recurse=False)] == ["scratch", "extra"]
    assert [k for k, _ in n.named_modules()] == ["", "fc", "bn", "blocks", "blocks.0", "blocks.1"]
    assert [k for k, _ in n.named_children()] == ["fc", "bn", "blocks"]
    assert list(n.children())[0] is n.fc
    assert n.get_submodule("blocks.1") is n.blocks[1]
    assert n.get_parameter("blocks.0.bias") is n.blocks[0].bias


def test_parameter_basics():
    p = nn.Parameter(tt.ones(2, 3))
    assert p.requires_grad and p.is_leaf and isinstance(p, tt.Tensor)
    assert not nn.Parameter(tt.ones(2), requires_grad=False).requires_grad
    assert repr(p).startswith("Parameter containing:")
    with pytest.raises(RuntimeError, match="floating point"):
        nn.Parameter(tt.tensor([1, 2]))
    assert not nn.Parameter(tt.tensor([1, 2]), requires_grad=False).requires_grad


def test_shared_parameters_listed_once():
    lin = nn.Linear(2, 2)
    seq = nn.Sequential(lin, nn.ReLU(), lin)
    assert [k for k, _ in seq.named_parameters()] == ["0.weight", "0.bias"]
    assert len(list(seq.named_parameters(remove_duplicate=False))) == 4


def test_state_dict_excludes_non_persistent_buffers():
    n = Net()
    sd = n.state_dict()
    assert list(sd) == ["extra", "fc.weight", "fc.bias", "bn.weight", "bn.bias", "bn.running_mean",
                        "bn.running_var", "bn.num_batches_tracked", "blocks.0.weight", "blocks.0.bias",
                        "blocks.1.weight", "blocks.1.bias"]
    assert "scratch" not in sd
    assert not sd["fc.weight"].requires_grad
    assert n.state_dict(keep_vars=True)["fc.weight"] is n.fc.weight


def test_setattr_rules():
    m = nn.Linear(2, 3)
    with pytest.raises(TypeError, match="weight"):
        m.weight = tt.zeros(3, 2)  # a plain tensor can't replace a parameter
    m.bias = None
    assert [k for k, _ in m.named_parameters()] == ["weight"]
    with pytest.raises(KeyError):
        m.register_buffer("a.b", tt.zeros(1))
    with pytest.raises(TypeError):
        m.register_parameter("p", tt.zeros(1))
    with pytest.raises(AttributeError):
        _ = m.nope
    del m.weight
    assert list(m.named_parameters()) == []


def test_load_state_dict_roundtrip_and_errors():
    src, dst = Net(), Net()
    with tt.no_grad():
        src.bn.running_mean.add_(3.0)
    res = dst.load_state_dict(src.state_dict())
    assert res.missing_keys == [] and res.unexpected_keys == []
    for (k, a), (_, b) in zip(src.state_dict().items(), dst.state_dict().items()):
        np.testing.assert_array_equal(to_numpy(a), to_numpy(b), err_msg=k)
    # values of another dtype are cast into the module's tensors; assign=True takes them as they are
    dst.load_state_dict({k: v.double() for k, v in src.state_dict().items()})
    assert dst.fc.weight.dtype == tt.float32
    assert_close(dst.fc.weight, to_numpy(src.fc.weight), "float32")
    w = tt.zeros(4, 3)
    sd = src.state_dict()
    sd["fc.weight"] = w
    dst.load_state_dict(sd, assign=True)
    assert isinstance(dst.fc.weight, nn.Parameter) and dst.fc.weight.requires_grad
    assert float(dst.fc.weight.abs().sum()) == 0.0
    # every problem is listed at once
    sd = src.state_dict()
    sd.pop("fc.bias")
    sd["junk"] = tt.zeros(1)
    sd["fc.weight"] = tt.zeros(5, 3)
    sd["bn.running_var"] = tt.zeros(7)
    with pytest.raises(RuntimeError) as e:
        dst.load_state_dict(sd)
    msg = str(e.value)
    for piece in ('"junk"', '"fc.bias"', "size mismatch for fc.weight", "(5, 3)", "(4, 3)",
                  "size mismatch for bn.running_var"):
        assert piece in msg
    # non-strict: key problems are returned, size mismatches still raise (as PyTorch)
    with pytest.raises(RuntimeError, match="size mismatch"):
        dst.load_state_dict(sd, strict=False)
    sd = src.state_dict()
    sd.pop("fc.bias")
    sd["junk"] = tt.zeros(1)
    res = dst.load_state_dict(sd, strict=False)
    assert res.missing_keys == ["fc.bias"] and res.unexpected_keys == ["junk"]


# ------------------------------------------------------------------ modes, grads, conversion

def test_train_eval_and_requires_grad():
    n = Net()
    assert n.training and n.bn.training
    assert n.eval() is n
    assert not n.training and not n.bn.training and not n.blocks[1].training
    n.train()
    assert n.blocks[1].training
    with pytest.raises(ValueError):
        n.train("yes")
    n.requires_grad_(False)
    assert not any(p.requires_grad for p in n.parameters())


def test_zero_grad():
    n = Net()
    n(tt.randn(5, 3)).sum().backward()
    assert all(p.grad is not None for p in n.parameters())
    n.zero_grad(set_to_none=False)
    assert all(float(p.grad.abs().sum()) == 0.0 for p in n.parameters())
    n.zero_grad()
    assert all(p.grad is None for p in n.parameters())


@pytest.mark.parametrize("method,dtype", [("half", "float16"), ("bfloat16", "bfloat16"), ("double", "float64"),
                                          ("float", "float32")])
def test_dtype_conversion_keeps_identity_and_int_buffers(method, dtype):
    n = Net()
    w = n.fc.weight
    ref = to_numpy(w)
    assert getattr(n, method)() is n
    assert n.fc.weight is w and isinstance(n.fc.weight, nn.Parameter)
    assert n.fc.weight.dtype.name == dtype and n.bn.running_var.dtype.name == dtype
    assert n.bn.num_batches_tracked.dtype.name == "int64"
    assert n.fc.weight.requires_grad
    assert_close(n.fc.weight, ref, dtype=dtype)
    n.to(tt.float64)
    assert n.blocks[0].bias.dtype.name == "float64"
    with pytest.raises(TypeError):
        n.to(tt.int64)


def test_apply_visits_children_first():
    order = []
    nn.Sequential(nn.Linear(1, 1), nn.Sequential(nn.ReLU())).apply(lambda m: order.append(type(m).__name__))
    assert order == ["Linear", "ReLU", "Sequential", "Sequential"]
    m = nn.Linear(3, 3).apply(lambda m: nn.init.zeros_(m.weight) if isinstance(m, nn.Linear) else None)
    assert float(m.weight.abs().sum()) == 0.0


def test_forward_hooks():
    m = nn.Linear(2, 2)
    calls = []
    h1 = m.register_forward_pre_hook(lambda mod, args: (args[0] * 0,))
    h2 = m.register_forward_hook(lambda mod, args, out: calls.append(out.shape) or out + 1)
    y = m(tt.ones(3, 2))
    assert_close(y, to_numpy(m.bias)[None].repeat(3, 0) + 1, tol=(1e-6, 1e-6))
    assert calls == [(3, 2)]
    h1.remove()
    h2.remove()
    x = tt.ones(3, 2)
    assert_close(m(x), to_numpy(x) @ to_numpy(m.weight).T + to_numpy(m.bias), tol=(1e-6, 1e-6))
    assert calls == [(3, 2)]
    # the same function registered twice runs twice and is removed independently
    f = lambda mod, args, out: calls.append("f")  # noqa: E731
    ha, hb = m.register_forward_hook(f), m.register_forward_hook(f)
    m(x)
    assert calls.count("f") == 2
    ha.remove()
    m(x)
    assert calls.count("f") == 3
    hb.remove()


def test_repr_like_pytorch():
    n = Net()
    assert repr(n) == (
        "Net(\n"
        "  (fc): Linear(in_features=3, out_features=4, bias=True)\n"
        "  (bn): BatchNorm1d(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)\n"
        "  (blocks): ModuleList(\n"
        "    (0): Linear(in_features=4, out_features=4, bias=True)\n"
        "    (1): Linear(in_features=4, out_features=2, bias=True)\n"
        "  )\n"
        ")")
    ml = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2), nn.ReLU()])
    assert repr(ml) == ("ModuleList(\n  (0-1): 2 x Linear(in_features=2, out_features=2, bias=True)\n"
                        "  (2): ReLU()\n)")
    assert repr(nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False)) == \
        "Conv2d(3, 8, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), bias=False)"
    assert repr(nn.Dropout(0.2)) == "Dropout(p=0.2, inplace=False)"
    assert repr(nn.ReLU()) == "ReLU()"


def test_deepcopy_gives_independent_parameters_and_buffers():
    n = Net()
    c = copy.deepcopy(n)
    assert c.fc.weight is not n.fc.weight and isinstance(c.fc.weight, nn.Parameter)
    assert c.fc.weight.requires_grad
    np.testing.assert_array_equal(to_numpy(c.fc.weight), to_numpy(n.fc.weight))
    with tt.no_grad():
        c.fc.weight.add_(1.0)
        c.bn.running_mean.add_(1.0)
    assert float(n.bn.running_mean.abs().max()) == 0.0
    assert_close(c.fc.weight - n.fc.weight, np.ones((4, 3)), tol=(1e-6, 1e-6))
    assert "scratch" in dict(c.named_buffers()) and "scratch" not in c.state_dict()
    # tied weights stay tied in the copy
    lin = nn.Linear(2, 2)
    seq = copy.deepcopy(nn.Sequential(lin, lin))
    assert seq[0] is seq[1] and seq[0].weight is seq[1].weight


# ------------------------------------------------------------------ containers

def test_containers():
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert len(seq) == 3 and isinstance(seq[-1], nn.Linear) and len(seq[:2]) == 2
    assert seq(tt.ones(4, 2)).shape == (4, 1)
    ml = nn.ModuleList([nn.Linear(1, 1)])
    ml.append(nn.ReLU())
    ml.insert(0, nn.Tanh())
    assert [type(m).__name__ for m in ml] == ["Tanh", "Linear", "ReLU"]
    assert [k for k, _ in ml.named_parameters()] == ["1.weight", "1.bias"]
    md = nn.ModuleDict({"a": nn.Linear(1, 2)})
    md["b"] = nn.ReLU()
    assert list(md.keys()) == ["a", "b"] and "a" in md
    pl = nn.ParameterList([nn.Parameter(tt.zeros(2)), tt.ones(3)])
    assert isinstance(pl[1], nn.Parameter) and pl[1].requires_grad and len(pl) == 2
    pd = nn.ParameterDict({"w": tt.ones(2)})
    assert [k for k, _ in pd.named_parameters()] == ["w"]


# ------------------------------------------------------------------ nn.utils

def _with_grads(grads):
    ps = []
    for g in grads:
        p = nn.Parameter(tt.zeros(*np.shape(g), dtype=tt.float64))
        p.grad = tt.tensor(np.asarray(g, dtype=np.float64))
        ps.append(p)
    return ps


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, math.inf])
def test_clip_grad_norm_numbers(norm_type):
    rng = np.random.default_rng(0)
    grads = [rng.normal(size=(3, 4)), rng.normal(size=(5,)), rng.normal(size=(2, 2, 2))]
    flat = np.concatenate([g.ravel() for g in grads])
    total = np.abs(flat).max() if math.isinf(norm_type) else (np.abs(flat) ** norm_type).sum() ** (1 / norm_type)
    max_norm = 0.5 * total
    ps = _with_grads(grads)
    ps.append(nn.Parameter(tt.zeros(2)))  # no grad: ignored
    out = nn.utils.clip_grad_norm_(ps, max_norm, norm_type)
    assert out.dim() == 0
    assert_close(out, total, tol=(1e-10, 1e-12))
    coef = max_norm / (total + 1e-6)
    for p, g in zip(ps, grads):
        assert_close(p.grad, g * coef, tol=(1e-10, 1e-12))
    # below the threshold nothing changes
    ps = _with_grads(grads)
    nn.utils.clip_grad_norm_(ps, 10 * total, norm_type)
    for p, g in zip(ps, grads):
        assert_close(p.grad, g, tol=(0, 0))


def test_clip_grad_norm_single_tensor_nonfinite_and_empty():
    p = _with_grads([[3.0, 4.0]])[0]
    assert float(nn.utils.clip_grad_norm_(p, 1.0)) == pytest.approx(5.0)
    assert_close(p.grad, np.array([3.0, 4.0]) / (5.0 + 1e-6), tol=(1e-12, 1e-12))
    q = _with_grads([[1.0, float("inf")]])
    with pytest.raises(RuntimeError, match="non-finite"):
        nn.utils.clip_grad_norm_(q, 1.0, error_if_nonfinite=True)
    assert float(nn.utils.clip_grad_norm_([nn.Parameter(tt.zeros(2))], 1.0)) == 0.0
    # float32 gradients: the norm comes back as float32
    m = nn.Linear(3, 2)
    m(tt.ones(1, 3)).sum().backward()
    assert nn.utils.clip_grad_norm_(m.parameters(), 0.1).dtype == tt.float32


def test_clip_grad_value():
    ps = _with_grads([[-3.0, 0.5, 2.0], [[0.1, -0.2]]])
    nn.utils.clip_grad_value_(ps, 1.0)
    assert_close(ps[0].grad, [-1.0, 0.5, 1.0], tol=(0, 0))
    assert_close(ps[1].grad, [[0.1, -0.2]], tol=(0, 0))


def test_parameters_to_vector_and_back():
    m = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    ref = np.concatenate([to_numpy(p).ravel() for p in m.parameters()])
    v = nn.utils.parameters_to_vector(m.parameters())
    assert v.shape == (11,)
    assert_close(v, ref, tol=(0, 0))
    nn.utils.vector_to_parameters(tt.arange(11, dtype=tt.float32), m.parameters())
    assert_close(m[0].weight, np.arange(6).reshape(2, 3), tol=(0, 0))
    assert_close(m[1].bias, [10.0], tol=(0, 0))
    assert m[0].weight.requires_grad
    with pytest.raises(ValueError, match="11"):
        nn.utils.vector_to_parameters(tt.zeros(10), m.parameters())
    with pytest.raises(TypeError):
        nn.utils.parameters_to_vector(tt.zeros(3))
