"""``Chuck``: Notorch's "self-aware Adam" (Adam whose step size watches the loss and the gradients)."""
from __future__ import annotations

import math
from typing import Any, Callable, Optional

from tinytorch import _C
from tinytorch.optim._hyperparameters import _as_float, _check_hyperparameters
from tinytorch.optim.optimizer import Optimizer, ParamsT, _zeros_like, scalar_state
from tinytorch._ops.index import stack
from tinytorch.random import Generator, randn
from tinytorch._tensor.tensor import Tensor

__all__ = ["Chuck"]

# The key of the optimizer-wide state in ``self.state`` (a string key passes through
# ``state_dict()`` unchanged, next to the parameters' integer ids).
_GLOBAL = "chuck"


def _quarter_trend(ring: list[float], eps: float) -> float | None:
    """(mean of the newest quarter - mean of the oldest quarter) / the oldest quarter's mean, over a
    ring given oldest-first; None while the ring holds fewer than 8 entries or the old mean is ~0."""
    if len(ring) < 8:
        return None
    q = max(len(ring) // 4, 1)
    old = sum(ring[:q]) / q
    new = sum(ring[-q:]) / q
    if old <= eps:
        return None
    return (new - old) / old


def _push_trend(st: dict[str, Any], ring: str, value: float, window: int) -> float | None:
    """Appends ``value`` to the ring ``st[ring]`` (its newest ``window`` entries kept) and returns
    the ring's quarter trend."""
    st[ring] = (st[ring] + [value])[-window:]
    return _quarter_trend(st[ring], 1e-8)


def _damp(damping: float, trend: float, threshold: float, above: float, below: float) -> float:
    """``damping`` times ``above`` for a trend above ``threshold``, times ``below`` for one below
    ``-threshold``."""
    if trend > threshold:
        damping *= above
    if trend < -threshold:
        damping *= below
    return damping


def _revert_and_clamp(value: float, revert: float, lo: float, hi: float) -> float:
    value = revert * value + (1.0 - revert)
    return min(max(value, lo), hi)


class Chuck(Optimizer):
    r"""Implements Notorch's Chuck optimizer: Adam whose step is ``lr * λ * λ_p * s`` (+ noise).

    The Adam part is exactly :class:`Adam` (bias-corrected moments; ``weight_decay`` is decoupled
    as in :class:`AdamW`: ``p *= 1 - lr_eff * weight_decay`` with the same effective learning rate).
    Five levels adapt the step; their constants are Notorch's and are constructor arguments, so
    any level can be held neutral (e.g. ``damp_up=damp_down=1.0`` keeps λ = 1):

    1. **Loss trend → global damping λ.** An EMA of the loss (``loss_ema_decay``, 0.99; starting at
       the first loss) is pushed into a ``window``-step ring (16). Once the ring holds ≥ 8 entries,
       ``trend = (mean(newest quarter) - mean(oldest quarter)) / mean(oldest quarter)``; a trend
       above ``trend_threshold`` (0.02) multiplies λ by ``damp_down`` (0.97), one below
       ``-trend_threshold`` by ``damp_up`` (1.03). Every step then ``λ ← mean_revert·λ +
       (1 - mean_revert)`` (0.999) and λ is clamped to [``damp_min``, ``damp_max``] = [0.3, 2.0].
    2. **Per-parameter damping λ_p.** Each parameter's gradient L2 norm goes into its own ring;
       with the same quarter trend, above ``param_trend_threshold`` (0.05) multiplies λ_p by
       ``damp_up``, below its negative by ``damp_down``; same mean reversion and clamp.
    3. **Stagnation escape.** When the loss trend is computed and ``|trend| <
       stagnation_threshold`` (0.001) for ``stagnation_steps`` (8) consecutive steps, the noise
       magnitude is set to ``noise_magnitude`` (0.001) and the count restarts; a step with a larger
       |trend| resets the count and multiplies the magnitude by ``noise_decay`` (0.9). While the
       magnitude is > 0, Gaussian noise of that standard deviation is added to every update.
    4. **Freezing.** A parameter whose gradient norm is below ``freeze_threshold`` (0.01) for
       ``freeze_steps`` (8) consecutive steps is frozen: skipped (no update, no state change) from
       then on. ``freeze_threshold=0`` turns this off.
    5. **Macro patience.** A slow loss EMA (``macro_ema_decay``, 0.999) is checked every
       ``macro_interval`` (1000) steps once more than ``window`` steps ran: if it is not below
       ``0.999 × best``, a stagnation count rises and at ``macro_patience`` (3) the scale ``s`` is
       multiplied by ``macro_decay`` (0.5; floor ``macro_min_scale`` = 0.05) and the count
       restarts; a new best resets the count and multiplies ``s`` by ``macro_recovery`` (1.2, cap 1).

    The loss is needed every step: ``step(closure)`` (the closure's return value) or
    ``step(loss=value)`` (a float or a one-element tensor). ``state_dict()`` holds everything: the
    per-parameter Adam moments, step, λ_p, gradient-norm ring, low-gradient count and frozen flag,
    and under the key ``"chuck"`` the optimizer-wide λ, loss rings and EMAs, noise magnitude,
    stagnation counts and scale ``s``.

    Args:
        params: iterable of parameters or param groups.
        lr: learning rate (default: 1e-3).
        betas: Adam's moment coefficients (default: (0.9, 0.999)).
        eps: Adam's denominator term (default: 1e-8).
        weight_decay: decoupled weight decay, as AdamW (default: 0).
        generator: the ``tinytorch.Generator`` drawing the stagnation noise (default: the global one).

    Example::

        >>> opt = tinytorch.optim.Chuck(model.parameters(), lr=3e-4)
        >>> loss = loss_fn(model(x), y); loss.backward()
        >>> opt.step(loss=loss); opt.zero_grad()
    """

    def __init__(self, params: ParamsT, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0.0, *, window: int = 16, loss_ema_decay: float = 0.99,
                 trend_threshold: float = 0.02, damp_down: float = 0.97, damp_up: float = 1.03,
                 mean_revert: float = 0.999, damp_min: float = 0.3, damp_max: float = 2.0,
                 param_trend_threshold: float = 0.05, stagnation_threshold: float = 0.001,
                 stagnation_steps: int = 8, noise_magnitude: float = 0.001, noise_decay: float = 0.9,
                 freeze_threshold: float = 0.01, freeze_steps: int = 8, macro_ema_decay: float = 0.999,
                 macro_interval: int = 1000, macro_patience: int = 3, macro_decay: float = 0.5,
                 macro_min_scale: float = 0.05, macro_recovery: float = 1.2,
                 generator: Optional[Generator] = None) -> None:
        _check_hyperparameters(type(self).__name__, False, lr=lr, eps=eps, betas=betas, weight_decay=weight_decay)
        for name, value in (("window", window), ("stagnation_steps", stagnation_steps),
                            ("freeze_steps", freeze_steps), ("macro_interval", macro_interval),
                            ("macro_patience", macro_patience)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"Chuck: {name} must be a positive int, got {value!r}")
        if window < 8:
            raise ValueError(f"Chuck: window must be >= 8 (the trend needs 8 entries), got {window}")
        if not 0.0 < damp_min <= 1.0 <= damp_max:
            raise ValueError(f"Chuck: need 0 < damp_min <= 1 <= damp_max, got damp_min={damp_min}, "
                             f"damp_max={damp_max}")
        for name, value in (("loss_ema_decay", loss_ema_decay), ("mean_revert", mean_revert),
                            ("noise_decay", noise_decay), ("macro_ema_decay", macro_ema_decay)):
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"Chuck: {name} must be in [0, 1], got {value}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, window=window,
                        loss_ema_decay=loss_ema_decay, trend_threshold=trend_threshold, damp_down=damp_down,
                        damp_up=damp_up, mean_revert=mean_revert, damp_min=damp_min, damp_max=damp_max,
                        param_trend_threshold=param_trend_threshold, stagnation_threshold=stagnation_threshold,
                        stagnation_steps=stagnation_steps, noise_magnitude=noise_magnitude,
                        noise_decay=noise_decay, freeze_threshold=freeze_threshold, freeze_steps=freeze_steps,
                        macro_ema_decay=macro_ema_decay, macro_interval=macro_interval,
                        macro_patience=macro_patience, macro_decay=macro_decay,
                        macro_min_scale=macro_min_scale, macro_recovery=macro_recovery)
        super().__init__(params, defaults)
        self._generator = generator

    # The optimizer-wide levels read their constants from the first param group.
    @property
    def _hp(self) -> dict[str, Any]:
        return self.param_groups[0]

    def _global_state(self) -> dict[str, Any]:
        st = self.state[_GLOBAL]
        if not st:
            st.update(step=0, damping=1.0, loss_ema=None, loss_ring=[], stagnation_count=0, noise=0.0,
                      macro_ema=None, macro_best=1e9, macro_count=0, scale=1.0)
        return st

    def _update_global(self, loss: float) -> dict[str, Any]:
        """Levels 1, 3 and 5: the loss EMA ring → λ, the stagnation noise, the macro scale s."""
        hp, st = self._hp, self._global_state()
        d = hp["loss_ema_decay"]
        st["loss_ema"] = loss if st["loss_ema"] is None else d * st["loss_ema"] + (1.0 - d) * loss
        trend = _push_trend(st, "loss_ring", st["loss_ema"], hp["window"])
        if trend is not None:   # a rising loss damps the step
            st["damping"] = _damp(st["damping"], trend, hp["trend_threshold"], hp["damp_down"], hp["damp_up"])
            if abs(trend) < hp["stagnation_threshold"]:
                st["stagnation_count"] += 1
                if st["stagnation_count"] >= hp["stagnation_steps"]:
                    st["noise"] = hp["noise_magnitude"]
                    st["stagnation_count"] = 0
            else:
                st["stagnation_count"] = 0
                st["noise"] *= hp["noise_decay"]
        st["damping"] = _revert_and_clamp(st["damping"], hp["mean_revert"], hp["damp_min"], hp["damp_max"])

        st["step"] += 1
        d = hp["macro_ema_decay"]
        st["macro_ema"] = loss if st["macro_ema"] is None else d * st["macro_ema"] + (1.0 - d) * loss
        if st["step"] % hp["macro_interval"] == 0 and st["step"] > hp["window"]:
            if st["macro_ema"] > st["macro_best"] * 0.999:
                st["macro_count"] += 1
                if st["macro_count"] >= hp["macro_patience"]:
                    st["scale"] = max(st["scale"] * hp["macro_decay"], hp["macro_min_scale"])
                    st["macro_count"] = 0
            else:
                st["macro_best"] = st["macro_ema"]
                st["macro_count"] = 0
                st["scale"] = min(st["scale"] * hp["macro_recovery"], 1.0)
        return st

    def _update_param(self, group: dict[str, Any], st: dict[str, Any], grad_norm: float) -> None:
        """Levels 2 and 4: the gradient-norm ring → λ_p, and the low-gradient count → frozen."""
        trend = _push_trend(st, "grad_norm_ring", grad_norm, group["window"])
        if trend is not None:   # a rising gradient norm raises the parameter's step
            st["damping"] = _damp(st["damping"], trend, group["param_trend_threshold"], group["damp_up"],
                                  group["damp_down"])
        st["damping"] = _revert_and_clamp(st["damping"], group["mean_revert"], group["damp_min"], group["damp_max"])
        if grad_norm < group["freeze_threshold"]:
            st["low_grad_count"] += 1
            if st["low_grad_count"] >= group["freeze_steps"]:
                st["frozen"] = True
        else:
            st["low_grad_count"] = 0

    def step(self, closure: Callable[[], Any] | None = None, *, loss: float | Tensor | None = None) -> Any:
        """Performs a single optimization step.

        Args:
            closure: re-evaluates the model and returns the loss.
            loss: the loss of this step (a float or one-element tensor), when no closure is given.
        """
        if closure is not None:
            if loss is not None:
                raise ValueError("Chuck.step: pass either closure or loss, not both")
            loss = self._eval_closure(closure)
            result = loss
        else:
            result = None
        if loss is None:
            raise ValueError("Chuck.step needs the loss: call step(closure) with a closure returning the loss, "
                             "or step(loss=value)")
        if isinstance(loss, Tensor) and loss.numel() != 1:
            raise ValueError(f"Chuck.step: loss must be a scalar, got a tensor of shape {tuple(loss.shape)}")
        loss_value = _as_float(loss)
        if not math.isfinite(loss_value):
            raise ValueError(f"Chuck.step: loss must be finite, got {loss_value}")
        gst = self._update_global(loss_value)

        for group in self.param_groups:
            live = [p for p in group["params"] if p._grad is not None]
            if not live:
                continue
            # One host sync per group for all gradient norms.
            norms = _stacked_norms([p._grad for p in live])
            beta1, beta2 = (_as_float(b) for b in group["betas"])
            for p, grad_norm in zip(live, norms):
                st = self.state[p]
                if not st:
                    st.update(step=scalar_state(0.0), exp_avg=_zeros_like(p), exp_avg_sq=_zeros_like(p),
                              damping=1.0, grad_norm_ring=[], low_grad_count=0, frozen=False)
                if st["frozen"]:
                    continue
                self._update_param(group, st, grad_norm)
                lr = _as_float(group["lr"]) * gst["damping"] * st["damping"] * gst["scale"]
                _C.adam_step_multi_([p._impl], [p._grad._impl], [st["exp_avg"]._impl], [st["exp_avg_sq"]._impl],
                                    [], [st["step"]._impl], lr, beta1, beta2, float(group["eps"]),
                                    float(group["weight_decay"]), False, False, True)
                if gst["noise"] > 0.0:
                    p.add_(randn(*p.shape, generator=self._generator, dtype=p.dtype, device=p.device),
                           alpha=gst["noise"])
        return result

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        super().load_state_dict(state_dict)
        if _GLOBAL in self.state:  # copied, so the loaded optimizer does not share it with the source
            self.state[_GLOBAL] = {k: (list(v) if isinstance(v, list) else v) for k, v in self.state[_GLOBAL].items()}


def _stacked_norms(grads: list[Tensor]) -> list[float]:
    return stack([g.detach().float().norm() for g in grads]).tolist()
