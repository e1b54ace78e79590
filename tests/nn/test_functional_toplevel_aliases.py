"""PyTorch's top-level names for nn.functional ops (tinytorch/_toplevel/nn_functional.py), with
torch's top-level signatures. Each row calls the top-level form and the nn.functional form it means
on the same non-contiguous inputs for every float dtype; a torch check (skipped without torch)
pins the argument orders and int reductions to PyTorch's."""
from __future__ import annotations

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn.functional as F
from support.numeric import FLOAT_DTYPES, TOL, assert_close, make, to_numpy


def _inputs(dtype):
    x, _ = make((2, 3, 8), dtype, "transposed", seed=1)
    y, _ = make((2, 3, 8), dtype, "sliced", seed=2)
    img, _ = make((1, 4, 4, 4), dtype, "sliced", seed=3)
    sign = tt.tensor(np.where(np.random.default_rng(4).uniform(size=(2, 3, 8)) > 0.5, 1.0, -1.0),
                     dtype=getattr(tt, dtype))
    prob = (y.abs() / 3).clamp(max=1.0)
    w, _ = make((3,), dtype, "contiguous", seed=5)
    return dict(x=x, y=y, img=img, sign=sign, prob=prob, w=w)


# (top-level call, the nn.functional call it means): both given the same inputs dict
ROWS = [
    ("selu", lambda t, d: t.selu(d["x"]), lambda d: F.selu(d["x"])),
    ("celu", lambda t, d: t.celu(d["x"], 0.5), lambda d: F.celu(d["x"], 0.5)),
    ("threshold", lambda t, d: t.threshold(d["x"], 0.1, -3.0), lambda d: F.threshold(d["x"], 0.1, -3.0)),
    ("hardshrink", lambda t, d: t.hardshrink(d["x"], 0.4), lambda d: F.hardshrink(d["x"], 0.4)),
    ("rrelu", lambda t, d: t.rrelu(d["x"]), lambda d: F.rrelu(d["x"])),
    ("cosine_similarity", lambda t, d: t.cosine_similarity(d["x"], d["y"], 2),
     lambda d: F.cosine_similarity(d["x"], d["y"], 2)),
    ("pairwise_distance", lambda t, d: t.pairwise_distance(d["x"][0], d["y"][0], 1.0),
     lambda d: F.pairwise_distance(d["x"][0], d["y"][0], 1.0)),
    ("pdist", lambda t, d: t.pdist(d["x"][0]), lambda d: F.pdist(d["x"][0])),
    ("prelu", lambda t, d: t.prelu(d["x"], d["w"]), lambda d: F.prelu(d["x"], d["w"])),
    ("pixel_shuffle", lambda t, d: t.pixel_shuffle(d["img"], 2), lambda d: F.pixel_shuffle(d["img"], 2)),
    ("pixel_unshuffle", lambda t, d: t.pixel_unshuffle(d["img"], 2), lambda d: F.pixel_unshuffle(d["img"], 2)),
    ("channel_shuffle", lambda t, d: t.channel_shuffle(d["img"], 2), lambda d: F.channel_shuffle(d["img"], 2)),
    ("max_pool1d", lambda t, d: t.max_pool1d(d["x"], 3), lambda d: F.max_pool1d(d["x"], 3, 3)),
    ("max_pool1d_with_indices", lambda t, d: t.max_pool1d_with_indices(d["x"], 2, 1)[0],
     lambda d: F.max_pool1d(d["x"], 2, 1)),
    ("max_pool2d", lambda t, d: t.max_pool2d(d["img"], 2, (), 1), lambda d: F.max_pool2d(d["img"], 2, 2, 1)),
    ("avg_pool1d", lambda t, d: t.avg_pool1d(d["x"], 2), lambda d: F.avg_pool1d(d["x"], 2)),
    ("adaptive_avg_pool1d", lambda t, d: t.adaptive_avg_pool1d(d["x"], 3), lambda d: F.adaptive_avg_pool1d(d["x"], 3)),
    ("adaptive_max_pool1d", lambda t, d: t.adaptive_max_pool1d(d["x"], 3)[0], lambda d: F.adaptive_max_pool1d(d["x"], 3)),
    ("batch_norm", lambda t, d: t.batch_norm(d["x"], d["w"], None, None, None, True, 0.1, 1e-5, False),
     lambda d: F.batch_norm(d["x"], None, None, d["w"], None, True, 0.1, 1e-5)),
    ("instance_norm", lambda t, d: t.instance_norm(d["x"], d["w"], d["w"], None, None, True, 0.1, 1e-5, False),
     lambda d: F.instance_norm(d["x"], None, None, d["w"], d["w"], True, 0.1, 1e-5)),
    ("group_norm", lambda t, d: t.group_norm(d["img"], 2), lambda d: F.group_norm(d["img"], 2)),
    ("constant_pad_nd", lambda t, d: t.constant_pad_nd(d["x"], [1, 2], 0.5), lambda d: F.pad(d["x"], [1, 2], value=0.5)),
    ("kl_div", lambda t, d: t.kl_div(d["x"], d["prob"], 2), lambda d: F.kl_div(d["x"], d["prob"], reduction="sum")),
    ("binary_cross_entropy_with_logits", lambda t, d: t.binary_cross_entropy_with_logits(d["x"], d["prob"], None, None, 0),
     lambda d: F.binary_cross_entropy_with_logits(d["x"], d["prob"], reduction="none")),
    ("margin_ranking_loss", lambda t, d: t.margin_ranking_loss(d["x"], d["y"], d["sign"], 0.2),
     lambda d: F.margin_ranking_loss(d["x"], d["y"], d["sign"], 0.2, reduction="none")),
    ("hinge_embedding_loss", lambda t, d: t.hinge_embedding_loss(d["x"], d["sign"], 1.0, 2),
     lambda d: F.hinge_embedding_loss(d["x"], d["sign"], 1.0, reduction="sum")),
    ("cosine_embedding_loss", lambda t, d: t.cosine_embedding_loss(d["x"][0], d["y"][0], d["sign"][0, :, 0], 0.1),
     lambda d: F.cosine_embedding_loss(d["x"][0], d["y"][0], d["sign"][0, :, 0], 0.1, reduction="none")),
    ("kl_div_default", lambda t, d: t.kl_div(d["x"], d["prob"]), lambda d: F.kl_div(d["x"], d["prob"], reduction="none")),
    ("triplet_default", lambda t, d: t.triplet_margin_loss(d["x"][0], d["y"][0], d["x"][1]),
     lambda d: F.triplet_margin_loss(d["x"][0], d["y"][0], d["x"][1], reduction="none")),
    ("triplet_margin_loss", lambda t, d: t.triplet_margin_loss(d["x"][0], d["y"][0], d["x"][1], 1.0, 2, 1e-6, True, 0),
     lambda d: F.triplet_margin_loss(d["x"][0], d["y"][0], d["x"][1], 1.0, 2, 1e-6, True, reduction="none")),
    ("poisson_nll_loss", lambda t, d: t.poisson_nll_loss(d["x"], d["prob"], True, False, 1e-8, 1),
     lambda d: F.poisson_nll_loss(d["x"], d["prob"], True, False, eps=1e-8)),
]


