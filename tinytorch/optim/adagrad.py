"""``Adagrad`` (fused C++ step)."""
from __future__ import annotations

from tinytorch.optim._hyperparameters import _check_hyperparameters
from tinytorch.optim.optimizer import ParamsT, _FusedOptimizer, _full_like, scalar_state

__all__ = ["Adagrad"]


class Adagrad(_FusedOptimizer):
    r"""Implements the Adagrad algorithm, as ``torch.optim.Adagrad``:

    clr = lr / (1 + (step - 1) * lr_decay); sum += g^2; p -= clr * g / (sqrt(sum) + eps).
    State (created in the constructor, as PyTorch does): ``step``, ``sum``.
    """

    _kernel = "adagrad_step_multi_"
    _args = ("lr", "lr_decay", "weight_decay", "eps", "maximize")

    def __init__(self, params: ParamsT, lr: float = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False, fused: bool | None = None) -> None:
        _check_hyperparameters("Adagrad", differentiable, lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                               initial_accumulator_value=initial_accumulator_value, eps=eps)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                st = self.state[p]
                st["step"] = scalar_state(0.0)
                st["sum"] = _full_like(p, group["initial_accumulator_value"])

    def _state_lists(self, group):
        # state is normally created in the constructor; this covers a group added after it
        return self._collect(group, ("sum",), fill=group["initial_accumulator_value"])
