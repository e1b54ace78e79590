"""RNN, LSTM, GRU and their cells against a numpy step-by-step reference (PyTorch's gate equations
and parameter layout): layers, bidirectional, batch_first, unbatched, initial states, no bias;
gradients by gradcheck."""
import numpy as np
import pytest

import tinytorch as tt
import tinytorch.nn as nn
from tinytorch.autograd import gradcheck
from support.numeric import assert_close, to_numpy


def sig(v):
    return 1 / (1 + np.exp(-v))


def step_ref(kind, x, state, w_ih, w_hh, b_ih, b_hh):
    gi, gh = x @ w_ih.T + b_ih, state[0] @ w_hh.T + b_hh
    if kind == "LSTM":
        i, f, g, o = np.split(gi + gh, 4, -1)
        c = sig(f) * state[1] + sig(i) * np.tanh(g)
        return sig(o) * np.tanh(c), c
    if kind == "GRU":
        (xr, xz, xn), (hr, hz, hn) = np.split(gi, 3, -1), np.split(gh, 3, -1)
        r, z = sig(xr + hr), sig(xz + hz)
        return (1 - z) * np.tanh(xn + r * hn) + z * state[0], None
    return np.tanh(gi + gh), None


def rnn_ref(kind, m, x, h0=None):
    """x: (L, N, I) -> output (L, N, D*H), h_n (layers*D, N, H) [, c_n]."""
    P = {k: to_numpy(v) for k, v in m.named_parameters()}
    dirs, H = 2 if m.bidirectional else 1, m.hidden_size
    hs, cs = [], []
    for layer in range(m.num_layers):
        outs = []
        for d in range(dirs):
            sfx = f"_l{layer}" + ("_reverse" if d else "")
            w = [P["weight_ih" + sfx], P["weight_hh" + sfx]]
            w += [P["bias_ih" + sfx], P["bias_hh" + sfx]] if m.bias else [0.0, 0.0]
            k = layer * dirs + d
            state = (np.zeros((x.shape[1], H)) if h0 is None else h0[k], np.zeros((x.shape[1], H)))
            seq = [None] * x.shape[0]
            for t in (range(x.shape[0] - 1, -1, -1) if d else range(x.shape[0])):
                state = step_ref(kind, x[t], state, *w)
                seq[t] = state[0]
            outs.append(np.stack(seq))
            hs.append(state[0])
            cs.append(state[1])
        x = np.concatenate(outs, -1)
    return x, np.stack(hs), (np.stack(cs) if kind == "LSTM" else None)


CONFIGS = [("LSTM", dict(num_layers=2, bidirectional=True)), ("GRU", dict(num_layers=2, batch_first=True)),
           ("RNN", dict(bidirectional=True)), ("LSTM", dict(batch_first=True, bias=False)), ("GRU", dict())]


@pytest.mark.parametrize("kind,kw", CONFIGS)
def test_recurrent_layers_match_reference(kind, kw):
    tt.manual_seed(0)
    m = getattr(nn, kind)(3, 4, **kw).double()
    rng = np.random.default_rng(1)
    xv = rng.standard_normal((5, 2, 3))                    # (L, N, I)
    x = tt.tensor(xv.transpose(1, 0, 2) if kw.get("batch_first") else xv)
    out, state = m(x)
    h, c = state if kind == "LSTM" else (state, None)
    ref_out, ref_h, ref_c = rnn_ref(kind, m, xv)
    assert_close(out, ref_out.transpose(1, 0, 2) if kw.get("batch_first") else ref_out)
    assert_close(h, ref_h)
    if kind == "LSTM":
        assert_close(c, ref_c)
    single = x[0] if kw.get("batch_first") else x[:, 0]   # unbatched (L, I)
    out1, _ = m(single)
    assert_close(out1, ref_out[:, 0])


def test_initial_state_and_gradients():
    tt.manual_seed(1)
    m = nn.GRU(2, 3, num_layers=2).double()
    rng = np.random.default_rng(2)
    xv, hv = rng.standard_normal((4, 2, 2)), rng.standard_normal((2, 2, 3))
    out, h = m(tt.tensor(xv), tt.tensor(hv))
    ref_out, ref_h, _ = rnn_ref("GRU", m, xv, hv)
    assert_close(out, ref_out)
    assert_close(h, ref_h)
    lstm = nn.LSTM(2, 3, bidirectional=True).double()
    x = tt.tensor(xv, requires_grad=True)
    h0 = tt.tensor(rng.standard_normal((2, 2, 3)), requires_grad=True)
    c0 = tt.tensor(rng.standard_normal((2, 2, 3)), requires_grad=True)
    assert gradcheck(lambda a, b, c: lstm(a, (b, c))[0], (x, h0, c0))
    with pytest.raises(ValueError, match="hx must be a tuple"):
        lstm(x, h0)
    with pytest.raises(ValueError, match="hidden state of shape"):
        m(x, tt.zeros(1, 2, 3, dtype=tt.float64))


def test_cells_and_layout():
    tt.manual_seed(2)
    rng = np.random.default_rng(3)
    xv, hv, cv = rng.standard_normal((2, 3)), rng.standard_normal((2, 4)), rng.standard_normal((2, 4))
    for cls, kind in ((nn.LSTMCell, "LSTM"), (nn.GRUCell, "GRU"), (nn.RNNCell, "RNN")):
        cell = cls(3, 4).double()
        w = [to_numpy(p) for p in (cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh)]
        if kind == "LSTM":
            h, c = cell(tt.tensor(xv), (tt.tensor(hv), tt.tensor(cv)))
            rh, rc = step_ref(kind, xv, (hv, cv), *w)
            assert_close(h, rh)
            assert_close(c, rc)
        else:
            assert_close(cell(tt.tensor(xv), tt.tensor(hv)), step_ref(kind, xv, (hv, None), *w)[0])
    m = nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    assert tuple(m.weight_ih_l1_reverse.shape) == (16, 8) and tuple(m.bias_hh_l0.shape) == (16,)
    assert all(float(p.abs().max()) <= 0.5 for p in m.parameters())       # U(-1/sqrt(H), 1/sqrt(H))
    assert repr(m) == "LSTM(3, 4, num_layers=2, bidirectional=True)"
    with pytest.raises(NotImplementedError, match="proj_size"):
        nn.LSTM(3, 4, proj_size=2)
