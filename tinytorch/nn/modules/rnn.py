"""RNN, LSTM, GRU (and their cells): PyTorch's parameter names, shapes, initialization and gate
order. On the CPU in float32/float64, and on CUDA in every float dtype, each layer and direction
runs the fused kernels (``tinytorch._ops.rnn``: one input GEMM per sequence, per step one recurrent
GEMM and one pointwise gate kernel, backpropagation through time in C++/CUDA); elsewhere, and with
``_FUSED = False``
(the reference path), they are composed from linear algebra per time step (so every device and
dtype, and autograd through time including double backward, comes for free). PackedSequence
inputs are not supported."""
from __future__ import annotations

import math
from typing import Optional, Tuple, Union

from tinytorch._tensor.creation import empty, zeros
from tinytorch._ops.elementwise import tanh
from tinytorch._ops.index import stack
from tinytorch._ops.shape import cat
from tinytorch._ops import rnn as _fused_rnn
from tinytorch.nn import functional as F
from tinytorch.nn import init
from tinytorch.nn.modules._doc_notes import entries, common_notes, fill_doc
from tinytorch.nn.modules.module import Module
from tinytorch.nn.parameter import Parameter
from tinytorch._tensor.tensor import Tensor
from tinytorch.nn.common_types import _device_t, _dtype_t

# the Args of the recurrent layers and cells (PyTorch's words)
_input_size = "input_size (int): the number of expected features in the input ``x``."
_hidden_size = "hidden_size (int): the number of features in the hidden state ``h``."
_num_layers = """num_layers (int): number of recurrent layers. E.g., setting ``num_layers=2`` would mean stacking
            two RNNs together to form a stacked RNN, with the second RNN taking in outputs of the first
            RNN and computing the final results. Default: ``1``"""
_batch_first = """batch_first (bool): if ``True``, then the input and output tensors are provided as (batch, seq,
            feature). Default: ``False``"""
_dropout = """dropout (float): if non-zero, introduces a Dropout layer on the outputs of each RNN layer except
            the last layer, with dropout probability equal to :attr:`dropout`. Default: ``0.0``"""
rnn_notes = {
    "rnn_sizes": entries(_input_size, _hidden_size, _num_layers),
    "rnn_options": entries(common_notes["bias"], _batch_first, _dropout,
                           "bidirectional (bool): if ``True``, becomes a bidirectional RNN. Default: ``False``"),
    "cell_sizes": entries(_input_size, _hidden_size, common_notes["bias"]),
    "nonlinearity": """nonlinearity (str): the non-linearity to use. Can be either ``'tanh'`` or ``'relu'``. Default:
            ``'tanh'``""",
    "proj_size": """proj_size (int): if ``> 0``, will use LSTM with projections of corresponding size (not supported
            yet: raises NotImplementedError). Default: ``0``""",
}
_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}
_FUSED = True  # False: the composed per-step path everywhere (the reference the fused kernels are tested against)
_FUSED_DTYPES = {"cpu": ("float32", "float64"), "cuda": ("float16", "bfloat16", "float32", "float64")}


def _rnn_step(x: Tensor, h: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih, b_hh, act) -> Tensor:
    # x: (B, I), h: (B, H) -> (B, H)
    return act(F.linear(x, w_ih, b_ih) + F.linear(h, w_hh, b_hh))


def _lstm_step(x, state, w_ih, w_hh, b_ih, b_hh):
    h, c = state
    i, f, g, o = (F.linear(x, w_ih, b_ih) + F.linear(h, w_hh, b_hh)).chunk(4, -1)   # gate order i, f, g, o
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c.tanh(), c


def _gru_step(x, h, w_ih, w_hh, b_ih, b_hh):
    xr, xz, xn = F.linear(x, w_ih, b_ih).chunk(3, -1)                               # gate order r, z, n
    hr, hz, hn = F.linear(h, w_hh, b_hh).chunk(3, -1)
    r, z = (xr + hr).sigmoid(), (xz + hz).sigmoid()
    n = (xn + r * hn).tanh()
    return (1 - z) * n + z * h


