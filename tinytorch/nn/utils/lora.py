"""LoRA (Hu et al. 2021): low-rank adapters on frozen linear layers.

``LoRALinear(base)`` computes ``base(x) + (dropout(x) @ A^T @ B^T) * alpha / r`` with ``A: (r, in)``
(Kaiming-uniform, as PEFT) and ``B: (out, r)`` (zeros, so a fresh adapter changes nothing). Only
``A`` and ``B`` train. ``base`` is any module with ``in_features``, ``out_features`` and
``forward(x) = x @ W^T (+ b)``: an ``nn.Linear``, or a packed quantized linear whose weight stays
packed (QLoRA-style; ``merge()`` then raises, since there is no float weight to merge into).

``inject_lora(model, target_modules)`` swaps matching submodules for ``LoRALinear`` wrappers and
freezes everything else; ``lora_state_dict`` / ``save_lora`` / ``load_lora`` move only the
adapters (a flat safetensors file through ``tinytorch.save``). After injection the base layer's
parameters are named ``<name>.base.weight`` (PEFT's ``base_layer`` in the same place).
"""
from __future__ import annotations

import fnmatch
import math
import re
from collections import OrderedDict
from contextlib import contextmanager
from typing import Iterable, Iterator

from tinytorch._tensor.creation import empty, zeros
from tinytorch._core.dtype import float32
from tinytorch.autograd.grad_mode import no_grad
from tinytorch.nn import functional as F
from tinytorch.nn import init
from tinytorch.nn.modules.module import Module
from tinytorch.nn.parameter import Parameter
from tinytorch.serialization import load, save
from tinytorch._tensor.tensor import Tensor

__all__ = ["LoRALinear", "inject_lora", "lora_state_dict", "save_lora", "load_lora", "merge_lora", "unmerge_lora",
           "disable_lora"]

_LORA_KEYS = ("lora_A", "lora_B")


def _float_weight(base: Module) -> Tensor | None:
    w = getattr(base, "weight", None)
    if isinstance(w, Tensor) and w.dtype.is_floating_point and tuple(w.shape) == (base.out_features,
                                                                                  base.in_features):
        return w
    return None


class LoRALinear(Module):
    r"""A frozen linear layer plus a trainable low-rank update ``ΔW = B A · alpha / r``.

    Args:
        base: the layer to adapt: any module with ``in_features``, ``out_features`` and
            ``forward(x)`` computing ``x @ W^T`` (+ bias) (``nn.Linear``, a packed quantized linear).
            Its parameters are frozen.
        r: the rank (> 0).
        alpha: the scaling numerator; the update is scaled by ``alpha / r``.
        dropout: dropout probability on the adapter's input (training mode only).

    Shape:
        ``(*, in_features) -> (*, out_features)``.
    """

    def __init__(self, base: Module, r: int = 8, alpha: float = 16.0, dropout: float = 0.0) -> None:
        super().__init__()
        if not isinstance(base, Module):
            raise TypeError(f"LoRALinear: base must be a Module, got {type(base).__name__}")
        for attr in ("in_features", "out_features"):
            if not isinstance(getattr(base, attr, None), int):
                raise TypeError(f"LoRALinear: base must have an int {attr} (a linear layer), got "
                                f"{type(base).__name__}")
        if isinstance(base, LoRALinear):
            raise TypeError("LoRALinear: base is already a LoRALinear")
        if not isinstance(r, int) or isinstance(r, bool) or r <= 0:
            raise ValueError(f"LoRALinear: rank r must be a positive int, got {r!r}")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"LoRALinear: dropout must be in [0, 1), got {dropout}")
        self.base = base
        base.requires_grad_(False)
        self.in_features, self.out_features = base.in_features, base.out_features
        self.r, self.alpha, self.dropout = r, float(alpha), float(dropout)
        self.scaling = self.alpha / r
        w = _float_weight(base)
        dtype = w.dtype if w is not None else float32
        # the base's device: a packed quantized base holds buffers only
        held = next(iter(base.parameters()), None)
        held = held if held is not None else next(iter(base.buffers()), None)
        device = held.device if held is not None else None
        self.lora_A = Parameter(empty(r, self.in_features, dtype=dtype, device=device))
        self.lora_B = Parameter(zeros(self.out_features, r, dtype=dtype, device=device))
        init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))
        self.merged = False
        self.disabled = False  # set by disable_lora: the forward is the base layer's alone

    def delta_weight(self) -> Tensor:
        """``B @ A * alpha / r``: ``(out_features, in_features)``."""
        return (self.lora_B @ self.lora_A) * self.scaling

    def forward(self, x: Tensor) -> Tensor:
        y = self.base(x)
        if self.merged or self.disabled:
            return y
        h = F.dropout(x, self.dropout, self.training) if self.dropout else x
        h = h.to(self.lora_A.dtype) if h.dtype != self.lora_A.dtype else h
        update = F.linear(F.linear(h, self.lora_A), self.lora_B) * self.scaling
        return y + update.to(y.dtype)

    def _weight_for_merge(self, what: str) -> Tensor:
        w = _float_weight(self.base)
        if w is None:
            raise NotImplementedError(f"LoRALinear.{what}: the base layer ({type(self.base).__name__}) has no float "
                                      f"weight of shape ({self.out_features}, {self.in_features}) to merge into; "
                                      "keep the adapter separate (a packed quantized base stays packed)")
        return w

    def _set_merged(self, merged: bool) -> None:
        """Adds (merged) or subtracts ``ΔW`` to or from the base weight, in place."""
        what = "merge" if merged else "unmerge"
        if bool(self.merged) == merged:
            raise RuntimeError(f"LoRALinear.{what}: " + ("already merged" if merged else "not merged"))
        w = self._weight_for_merge(what)
        with no_grad():
            delta = self.delta_weight().to(w.dtype)
            if merged:
                w.add_(delta)
            else:
                w.sub_(delta)
        self.merged = merged

    def merge(self) -> None:
        """Adds ``ΔW`` into the base weight (inference without the adapter's extra matmuls)."""
        self._set_merged(True)

    def unmerge(self) -> None:
        """Subtracts ``ΔW`` from the base weight again (back to training the adapter)."""
        self._set_merged(False)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, r={self.r}, "
                f"alpha={self.alpha:g}, dropout={self.dropout:g}, merged={self.merged}")