@pytest.mark.parametrize("name,top,functional", ROWS, ids=[r[0] for r in ROWS])
def test_toplevel_alias_is_the_functional_op(name, top, functional):
    for dtype in FLOAT_DTYPES:
        d = _inputs(dtype)
        np.testing.assert_array_equal(to_numpy(top(tt, d)), to_numpy(functional(d)), err_msg=f"{name} {dtype}")


@pytest.mark.parametrize("name,top,functional", ROWS, ids=[r[0] for r in ROWS])
def test_toplevel_alias_matches_torch(name, top, functional):
    torch = pytest.importorskip("torch")
    if name == "rrelu":
        pytest.skip("random slopes in training; eval form checked against nn.functional")
    d = _inputs("float64")
    ref = top(torch, {k: torch.from_numpy(to_numpy(v)) for k, v in d.items()})
    assert_close(top(tt, d), ref.numpy(), "float64", tol=(1e-8, 1e-10), what=name)


@pytest.mark.parametrize("name", ["selu_", "celu_", "threshold_", "rrelu_"])
def test_toplevel_inplace_activation(name):
    args = {"threshold_": (0.1, -3.0)}.get(name, ())
    for dtype in FLOAT_DTYPES:
        x, _ = make((3, 4), dtype, "transposed")
        expected = to_numpy(getattr(tt, name[:-1])(x, *args))
        assert getattr(tt, name)(x, *args) is x
        np.testing.assert_array_equal(to_numpy(x), expected)


def test_dropout_forms():
    x = tt.ones(4, 6, 5)
    assert tt.alpha_dropout(x, 0.5, False) is not None and bool((tt.alpha_dropout(x, 0.5, False) == x).all())
    tt.manual_seed(0)
    a = tt.feature_alpha_dropout(x, 0.5, True)
    per_channel = to_numpy(a).reshape(4, 6, 5)
    assert np.all(per_channel.max(-1) == per_channel.min(-1))   # whole channels share one value
    y = tt.ones(1000)
    assert tt.dropout_(y, 0.5, True) is y and 0 < float((y == 0).sum()) < 1000
    assert set(np.unique(to_numpy(y))) <= {0.0, 2.0}


def test_grad_flows_through_aliases():
    x, _ = make((2, 3, 8), "float64", "transposed", requires_grad=True)
    tt.max_pool1d(x, 2).sum().backward()
    assert float(x.grad.sum()) == 2 * 3 * 4
    z, _ = make((2, 3, 8), "float64", "sliced", requires_grad=True)
    F_ref, _ = make((2, 3, 8), "float64", "sliced", requires_grad=True)
    tt.selu(z).sum().backward()
    F.selu(F_ref).sum().backward()
    assert_close(z.grad, F_ref.grad, "float64")