class RNNBase(Module):
    """The stacked, optionally bidirectional recurrence shared by RNN, LSTM and GRU.

    Args:
        mode (str): the recurrence: ``'RNN_TANH'``, ``'RNN_RELU'``, ``'LSTM'`` or ``'GRU'``.
        input_size (int): the number of expected features in the input ``x``.
        hidden_size (int): the number of features in the hidden state ``h``.
        num_layers (int): the number of sub-layers in the stack. Default: ``1``
        bias (bool): if set to ``False``, the layer will not learn an additive bias. Default: ``True``
        batch_first (bool): if ``True``, then the input and output tensors are provided as (batch, seq,
            feature). Default: ``False``
        dropout (float): dropout probability. Default: ``0.0``
        bidirectional (bool): if ``True``, becomes a bidirectional RNN. Default: ``False``
        proj_size (int): if ``> 0``, will use LSTM with projections of corresponding size (not supported
            yet: raises NotImplementedError). Default: ``0``
        device (device, optional): the device of the parameters and buffers. Default: ``None``
        dtype (dtype, optional): the dtype of the parameters and buffers. Default: ``None``"""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: _device_t = None, dtype: _dtype_t = None) -> None:
        super().__init__()
        if proj_size:
            raise NotImplementedError("LSTM(proj_size > 0) is not implemented")
        if not 0 <= dropout <= 1:
            raise ValueError(f"dropout should be a number in range [0, 1], got {dropout}")
        if hidden_size <= 0 or num_layers <= 0:
            raise ValueError(f"hidden_size and num_layers must be positive, got {hidden_size} and {num_layers}")
        self.mode, self.input_size, self.hidden_size, self.num_layers = mode, input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout, self.bidirectional = bias, batch_first, float(dropout), bidirectional
        self.proj_size = 0
        gates = _GATES[mode] * hidden_size
        dirs = 2 if bidirectional else 1
        self._flat_weights_names = []
        for layer in range(num_layers):
            for d in range(dirs):
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                size_in = input_size if layer == 0 else hidden_size * dirs
                shapes = [("weight_ih", (gates, size_in)), ("weight_hh", (gates, hidden_size))]
                if bias:
                    shapes += [("bias_ih", (gates,)), ("bias_hh", (gates,))]
                for name, shape in shapes:
                    self.register_parameter(name + sfx, Parameter(empty(*shape, dtype=dtype, device=device)))
                    self._flat_weights_names.append(name + sfx)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.hidden_size)
        for name in self._flat_weights_names:
            init.uniform_(getattr(self, name), -bound, bound)

    def _weights(self, layer: int, d: int):
        sfx = f"_l{layer}" + ("_reverse" if d else "")
        get = lambda n: getattr(self, n + sfx) if self.bias or n.startswith("weight") else None  # noqa: E731
        return get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh")

    def _use_fused(self, x: Tensor, states) -> bool:
        """The fused kernels take CPU float32/float64 or CUDA float tensors, with every weight and
        state of input's dtype and device."""
        if not _FUSED or str(x.dtype).replace("tinytorch.", "") not in _FUSED_DTYPES.get(x.device.type, ()):
            return False
        tensors = [getattr(self, n) for n in self._flat_weights_names] + [s for s in states if s is not None]
        return all(t.dtype == x.dtype and t.device == x.device for t in tensors)

    def _step(self, x, state, w):
        if self.mode == "LSTM":
            return _lstm_step(x, state, *w)
        if self.mode == "GRU":
            return _gru_step(x, state, *w)
        return _rnn_step(x, state, *w, F.relu if self.mode == "RNN_RELU" else tanh)

    def forward(self, input: Tensor, hx: Optional[Union[Tensor, Tuple[Tensor, Tensor]]] = None
                ) -> Tuple[Tensor, Union[Tensor, Tuple[Tensor, Tensor]]]:
        if not isinstance(input, Tensor):
            raise NotImplementedError(f"{type(self).__name__}: PackedSequence inputs are not implemented")
        batched = input.dim() == 3
        if input.dim() not in (2, 3) or input.shape[-1] != self.input_size:
            raise ValueError(f"{type(self).__name__}: expected input of shape (L, N, {self.input_size}) or "
                             f"(L, {self.input_size}), got {list(input.shape)}")
        x = input if batched else input.unsqueeze(1)
        if self.batch_first and batched:
            x = x.transpose(0, 1)
        steps, n = x.shape[0], x.shape[1]
        dirs = 2 if self.bidirectional else 1
        lstm = self.mode == "LSTM"
        h0, c0 = self._initial_states(hx, n, dirs, batched, x)
        fused = self._use_fused(x, (h0, c0 if lstm else None))
        h_n, c_n = [], []
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                k = layer * dirs + d
                w = self._weights(layer, d)
                if fused:
                    seq_out, h_k, c_k = _fused_rnn.rnn_layer(self.mode, x, h0[k], c0[k] if lstm else None, *w, d == 1)
                    outs.append(seq_out)
                    h_n.append(h_k)
                    if lstm:
                        c_n.append(c_k)
                    continue
                state = (h0[k], c0[k]) if lstm else h0[k]
                seq = [None] * steps
                for t in (range(steps - 1, -1, -1) if d else range(steps)):
                    state = self._step(x[t], state, w)
                    seq[t] = state[0] if lstm else state
                outs.append(stack(seq, 0))
                h_n.append(state[0] if lstm else state)
                if lstm:
                    c_n.append(state[1])
            x = outs[0] if dirs == 1 else cat(outs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        out = x.transpose(0, 1) if self.batch_first and batched else x
        h = stack(h_n, 0)
        c = stack(c_n, 0) if lstm else None
        if not batched:
            out, h = out.squeeze(1), h.squeeze(1)
            c = c.squeeze(1) if lstm else None
        return (out, (h, c)) if lstm else (out, h)

    def _initial_states(self, hx, n: int, dirs: int, batched: bool, like: Tensor):
        shape = (self.num_layers * dirs, n, self.hidden_size)
        fresh = lambda: zeros(*shape, dtype=like.dtype, device=like.device)  # noqa: E731
        if hx is None:
            return fresh(), fresh()
        states = hx if isinstance(hx, tuple) else (hx, None)
        if (self.mode == "LSTM") != (isinstance(hx, tuple) and len(hx) == 2):
            want = "a tuple (h_0, c_0)" if self.mode == "LSTM" else "a tensor"
            raise ValueError(f"{type(self).__name__}: hx must be {want}")
        out = []
        for s in states:
            if s is None:
                out.append(fresh())
                continue
            s = s if batched else s.unsqueeze(1)
            if tuple(s.shape) != shape:
                raise ValueError(f"{type(self).__name__}: expected hidden state of shape {list(shape)}, got "
                                 f"{list(s.shape)}")
            out.append(s)
        return out[0], out[1]

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        for name, default in (("bias", True), ("batch_first", False), ("dropout", 0.0), ("bidirectional", False)):
            if getattr(self, name) != default:
                s += f", {name}={getattr(self, name)}"
        return s

    def flatten_parameters(self) -> None:
        """Does nothing: PyTorch compacts the weights into one cuDNN buffer here, and on the CPU
        (and in tinytorch, which keeps one Parameter per weight everywhere) it is a no-op."""


@fill_doc(rnn_notes, common_notes)
class RNN(RNNBase):
    """Elman RNN: h_t = tanh(W_ih x_t + b_ih + W_hh h_{{t-1}} + b_hh) (or relu).

    Args:
        {rnn_sizes}
        {nonlinearity}
        {rnn_options}
        {device}
        {dtype}"""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device: _device_t = None, dtype: _dtype_t = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size, num_layers,
                         bias, batch_first, dropout, bidirectional, 0, device, dtype)


