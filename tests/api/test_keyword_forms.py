"""PyTorch's keywords that the schema's forms take for their implementations (a row's ``keywords`` in
codegen/ops.py, made by tinytorch._composites.forms.with_keywords) and the keyword spellings of
hand-written functions: each by keyword equals the positional call, and values tinytorch cannot honour
raise NotImplementedError naming the reason."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn.functional as F

X = np.arange(24.0).reshape(2, 3, 4)


def _same(a, b):
    a, b = (list(v) if isinstance(v, (list, tuple)) else [v] for v in (a, b))
    assert len(a) == len(b)
    for p, q in zip(a, b):
        assert tuple(p.shape) == tuple(q.shape)
        np.testing.assert_array_equal(p.numpy(), q.numpy())


def test_split_by_keyword_equals_positional():
    x = tt.tensor(X)
    _same(x.split(split_size=[1, 3], dim=-1), x.split([1, 3], -1))
    _same(x.split(split_size=2, dim=2), [tt.tensor(X[..., :2]), tt.tensor(X[..., 2:])])
    _same(x.split(split_size_or_sections=2, dim=2), x.split(2, 2))      # the implementation's name still works
    _same(tt.split(x, split_size_or_sections=[2, 1], dim=1), tt.split(x, [2, 1], 1))
    _same(x.unsafe_split(split_size=1, dim=0), x.split(1, 0))
    _same(tt.unsafe_split(input=x, split_size=2, dim=2), x.split(2, 2))
    assert list(inspect.signature(tt.Tensor.split).parameters)[1:] == ["split_size", "dim"]
    with pytest.raises(TypeError, match="both 'split_size' and 'split_size_or_sections'"):
        x.split(split_size=1, split_size_or_sections=1)


def test_swapaxes_takes_axis_names():
    x = tt.tensor(X)
    expected = np.swapaxes(X, 0, 2)
    np.testing.assert_array_equal(tt.swapaxes(x, axis0=0, axis1=2).numpy(), expected)
    np.testing.assert_array_equal(x.swapaxes(axis0=0, axis1=2).numpy(), expected)
    np.testing.assert_array_equal(tt.swapaxes(x, 0, 2).numpy(), expected)
    y = tt.tensor(X)
    assert y.swapaxes_(axis0=2, axis1=0) is y and y.shape == (4, 3, 2)
    np.testing.assert_array_equal(y.numpy(), expected)
    np.testing.assert_array_equal(tt.swapdims(x, dim0=0, dim1=2).numpy(), expected)
    assert "axis0 (int)" in tt.swapaxes.__doc__ and "dim0 (int)" in tt.swapdims.__doc__


def test_gather_sparse_grad():
    x, idx = tt.tensor(X), tt.tensor([[[3], [0], [1]], [[2], [2], [0]]])
    expected = np.take_along_axis(X, idx.numpy(), 2)
    np.testing.assert_array_equal(tt.gather(x, 2, idx, sparse_grad=False).numpy(), expected)
    np.testing.assert_array_equal(x.gather(2, idx, sparse_grad=False).numpy(), expected)
    for call in (lambda: tt.gather(x, 2, idx, sparse_grad=True), lambda: x.gather(2, idx, sparse_grad=True)):
        with pytest.raises(NotImplementedError, match="gather.*sparse_grad=True.*sparse"):
            call()


def test_embedding_takes_torchs_top_level_order():
    weight = tt.tensor(np.arange(15.0).reshape(5, 3), requires_grad=True)
    idx = tt.tensor([[4, 0], [2, 4]])
    out = tt.embedding(weight, idx)
    np.testing.assert_array_equal(out.detach().numpy(), np.arange(15.0).reshape(5, 3)[idx.numpy()])
    _same(tt.embedding(weight=weight, indices=idx).detach(), F.embedding(idx, weight).detach())
    tt.embedding(weight, idx, 4).sum().backward()                      # padding_idx: that row's gradient is zero
    np.testing.assert_array_equal(weight.grad.numpy()[:, 0], [1.0, 0.0, 1.0, 0.0, 0.0])
    weight.grad = None
    tt.embedding(weight, idx, -1).sum().backward()                     # torch's top-level -1: no padding row
    np.testing.assert_array_equal(weight.grad.numpy()[:, 0], [1.0, 0.0, 1.0, 0.0, 2.0])
    with pytest.raises(NotImplementedError, match="embedding: sparse=True"):
        tt.embedding(weight, idx, sparse=True)
    assert list(inspect.signature(tt.embedding).parameters)[:2] == ["weight", "indices"]


def test_dropout_train_keyword():
    x = tt.tensor(X)
    np.testing.assert_array_equal(tt.dropout(x, 0.5, train=False).numpy(), X)
    np.testing.assert_array_equal(tt.dropout(x, p=1.0, train=True).numpy(), np.zeros_like(X))
    np.testing.assert_array_equal(F.dropout(x, 0.5, training=False).numpy(), X)


def test_ignored_keywords():
    x = tt.tensor(X)
    assert x[:, :1].expand(2, 3, 4, implicit=True).shape == (2, 3, 4)
    _same(tt.layer_norm(x, [4], cudnn_enable=False), tt.layer_norm(x, [4]))
    ref = np.exp(X - X.max(1, keepdims=True))
    ref = ref / ref.sum(1, keepdims=True)
    np.testing.assert_allclose(F.softmax(x, 1, 5).numpy(), ref, rtol=1e-12)          # third positional: _stacklevel
    np.testing.assert_allclose(F.softmax(x, dim=1, _stacklevel=3, dtype=tt.float32).numpy(), ref, rtol=1e-6)
    np.testing.assert_allclose(F.log_softmax(x, 1, 5).numpy(), np.log(ref), rtol=1e-12)
    neg = np.exp(-X + X.min(1, keepdims=True))
    np.testing.assert_allclose(F.softmin(x, 1, _stacklevel=5).numpy(), neg / neg.sum(1, keepdims=True), rtol=1e-12)


def test_set_rng_state_new_state():
    state = tt.get_rng_state()
    first = tt.rand(4).tolist()
    tt.set_rng_state(new_state=state)
    assert tt.rand(4).tolist() == first