def _matcher(target_modules):
    """A predicate on dotted module names. A str is a regular expression matched against the
    whole name (PEFT's convention); a list holds fnmatch patterns, each matched against the whole
    name and against its last component (so ``"q_proj"`` and ``"*.attn.*"`` both work)."""
    if isinstance(target_modules, str):
        rx = re.compile(target_modules)
        return lambda name: rx.fullmatch(name) is not None
    patterns = list(target_modules)
    if not patterns or not all(isinstance(p, str) for p in patterns):
        raise ValueError(f"inject_lora: target_modules must be a regex str or a non-empty list of str patterns, "
                         f"got {target_modules!r}")
    return lambda name: any(fnmatch.fnmatchcase(name, p) or fnmatch.fnmatchcase(name.rpartition(".")[2], p)
                            for p in patterns)


def inject_lora(model: Module, target_modules: str | Iterable[str], r: int = 8, alpha: float = 16.0,
                dropout: float = 0.0) -> list[str]:
    """Wraps every submodule whose name matches ``target_modules`` in a :class:`LoRALinear`, in place,
    and freezes all of the model's other parameters.

    Args:
        model: the model to adapt.
        target_modules: a list of fnmatch patterns (each tried on the full dotted name and on its
            last component: ``["q_proj", "v_proj"]``, ``["blocks.*.mlp.*"]``), or one regular
            expression str matched against the full name.
        r, alpha, dropout: as :class:`LoRALinear`.

    Returns:
        The names of the wrapped modules.

    Raises:
        ValueError: no module matches (the message names the patterns), or ``r <= 0``.
        TypeError: a matching module is not a linear layer (no ``in_features``/``out_features``).
    """
    if not isinstance(r, int) or isinstance(r, bool) or r <= 0:
        raise ValueError(f"inject_lora: rank r must be a positive int, got {r!r}")
    match = _matcher(target_modules)
    wrapped = [name for name, _ in _lora_modules(model)]
    names = [name for name, m in model.named_modules() if name and match(name) and not isinstance(m, LoRALinear)]
    # a match inside an adapted or an outer matched module is not wrapped again
    names = [n for n in names if not any(n.startswith(o + ".") for o in names + wrapped)]
    if not names:
        raise ValueError(f"inject_lora: no module of {type(model).__name__} matches target_modules="
                         f"{target_modules!r}")
    for name in names:
        m = model.get_submodule(name)
        if not (isinstance(getattr(m, "in_features", None), int) and isinstance(getattr(m, "out_features", None), int)):
            raise TypeError(f"inject_lora: module {name!r} ({type(m).__name__}) matches target_modules but is not a "
                            "linear layer (no in_features/out_features)")
    model.requires_grad_(False)
    for name in names:
        parent_name, _, child = name.rpartition(".")
        parent = model.get_submodule(parent_name)
        # replaced in place in _modules: keeps the registration order (a Sequential's order)
        parent._modules[child] = LoRALinear(parent._modules[child], r=r, alpha=alpha, dropout=dropout)
    return names


