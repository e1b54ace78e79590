"""``no_init_weights()``: builds a model without drawing random initial weights (as transformers'
context of the same name), for loaders that overwrite every parameter anyway; ``Linear`` and
``Embedding`` here are ``nn``'s, with their random init skipped inside that context.

``Linear`` also computes a few rows (a decode step) as weight @ x^T: the core's ``F.linear`` with
one row runs its GEMM path (3-14x slower than a matrix-vector product on SmolLM2's shapes,
bench/llm_bench.py), while ``matmul`` of a matrix by a vector takes the GEMV path."""
from __future__ import annotations

import contextlib
import contextvars

from tinytorch.nn.modules.linear import Linear as _NNLinear
from tinytorch.nn.modules.sparse import Embedding as _NNEmbedding

_SKIP_INIT = contextvars.ContextVar("tinytorch_models_skip_init", default=False)


@contextlib.contextmanager
def no_init_weights():
    """Modules built inside leave their weights uninitialized (the caller fills them)."""
    token = _SKIP_INIT.set(True)
    try:
        yield
    finally:
        _SKIP_INIT.reset(token)


class Linear(_NNLinear):
    """``nn.Linear`` whose random init is skipped under :func:`no_init_weights`."""

    def reset_parameters(self) -> None:
        if not _SKIP_INIT.get():
            super().reset_parameters()

    def forward(self, x):
        if x.dim() >= 1 and x.numel() == self.in_features and x.shape[-1] == self.in_features:
            y = (self.weight @ x.reshape(self.in_features)).reshape(*x.shape[:-1], self.out_features)
            return y if self.bias is None else y + self.bias
        return super().forward(x)


class Embedding(_NNEmbedding):
    """``nn.Embedding`` whose random init is skipped under :func:`no_init_weights`."""

    def reset_parameters(self) -> None:
        if not _SKIP_INIT.get():
            super().reset_parameters()
