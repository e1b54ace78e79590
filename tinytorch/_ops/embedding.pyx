# cython: language_level=3
"""Embedding lookup, with its derivative (linear in the gradient: its adjoint is the lookup)."""
from tinytorch import _C
from tinytorch._core.tensor_base cimport TensorBase as Tensor, wrap
from tinytorch._core.graph cimport Node
from tinytorch._ops._common cimport record as _record, adjoint_result
from tinytorch._ops import shape as S
from tinytorch._ops.index import index_put


def _embedding_back(Node n, g):
    idx, = n.saved_tensors
    pad = n.padding_idx
    if n.scale_grad_by_freq:         # each row's gradient divided by how often the batch uses it
        flat = S.reshape(idx, -1)
        counts = wrap(_C.full([n.num_weights], 0.0, g._impl.dtype_code, g._impl.device))
        counts = index_put(counts, [flat], wrap(_C.full([flat._impl.shape[0]], 1.0, g._impl.dtype_code,
                                                        g._impl.device)), accumulate=True)
        g = g / S.unsqueeze(S.reshape(counts.index_select(0, flat), *idx._impl.shape), -1)

    def adjoint(gg):                 # rows of gg at the indices; the padding row got no gradient
        rows = embedding(idx, gg)
        return rows if pad is None else rows * S.unsqueeze(idx != pad, -1)
    return (adjoint_result("EmbeddingBackwardBackward", _C.embedding_backward(g._impl, idx._impl, n.num_weights, pad),
                           (g,), lambda gg: (adjoint(gg),)), None)


def embedding(Tensor input, Tensor weight, padding_idx=None, bint scale_grad_by_freq=False):
    """Looks up rows of ``weight`` (V, D) at ``input`` indices -> (*input.shape, D).

    Args:
        input (Tensor): tensor containing indices into the embedding matrix.
        weight (Tensor): the embedding matrix with number of rows equal to the maximum possible index +
            1, and number of columns equal to the embedding size.
        padding_idx (int, optional): if specified, the entries at :attr:`padding_idx` do not contribute
            to the gradient. Default: ``None``
        scale_grad_by_freq (bool, optional): if given, this will scale gradients by the inverse of
            frequency of the words in the mini-batch. Default: ``False``"""
    return _record("EmbeddingBackward0", _embedding_back, (weight, None), _C.embedding(weight._impl, input._impl),
                   {"num_weights": weight._impl.shape[0], "padding_idx": padding_idx,
                    "scale_grad_by_freq": scale_grad_by_freq}, (input,))
