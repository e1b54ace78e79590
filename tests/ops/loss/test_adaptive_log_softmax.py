"""AdaptiveLogSoftmaxWithLoss against a float64 numpy reference built from its own weights: the
target log probabilities and loss, the full log_prob (rows sum to 1), predict; gradients by
gradcheck; unbatched input; state_dict keys and errors as PyTorch's."""
import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
from tinytorch.autograd import gradcheck
from support.numeric import assert_close, make


def log_softmax(z):
    z = z - z.max(-1, keepdims=True)
    return z - np.log(np.exp(z).sum(-1, keepdims=True))


def full_log_prob_ref(m, x):
    w = {k: v.detach().double().numpy() for k, v in m.state_dict().items()}
    head = x @ w["head.weight"].T + (w["head.bias"] if "head.bias" in w else 0)
    hl = log_softmax(head)
    parts = [hl[:, :m.shortlist_size]]
    for i in range(m.n_clusters):
        cl = log_softmax(x @ w[f"tail.{i}.0.weight"].T @ w[f"tail.{i}.1.weight"].T)
        parts.append(cl + hl[:, m.shortlist_size + i:m.shortlist_size + i + 1])
    return np.concatenate(parts, 1)


@pytest.mark.parametrize("head_bias", [False, True])
def test_matches_reference(head_bias):
    tt.manual_seed(0)
    m = nn.AdaptiveLogSoftmaxWithLoss(8, 20, [4, 10, 15], div_value=2.0, head_bias=head_bias, dtype=tt.float64)
    assert list(m.state_dict()) == (["head.weight"] + (["head.bias"] if head_bias else [])
                                    + [f"tail.{i}.{j}.weight" for i in range(3) for j in range(2)])
    assert tuple(m.tail[1][0].weight.shape) == (2, 8) and tuple(m.tail[1][1].weight.shape) == (5, 2)
    x, xr = make((7, 8), "float64", "transposed", seed=1)
    y = np.array([0, 3, 5, 12, 19, 16, 9])
    full = full_log_prob_ref(m, xr)
    out, loss = m(x, tt.tensor(y))
    assert_close(out, full[np.arange(7), y], "float64")
    assert_close(loss, -full[np.arange(7), y].mean(), "float64")
    lp = m.log_prob(x)
    assert_close(lp, full, "float64")
    np.testing.assert_allclose(np.exp(lp.detach().numpy()).sum(1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(m.predict(x).numpy(), full.argmax(1))
    one = m(x[3], tt.tensor(y[3]))
    assert one.output.dim() == 0
    assert_close(one.output, full[3, y[3]], "float64")
    assert m.predict(x[3]).item() == full[3].argmax()


def test_gradcheck():
    tt.manual_seed(0)
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):   # the second cluster:
        m = nn.AdaptiveLogSoftmaxWithLoss(4, 9, [3, 6], dtype=tt.float64)                   # 4 // 16 = 0 features
    x, _ = make((5, 4), "float64", seed=2, requires_grad=True)
    y = tt.tensor([0, 4, 8, 2, 6])
    assert gradcheck(lambda t: m(t, y).loss, (x,))
    m(x, y).loss.backward()
    assert all(p.grad is not None for p in m.parameters())


def test_errors():
    with pytest.raises(ValueError, match="cutoffs should be a sequence of length larger than 0"):
        nn.AdaptiveLogSoftmaxWithLoss(4, 10, [])
    with pytest.raises(ValueError, match="cutoffs should be a sequence of unique, positive integers"):
        nn.AdaptiveLogSoftmaxWithLoss(4, 10, [5, 3])
    with pytest.raises(ValueError, match="cutoffs should be a sequence of unique, positive integers"):
        nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3, 10])
    m = nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3])
    with pytest.raises(RuntimeError, match="Target values should be in \\[0, 9\\], but values in range \\[0, 10\\]"):
        m(tt.randn(2, 4), tt.tensor([0, 10]))
    with pytest.raises(RuntimeError, match="Input and target should have the same size in the batch dimension"):
        m(tt.randn(3, 4), tt.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="0D or 1D target tensor expected"):
        m(tt.randn(2, 4), tt.tensor([[0, 1]]))
