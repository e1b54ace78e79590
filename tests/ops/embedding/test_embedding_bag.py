"""embedding_bag / EmbeddingBag against a float64 numpy loop over bags: sum / mean / max,
offsets and 2-D input, include_last_offset, empty bags, per_sample_weights, padding_idx,
max_norm, scale_grad_by_freq; every float dtype; gradients to the weight (and to
per_sample_weights) by gradcheck and against numpy; errors as PyTorch's."""
import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
import tinytorch.nn.functional as F
from tinytorch.autograd import gradcheck
from support.numeric import FLOAT_DTYPES, assert_close, make


def bags_of(n, offsets, include_last_offset):
    ends = list(offsets[1:]) + ([] if include_last_offset else [n])
    starts = offsets[:-1] if include_last_offset else offsets
    return [list(range(s, e)) for s, e in zip(starts, ends)]


def embedding_bag_ref(idx, w, offsets, mode, psw=None, include_last_offset=False, padding_idx=None):
    """float64 reference: one loop over bags."""
    out = np.zeros((len(bags_of(len(idx), offsets, include_last_offset)), w.shape[1]))
    for b, positions in enumerate(bags_of(len(idx), offsets, include_last_offset)):
        positions = [p for p in positions if padding_idx is None or idx[p] != padding_idx]
        if not positions:
            continue
        rows = w[idx[positions]] * (1.0 if psw is None else psw[positions][:, None])
        out[b] = {"sum": rows.sum(0), "mean": rows.mean(0), "max": rows.max(0)}[mode]
    return out


IDX = np.array([1, 2, 4, 5, 4, 3, 2, 9, 0, 7, 7])
OFFSETS = [0, 4, 4, 9]          # a bag of 4, an empty bag, a bag of 5, a bag of 2


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 4])
def test_embedding_bag_matches_reference(mode, dtype, padding_idx):
    w, wr = make((10, 6), dtype, "transposed", seed=1)
    out = F.embedding_bag(tt.tensor(IDX), w, tt.tensor(OFFSETS), mode=mode, padding_idx=padding_idx)
    assert out.dtype == w.dtype and tuple(out.shape) == (4, 6)
    assert_close(out, embedding_bag_ref(IDX, wr, OFFSETS, mode, padding_idx=padding_idx), dtype)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_2d_input_and_include_last_offset(mode):
    w, wr = make((10, 3), "float64", seed=2)
    idx2 = IDX[:10].reshape(2, 5)
    assert_close(F.embedding_bag(tt.tensor(idx2), w, mode=mode),
                 embedding_bag_ref(idx2.reshape(-1), wr, [0, 5], mode), "float64")
    # include_last_offset: offsets in CSR form, offsets[-1] == len(input) closes the last bag
    offs = [0, 3, 3, len(IDX)]
    assert_close(F.embedding_bag(tt.tensor(IDX), w, tt.tensor(offs), mode=mode, include_last_offset=True),
                 embedding_bag_ref(IDX, wr, offs, mode, include_last_offset=True), "float64")


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_embedding_bag_per_sample_weights(dtype):
    w, wr = make((10, 4), dtype, seed=3)
    psw, pr = make((len(IDX),), dtype, "sliced", seed=4)
    out = F.embedding_bag(tt.tensor(IDX), w, tt.tensor(OFFSETS), mode="sum", per_sample_weights=psw, padding_idx=2)
    assert_close(out, embedding_bag_ref(IDX, wr, OFFSETS, "sum", pr, padding_idx=2), dtype)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_gradcheck(mode):
    w, _ = make((10, 3), "float64", seed=5, requires_grad=True)
    idx, offs = tt.tensor(IDX), tt.tensor(OFFSETS)
    assert gradcheck(lambda w: F.embedding_bag(idx, w, offs, mode=mode, padding_idx=7), (w,))
    if mode == "sum":
        psw, _ = make((len(IDX),), "float64", seed=6, requires_grad=True)
        assert gradcheck(lambda w, p: F.embedding_bag(idx, w, offs, mode="sum", per_sample_weights=p), (w, psw))


def test_embedding_bag_weight_gradient_matches_numpy():
    """The gradient each weight row gets: mean divides by the bag's count; max goes to the row of
    the maximum; repeated rows accumulate; scale_grad_by_freq divides by the row's frequency."""
    w, wr = make((10, 3), "float64", seed=7, requires_grad=True)
    g, gr = make((4, 3), "float64", seed=8)
    F.embedding_bag(tt.tensor(IDX), w, tt.tensor(OFFSETS), mode="mean").backward(g)
    want = np.zeros_like(wr)
    for b, positions in enumerate(bags_of(len(IDX), OFFSETS, False)):
        for p in positions:
            want[IDX[p]] += gr[b] / len(positions)
    assert_close(w.grad, want, "float64")
    w.grad = None
    F.embedding_bag(tt.tensor(IDX), w, tt.tensor(OFFSETS), mode="sum", scale_grad_by_freq=True).backward(g)
    freq = np.bincount(IDX, minlength=10)
    want = np.zeros_like(wr)
    for b, positions in enumerate(bags_of(len(IDX), OFFSETS, False)):
        for p in positions:
            want[IDX[p]] += gr[b] / freq[IDX[p]]
    assert_close(w.grad, want, "float64")
    w.grad = None
    F.embedding_bag(tt.tensor(IDX), w, tt.tensor(OFFSETS), mode="max").backward(g)
    want = np.zeros_like(wr)
    for b, positions in enumerate(bags_of(len(IDX), OFFSETS, False)):
        if positions:
            rows = IDX[positions]
            for e in range(3):
                want[rows[np.argmax(wr[rows, e])], e] += gr[b, e]
    assert_close(w.grad, want, "float64")


