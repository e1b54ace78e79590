"""Learning-rate schedulers, as ``torch.optim.lr_scheduler``.

They work on any optimizer-like object exposing ``param_groups`` (a list of dicts with an ``"lr"``
key; ``"momentum"`` or ``"betas"`` for the momentum cycling of CyclicLR and OneCycleLR). Where
PyTorch uses a chainable (recursive) form in ``get_lr`` this package does too, so several
schedulers can act on one optimizer; ``step(epoch)`` uses the closed form where one is documented.

State dicts hold only plain values (numbers, strings, lists, dicts), so they go through
``tinytorch.save`` unchanged.

Modules: ``base`` (LRScheduler), ``decay`` (LambdaLR, MultiplicativeLR, StepLR, MultiStepLR,
ConstantLR, LinearLR, ExponentialLR, PolynomialLR), ``cosine`` (CosineAnnealingLR,
CosineAnnealingWarmRestarts), ``cyclic`` (CyclicLR, OneCycleLR), ``plateau`` (ReduceLROnPlateau),
``composite`` (SequentialLR, ChainedScheduler)."""
from tinytorch.optim.lr_scheduler.base import EPOCH_DEPRECATION_WARNING, LRScheduler, _LRScheduler  # noqa: F401
from tinytorch.optim.lr_scheduler.decay import (  # noqa: F401
    ConstantLR, ExponentialLR, LambdaLR, LinearLR, MultiplicativeLR, MultiStepLR, PolynomialLR, StepLR,
)
from tinytorch.optim.lr_scheduler.cosine import CosineAnnealingLR, CosineAnnealingWarmRestarts  # noqa: F401
from tinytorch.optim.lr_scheduler.cyclic import CyclicLR, OneCycleLR  # noqa: F401
from tinytorch.optim.lr_scheduler.plateau import ReduceLROnPlateau  # noqa: F401
from tinytorch.optim.lr_scheduler.composite import ChainedScheduler, SequentialLR  # noqa: F401

__all__ = ["LRScheduler", "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR",
           "CosineAnnealingWarmRestarts", "LambdaLR", "LinearLR", "OneCycleLR", "SequentialLR",
           "ReduceLROnPlateau", "MultiplicativeLR", "ConstantLR", "PolynomialLR", "CyclicLR", "ChainedScheduler"]
