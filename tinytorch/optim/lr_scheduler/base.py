"""The scheduler base class: ``LRScheduler`` (and its old name ``_LRScheduler``).

Schedulers work on any optimizer-like object exposing ``param_groups`` (a list of dicts with an
``"lr"`` key). ``get_lr`` is PyTorch's chainable (recursive) form, so several schedulers can act on
one optimizer; ``step(epoch)`` uses a subclass's ``_get_closed_form_lr`` where one is documented.
State dicts hold only plain values (numbers, strings, lists, dicts), so they go through
``tinytorch.save`` unchanged."""
from __future__ import annotations

import warnings
from typing import Any, Dict, List, Optional

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where "
    "possible. Please use `scheduler.step()` to step the scheduler."
)


class LRScheduler:
    """Adjusts the learning rate during optimization.

    Args:
        optimizer: wrapped optimizer (anything with ``param_groups``).
        last_epoch (int): the index of last epoch. Default: -1 (a fresh start)."""

    _get_lr_called_within_step: bool = False

    def __init__(self, optimizer: Any, last_epoch: int = -1) -> None:
        if not hasattr(optimizer, "param_groups"):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer (it has no param_groups)")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when resuming an optimizer")
        self.base_lrs: List[float] = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        """Initialize step counts and perform a step."""
        self._step_count = 0
        self.step()

    def state_dict(self) -> Dict[str, Any]:
        """Returns the state of the scheduler as a :class:`dict`.

        It contains an entry for every variable in self.__dict__ which is not the optimizer."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: Dict[str, Any]) -> None:
        """Loads the schedulers state.

        Args:
            state_dict (dict): scheduler state. Should be an object returned from a call to
                :meth:`state_dict`."""
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> List[float]:
        """Return last computed learning rate by current scheduler."""
        return self._last_lr

    def get_lr(self) -> List[float]:
        """Compute learning rate using chainable form of the scheduler."""
        raise NotImplementedError

    def step(self, epoch: Optional[int] = None) -> None:
        """Performs a step (by default, advances ``last_epoch`` by one and updates every group's lr)."""
        self._step_count += 1
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
                self.last_epoch = epoch
                values = self._get_closed_form_lr() if hasattr(self, "_get_closed_form_lr") else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for param_group, lr in zip(self.optimizer.param_groups, values):
            param_group["lr"] = lr
        self._last_lr: List[float] = [group["lr"] for group in self.optimizer.param_groups]


_LRScheduler = LRScheduler  # the old name, still used by some code


def _lrs(opt) -> List[float]:
    return [group["lr"] for group in opt.param_groups]