def test_embedding_bag_max_norm_renormalizes_used_rows():
    w = tt.tensor(np.full((5, 2), 3.0))
    out = F.embedding_bag(tt.tensor([0, 1]), w, tt.tensor([0]), max_norm=1.0, mode="sum")
    norms = np.linalg.norm(w.numpy(), axis=1)
    np.testing.assert_allclose(norms[:2], 1.0, rtol=1e-6)
    np.testing.assert_allclose(norms[2:], np.hypot(3, 3))
    assert_close(out, w.numpy()[:2].sum(0, keepdims=True), "float64")


def test_top_level_embedding_bag_returns_aten_outputs():
    w, wr = make((10, 3), "float64", seed=9)
    out, offset2bag, bag_size, max_indices = tt.embedding_bag(w, tt.tensor(IDX), tt.tensor(OFFSETS), False, 2)
    assert_close(out, embedding_bag_ref(IDX, wr, OFFSETS, "max"), "float64")
    assert offset2bag.tolist() == [0, 0, 0, 0, 2, 2, 2, 2, 2, 3, 3]
    assert bag_size.tolist() == [4, 0, 5, 2]
    want = np.full((4, 3), -1)
    for b, positions in enumerate(bags_of(len(IDX), OFFSETS, False)):
        if positions:
            rows = IDX[positions]
            want[b] = rows[np.argmax(wr[rows], axis=0)]
    np.testing.assert_array_equal(max_indices.numpy(), want)


def test_embedding_bag_module():
    tt.manual_seed(0)
    m = nn.EmbeddingBag(10, 3, mode="sum", padding_idx=-1)
    assert list(m.state_dict()) == ["weight"] and m.padding_idx == 9
    np.testing.assert_array_equal(m.weight[9].detach().numpy(), 0.0)
    wr = m.weight.detach().double().numpy()
    psw = tt.rand(len(IDX))
    assert_close(m(tt.tensor(IDX), tt.tensor(OFFSETS), psw),
                 embedding_bag_ref(IDX, wr, OFFSETS, "sum", psw.double().numpy(), padding_idx=9), "float32")
    assert repr(nn.EmbeddingBag(10, 3, max_norm=1.0, mode="max", padding_idx=3, scale_grad_by_freq=True)) == \
        "EmbeddingBag(10, 3, max_norm=1.0, scale_grad_by_freq=True, mode='max', padding_idx=3)"
    assert repr(nn.EmbeddingBag(10, 3)) == "EmbeddingBag(10, 3, mode='mean')"
    pre = tt.randn(5, 2)
    frozen = nn.EmbeddingBag.from_pretrained(pre, mode="max")
    assert frozen.mode == "max" and not frozen.weight.requires_grad
    np.testing.assert_array_equal(frozen.weight.detach().numpy(), pre.numpy())
    assert nn.EmbeddingBag.from_pretrained(pre, freeze=False).weight.requires_grad
    from tinytorch.nn.modules.sparse import EmbeddingBag
    assert EmbeddingBag is nn.EmbeddingBag


def test_embedding_bag_errors():
    w, idx, offs = tt.randn(10, 3), tt.tensor(IDX), tt.tensor(OFFSETS)
    with pytest.raises(NotImplementedError, match="per_sample_weights is only supported for mode='sum'"):
        F.embedding_bag(idx, w, offs, mode="mean", per_sample_weights=tt.ones(len(IDX)))
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        F.embedding_bag(idx, w)
    with pytest.raises(ValueError, match="if input is 2D, then offsets has to be None"):
        F.embedding_bag(idx[:10].reshape(2, 5), w, offs)
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        F.embedding_bag(idx, w, offs, mode="foo")
    with pytest.raises(RuntimeError, match="offsets\\[0\\] has to be 0"):
        F.embedding_bag(idx, w, tt.tensor([1, 4]))
    with pytest.raises(RuntimeError, match="offsets\\[-1\\] can not be greater than input's length 11"):
        F.embedding_bag(idx, w, tt.tensor([0, 12]))
    with pytest.raises(RuntimeError, match="'indices' to have one of the following scalar types: Long, Int"):
        F.embedding_bag(idx.float(), w, offs)
    with pytest.raises(RuntimeError, match="Index 0 of input takes value 11 which is not in the valid range"):
        F.embedding_bag(idx + 10, w, offs)
    with pytest.raises(RuntimeError, match="padding_idx must be within the number of embeddings"):
        F.embedding_bag(idx, w, offs, padding_idx=11)
    with pytest.raises(ValueError, match="then it must have the same shape as the input"):
        F.embedding_bag(idx, w, offs, mode="sum", per_sample_weights=tt.ones(3))
    with pytest.raises(NotImplementedError, match="sparse"):
        nn.EmbeddingBag(10, 3, sparse=True)
    with pytest.raises(AssertionError, match="padding_idx must be within num_embeddings"):
        nn.EmbeddingBag(10, 3, padding_idx=10)