@fill_doc(rnn_notes, common_notes)
class LSTM(RNNBase):
    """Long short-term memory: gates i, f, g, o; returns output, (h_n, c_n).

    Args:
        {rnn_sizes}
        {rnn_options}
        {proj_size}
        {device}
        {dtype}"""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: _device_t = None, dtype: _dtype_t = None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device, dtype)


@fill_doc(rnn_notes, common_notes)
class GRU(RNNBase):
    """Gated recurrent unit: gates r, z, n with n = tanh(W_in x + b_in + r * (W_hn h + b_hn)).

    Args:
        {rnn_sizes}
        {rnn_options}
        {device}
        {dtype}"""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device: _device_t = None, dtype: _dtype_t = None) -> None:
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional, 0,
                         device, dtype)


class RNNCellBase(Module):
    """The base class of RNNCell, LSTMCell and GRUCell.

    The base of RNNCell, LSTMCell and GRUCell: ``num_chunks`` gates' weights stacked by rows,
    weight_ih (num_chunks * hidden_size, input_size), weight_hh (num_chunks * hidden_size,
    hidden_size), bias_ih and bias_hh, all ~ U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)).

    Args:
        input_size (int): the number of expected features in the input ``x``.
        hidden_size (int): the number of features in the hidden state ``h``.
        bias (bool): if set to ``False``, the layer will not learn an additive bias.
        num_chunks (int): the number of gates whose weights are stacked by rows: 1 (RNNCell), 4
            (LSTMCell) or 3 (GRUCell).
        device (device, optional): the device of the parameters and buffers. Default: ``None``
        dtype (dtype, optional): the dtype of the parameters and buffers. Default: ``None``"""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device: _device_t = None,
                 dtype: _dtype_t = None) -> None:
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = Parameter(empty(num_chunks * hidden_size, input_size, dtype=dtype, device=device))
        self.weight_hh = Parameter(empty(num_chunks * hidden_size, hidden_size, dtype=dtype, device=device))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, dtype=dtype, device=device))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, dtype=dtype, device=device))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for p in self.parameters():
            init.uniform_(p, -bound, bound)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _w(self):
        return self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh

    def _zeros(self, x: Tensor) -> Tensor:
        return zeros(*x.shape[:-1], self.hidden_size, dtype=x.dtype, device=x.device)