def _lora_modules(model: Module):
    return [(name, m) for name, m in model.named_modules() if isinstance(m, LoRALinear)]


def lora_state_dict(model: Module) -> "OrderedDict[str, Tensor]":
    """The adapters' tensors only: ``{"<module>.lora_A": A, "<module>.lora_B": B, ...}`` (detached)."""
    out: OrderedDict[str, Tensor] = OrderedDict()
    for name, m in _lora_modules(model):
        for key in _LORA_KEYS:
            out[f"{name}.{key}" if name else key] = getattr(m, key).detach()
    return out


def save_lora(model: Module, f) -> None:
    """Saves :func:`lora_state_dict` as a flat safetensors file (``tinytorch.save``)."""
    sd = lora_state_dict(model)
    if not sd:
        raise ValueError(f"save_lora: {type(model).__name__} has no LoRALinear modules (call inject_lora first)")
    save(dict(sd), f)


def load_lora(model: Module, f, map_location=None) -> None:
    """Loads adapters saved by :func:`save_lora` (or a ``lora_state_dict``) into a model injected
    with the same targets and ranks; every adapter must be present, and nothing else."""
    sd = f if isinstance(f, dict) else load(f, map_location=map_location)
    own = lora_state_dict(model)
    missing = [k for k in own if k not in sd]
    unexpected = [k for k in sd if k not in own]
    if missing or unexpected:
        raise RuntimeError(f"load_lora: the adapters do not match the model's LoRA modules: missing {missing}, "
                           f"unexpected {unexpected}")
    for k, v in sd.items():
        if tuple(v.shape) != tuple(own[k].shape):
            raise RuntimeError(f"load_lora: size mismatch for {k}: file has {tuple(v.shape)}, the model "
                               f"{tuple(own[k].shape)} (a different rank r?)")
    merged = [name for name, m in _lora_modules(model) if m.merged]
    if merged:
        raise RuntimeError(f"load_lora: unmerge these modules first: {merged}")
    with no_grad():
        for k, v in sd.items():
            own[k].copy_(v)


def merge_lora(model: Module) -> None:
    """``merge()`` on every LoRALinear of ``model``."""
    for _, m in _lora_modules(model):
        m.merge()


def unmerge_lora(model: Module) -> None:
    """``unmerge()`` on every LoRALinear of ``model``."""
    for _, m in _lora_modules(model):
        m.unmerge()


@contextmanager
def disable_lora(model: Module) -> Iterator[Module]:
    """Within the block ``model`` computes as its frozen base: every :class:`LoRALinear` skips its
    adapter (PEFT's ``disable_adapter()``; the reference model of DPO / GRPO without a second copy
    of the weights). Merged adapters raise ``RuntimeError`` (their update is inside the base weight).

    Example::

        with tinytorch.no_grad(), disable_lora(model):
            ref_logits = model(input_ids)
    """
    modules = _lora_modules(model)
    if not modules:
        raise ValueError(f"disable_lora: {type(model).__name__} has no LoRALinear modules (call inject_lora first)")
    merged = [name for name, m in modules if m.merged]
    if merged:
        raise RuntimeError(f"disable_lora: these adapters are merged into their base weights, unmerge them first: "
                           f"{merged}")
    previous = [m.disabled for _, m in modules]
    for _, m in modules:
        m.disabled = True
    try:
        yield model
    finally:
        for (_, m), was in zip(modules, previous):
            m.disabled = was
