# cython: language_level=3
"""Fused recurrent layers (one layer, one direction of nn.RNN / LSTM / GRU): the forward kernel
returns the outputs and the gate activations it saved; the backward kernel runs
backpropagation through time in C++ (CPU) or CUDA. A second derivative raises (nn.LSTM's composed path,
``tinytorch.nn.modules.rnn._FUSED = False``, differentiates twice)."""
from tinytorch import _C
from tinytorch._core.tensor_base cimport TensorBase as Tensor, wrap
from tinytorch._core.graph cimport Node, make_node, set_history, save_tensors
from tinytorch._ops._common cimport fused_result

_NAMES = {"LSTM": "LstmFusedBackward0", "GRU": "GruFusedBackward0", "RNN_TANH": "RnnTanhFusedBackward0",
          "RNN_RELU": "RnnReluFusedBackward0"}


def _impl_or_none(g):
    return None if g is None else (<Tensor>g)._impl


def _rnn_layer_back(Node n, *grads):
    x, h0, c0, w_ih, w_hh, out, saved = n.saved_tensors
    g_out, g_h = grads[0], grads[1]
    g_c = grads[2] if n.mode == "LSTM" else None
    gs = _C.rnn_layer_backward(n.mode, _impl_or_none(g_out), _impl_or_none(g_h), _impl_or_none(g_c),
                               (<Tensor>x)._impl, (<Tensor>h0)._impl, _impl_or_none(c0), (<Tensor>w_ih)._impl,
                               (<Tensor>w_hh)._impl, n.has_bias, (<Tensor>out)._impl, (<Tensor>saved)._impl,
                               n.reverse)
    inputs = tuple(g for g in grads if g is not None)
    name = _NAMES[n.mode]
    return tuple(None if g is None else fused_result(name, g, inputs) for g in gs)


def rnn_layer(str mode, Tensor input, Tensor h0, c0, Tensor weight_ih, Tensor weight_hh, bias_ih, bias_hh,
              bint reverse):
    """One layer and direction: input (T, B, I), h0 (B, H), c0 (B, H) for LSTM (else None),
    weight_ih (G, I), weight_hh (G, H), biases (G,) or None; float32 or float64 CPU tensors, or
    float16, bfloat16, float32 or float64 CUDA tensors, all on one device.
    Returns (output (T, B, H), h_n (B, H), c_n (B, H) or None)."""
    out, h_n, c_n, saved = _C.rnn_layer_forward(mode, input._impl, h0._impl, _impl_or_none(c0), weight_ih._impl,
                                                weight_hh._impl, _impl_or_none(bias_ih), _impl_or_none(bias_hh),
                                                reverse)
    cdef bint lstm = mode == "LSTM"
    outs = (wrap(out), wrap(h_n), wrap(c_n) if lstm else None)
    cdef Node n = make_node(_NAMES[mode], _rnn_layer_back, (input, h0, c0, weight_ih, weight_hh, bias_ih, bias_hh),
                            3 if lstm else 2)
    if n is not None:
        n.mode, n.reverse, n.has_bias = mode, reverse, bias_ih is not None
        for i in range(3 if lstm else 2):
            set_history(<Tensor>outs[i], n, i)
        save_tensors(n, (input, h0, c0, weight_ih, weight_hh, outs[0], wrap(saved)))
    return outs