@fill_doc(rnn_notes, common_notes)
class RNNCell(RNNCellBase):
    """An Elman RNN cell with tanh or ReLU non-linearity.

    Args:
        {cell_sizes}
        {nonlinearity}
        {device}
        {dtype}"""
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device: _device_t = None, dtype: _dtype_t = None) -> None:
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, x: Tensor, hx: Optional[Tensor] = None) -> Tensor:
        act = F.relu if self.nonlinearity == "relu" else tanh
        return _rnn_step(x, self._zeros(x) if hx is None else hx, *self._w(), act)


class _GatedCell(RNNCellBase):
    """LSTMCell and GRUCell: a cell of ``_num_chunks`` gates, no choice of non-linearity."""
    _num_chunks = 1

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: _device_t = None,
                 dtype: _dtype_t = None) -> None:
        super().__init__(input_size, hidden_size, bias, self._num_chunks, device, dtype)


@fill_doc(rnn_notes, common_notes)
class LSTMCell(_GatedCell):
    """A long short-term memory (LSTM) cell.

    Args:
        {cell_sizes}
        {device}
        {dtype}"""
    _num_chunks = 4

    def forward(self, x: Tensor, hx: Optional[Tuple[Tensor, Tensor]] = None) -> Tuple[Tensor, Tensor]:
        state = (self._zeros(x), self._zeros(x)) if hx is None else hx
        return _lstm_step(x, state, *self._w())


@fill_doc(rnn_notes, common_notes)
class GRUCell(_GatedCell):
    """A gated recurrent unit (GRU) cell.

    Args:
        {cell_sizes}
        {device}
        {dtype}"""
    _num_chunks = 3

    def forward(self, x: Tensor, hx: Optional[Tensor] = None) -> Tensor:
        return _gru_step(x, self._zeros(x) if hx is None else hx, *self._w())
