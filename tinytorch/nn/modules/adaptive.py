"""AdaptiveLogSoftmaxWithLoss (``nn.modules.adaptive``): the efficient softmax approximation of
Grave et al. (2016). The head scores the ``cutoffs[0]`` most frequent classes plus one entry per
tail cluster; each cluster's classes are scored by its own two-layer projection (``in_features``
-> ``in_features // div_value ** (i + 1)`` -> cluster size), only for the rows whose target lies in
that cluster. PyTorch's parameters, state_dict keys, outputs and errors."""
from __future__ import annotations

from collections import namedtuple
from typing import Sequence

from tinytorch._ops.elementwise import where
from tinytorch._ops.shape import cat
from tinytorch.nn import functional as F
from tinytorch.nn.common_types import _device_t, _dtype_t
from tinytorch.nn.modules.container import ModuleList, Sequential
from tinytorch.nn.modules.linear import Linear
from tinytorch.nn.modules.module import Module
from tinytorch._tensor.tensor import Tensor

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Efficient softmax approximation.

    Efficient softmax approximation: forward returns ``(output, loss)``, the target log
    probability of each row and the mean negative log likelihood.

    Args:
        in_features (int): size of each input sample.
        n_classes (int): Number of classes in the dataset.
        cutoffs (Sequence): Cutoffs used to assign targets to their buckets.
        div_value (float, optional): value used as an exponent to compute sizes of the clusters.
            Default: ``4.0``
        head_bias (bool, optional): If ``True``, adds a bias term to the 'head' of the adaptive softmax.
            Default: ``False``
        device (device, optional): the device of the parameters and buffers. Default: ``None``
        dtype (dtype, optional): the dtype of the parameters and buffers. Default: ``None``"""

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int], div_value: float = 4.0,
                 head_bias: bool = False, device: _device_t = None, dtype: _dtype_t = None) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in an increasing "
                             "order, where each value is between 1 and n_classes-1")
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        kw = {"device": device, "dtype": dtype}
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hsz, bias=False, **kw),
                                        Linear(hsz, osz, bias=False, **kw)))

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_: Tensor, target_: Tensor) -> _ASMoutput:
        if target_.dim() == 1:
            if input_.shape[0] != target_.shape[0]:
                raise RuntimeError("Input and target should have the same size in the batch dimension.")
            if input_.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with size "
                                   f"{list(input_.shape)}")
        elif target_.dim() == 0:
            if input_.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with size "
                                   f"{list(input_.shape)}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target_.dim() > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = (target_ if batched else target_.unsqueeze(0)).long()
        if target.numel() and (int(target.min()) < 0 or int(target.max()) >= self.n_classes):
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                               f"[{int(target.min())}, {int(target.max())}] were found. ")
        # the head entry each row's target goes through: its class (shortlist) or its cluster's entry
        head_index = target.clone()
        output = input.new_zeros((target.shape[0],))
        for i in range(self.n_clusters):
            low, high = self.cutoffs[i], self.cutoffs[i + 1]
            in_cluster = (target >= low) & (target < high)
            rows = in_cluster.nonzero().reshape(-1)
            if rows.numel() == 0:
                continue
            head_index = where(in_cluster, self.shortlist_size + i, head_index)
            cluster_logprob = F.log_softmax(self.tail[i](input.index_select(0, rows)), dim=1)
            local = cluster_logprob.gather(1, (target.index_select(0, rows) - low).unsqueeze(1)).squeeze(1)
            output = output.index_add(0, rows, local)
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output = output + head_logprob.gather(1, head_index.unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _get_full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:
        """(B, n_classes) log probabilities of every class."""
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster_logprob = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster_logprob + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return cat(parts, 1)

    def _check_rank(self, input: Tensor) -> None:
        if input.dim() not in (1, 2):
            raise RuntimeError(f"Expected 1D or 2D input, got input of shape {list(input.shape)}")

    def log_prob(self, input: Tensor) -> Tensor:
        """Computes log probabilities for all :math:`\\texttt{n\\_classes}`: (N, n_classes) or (n_classes)."""
        self._check_rank(input)
        batched = input.dim() == 2
        x = input if batched else input.unsqueeze(0)
        out = self._get_full_log_prob(x, self.head(x))
        return out if batched else out.squeeze(0)

    def predict(self, input: Tensor) -> Tensor:
        """Returns the class with the highest probability for each example in the input minibatch
        (the head's best class when it is in the shortlist, else the full distribution's)."""
        self._check_rank(input)
        batched = input.dim() == 2
        x = input if batched else input.unsqueeze(0)
        head_output = self.head(x)
        best = head_output.argmax(1)
        outside = best >= self.shortlist_size
        if bool(outside.any()):
            rows = outside.nonzero().reshape(-1)
            full = self._get_full_log_prob(x.index_select(0, rows), head_output.index_select(0, rows))
            best = best.index_put((rows,), full.argmax(1))
        return best if batched else best.squeeze(0)

