"""MultiplicativeLR, ConstantLR, PolynomialLR, CyclicLR and ChainedScheduler (re-exported by
``tinytorch.optim.lr_scheduler``), in PyTorch's chainable forms and closed forms."""
from __future__ import annotations

import math
from typing import Any, Callable, List, Optional, Sequence

from tinytorch.optim._lr_onecycle_plateau import _format_param, _momentum_key, _set_momentum
from tinytorch.optim.lr_scheduler import LambdaLR, LRScheduler, _lrs


class MultiplicativeLR(LambdaLR):
    """Multiplies the learning rate of each parameter group by the factor given by lr_lambda(epoch)
    (LambdaLR's arguments and state dict; the factor compounds instead of scaling the initial lr)."""

    def get_lr(self) -> List[float]:
        if self.last_epoch > 0:
            return [lr * f(self.last_epoch) for lr, f in zip(_lrs(self.optimizer), self.lr_lambdas)]
        return _lrs(self.optimizer)


class ConstantLR(LRScheduler):
    """Multiplies the learning rate by factor until the epoch reaches total_iters."""

    def __init__(self, optimizer: Any, factor: float = 1.0 / 3, total_iters: int = 5, last_epoch: int = -1) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> List[float]:
        if self.last_epoch == 0:
            return [lr * self.factor for lr in _lrs(self.optimizer)]
        if self.last_epoch != self.total_iters:
            return _lrs(self.optimizer)
        return [lr * (1.0 / self.factor) for lr in _lrs(self.optimizer)]

    def _get_closed_form_lr(self) -> List[float]:
        return [b * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor)) for b in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Decays the learning rate with a polynomial of the given power over total_iters steps."""

    def __init__(self, optimizer: Any, total_iters: int = 5, power: float = 1.0, last_epoch: int = -1) -> None:
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> List[float]:
        if self.last_epoch == 0 or self.last_epoch > self.total_iters:
            return _lrs(self.optimizer)
        factor = ((1.0 - self.last_epoch / self.total_iters) / (1.0 - (self.last_epoch - 1) / self.total_iters)) \
            ** self.power
        return [lr * factor for lr in _lrs(self.optimizer)]

    def _get_closed_form_lr(self) -> List[float]:
        return [b * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
                for b in self.base_lrs]


class CyclicLR(LRScheduler):
    """Cycles the learning rate between base_lr and max_lr (triangular, triangular2, exp_range or a
    custom scale_fn), one step per batch; momentum cycles inversely when cycle_momentum."""

    def __init__(self, optimizer: Any, base_lr, max_lr, step_size_up: int = 2000, step_size_down: Optional[int] = None,
                 mode: str = "triangular", gamma: float = 1.0, scale_fn: Optional[Callable] = None,
                 scale_mode: str = "cycle", cycle_momentum: bool = True, base_momentum=0.8, max_momentum=0.9,
                 last_epoch: int = -1) -> None:
        base_lrs = _format_param("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = lr
        self.max_lrs = _format_param("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size, self.step_ratio = up + down, up / (up + down)
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode, self.gamma, self._scale_fn_custom = mode, gamma, scale_fn
        self.scale_mode = scale_mode if scale_fn is not None else ("cycle" if mode != "exp_range" else "iterations")
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self._use_beta1 = _momentum_key(optimizer)
            self.base_momentums = _format_param("base_momentum", optimizer, base_momentum)
            self.max_momentums = _format_param("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for m, group in zip(self.max_momentums, optimizer.param_groups):
                    _set_momentum(group, m, self._use_beta1)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def scale_fn(self, x: float) -> float:
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x

    def get_lr(self) -> List[float]:
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        scale = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        arg = cycle if self.scale_mode == "cycle" else self.last_epoch
        lrs = [b + (m - b) * scale * self.scale_fn(arg) for b, m in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, bm, mm in zip(self.optimizer.param_groups, self.base_momentums, self.max_momentums):
                _set_momentum(group, mm - (mm - bm) * scale * self.scale_fn(arg), self._use_beta1)
        return lrs


class ChainedScheduler(LRScheduler):
    """Steps every scheduler in the list at once (their multiplicative effects compose)."""

    def __init__(self, schedulers: Sequence[LRScheduler], optimizer: Any = None) -> None:
        if not schedulers:
            raise ValueError("ChainedScheduler expects at least one scheduler")
        self.optimizer = optimizer or schedulers[0].optimizer
        for i, s in enumerate(schedulers):
            if s.optimizer is not self.optimizer:
                raise ValueError(f"ChainedScheduler expects all schedulers to belong to the same optimizer, but got "
                                 f"scheduler {type(s).__name__} at index {i} with a different one")
        self._schedulers = list(schedulers)
        self._last_lr = _lrs(self.optimizer)

    def step(self) -> None:  # type: ignore[override]
        for s in self._schedulers:
            s.step()
        self._last_lr = _lrs(self.optimizer)

    def state_dict(self):
        return {"_schedulers": [s.state_dict() for s in self._schedulers], "_last_lr": self._last_lr}

    def load_state_dict(self, state_dict) -> None:
        for s, sd in zip(self._schedulers, state_dict["_schedulers"]):
            s.load_state_dict(sd)
        self._last_lr = state_dict["_last_lr"]
