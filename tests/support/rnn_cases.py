"""The cases and the run of the fused RNN/LSTM/GRU kernel tests (tests/ops/rnn/test_rnn_fused.py on
the CPU, test_cuda_rnn_fused.py on the GPU): the module kinds and options, the input and state
shapes, and a forward + backward through either the fused or the composed per-step path that
counts the fused layer calls."""
from __future__ import annotations

import itertools

import tinytorch.nn as nn
from tinytorch._ops import rnn as fused_ops
from tinytorch.nn.modules import rnn as rnn_module

KINDS = [(nn.LSTM, {}), (nn.GRU, {}), (nn.RNN, {"nonlinearity": "tanh"}), (nn.RNN, {"nonlinearity": "relu"})]
OPTIONS = [dict(num_layers=l, bidirectional=bi, batch_first=bf, bias=b)
           for l, bi, bf, b in itertools.product((1, 2), (False, True), (False, True), (True, False))]


def option_id(options: dict) -> str:
    return "-".join(f"{k}={v}" for k, v in options.items())


def kind_id(kind: tuple) -> str:
    return kind[0].__name__ + kind[1].get("nonlinearity", "")


class _CountingKernels:
    """Stands in for tinytorch._ops.rnn in nn.modules.rnn, counting the fused layer calls."""

    def __init__(self):
        self.calls = 0

    def rnn_layer(self, *args):
        self.calls += 1
        return fused_ops.rnn_layer(*args)


def input_shapes(module, batched: bool) -> tuple:
    """(x shape, initial state shape, number of states: 2 for an LSTM) of a length-5, batch-3 input."""
    L, N = 5, 3
    dirs = 2 if module.bidirectional else 1
    x_shape = (((N, L) if module.batch_first else (L, N)) if batched else (L,)) + (module.input_size,)
    state_shape = (module.num_layers * dirs,) + ((N,) if batched else ()) + (module.hidden_size,)
    return x_shape, state_shape, 2 if isinstance(module, nn.LSTM) else 1


def run_rnn(module, x, hx, fused: bool, loss_of):
    """Forward through the fused (or the composed) path and backward of ``loss_of(results)``, the
    results being [output, h_n(, c_n)]; returns the number of fused layer calls, the results and
    the gradients (parameters, "input", "hx0"/"hx1" for the initial states)."""
    old = rnn_module._FUSED
    rnn_module._FUSED = fused
    counter = rnn_module._fused_rnn = _CountingKernels()
    try:
        module.zero_grad()
        for t in [x] + list(hx or ()):
            t.grad = None
        out, state = module(x, None if hx is None else (hx if isinstance(module, nn.LSTM) else hx[0]))
        results = [out, *(state if isinstance(state, tuple) else (state,))]
        loss_of(results).backward()
        grads = {n: p.grad for n, p in module.named_parameters()}
        grads["input"] = x.grad
        for i, h in enumerate(hx or ()):
            grads[f"hx{i}"] = h.grad
        return counter.calls, results, grads
    finally:
        rnn_module._FUSED = old
        rnn_module._fused_rnn = fused_ops
