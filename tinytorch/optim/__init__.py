"""``tinytorch.optim``: optimizers with PyTorch's API (``torch.optim``).

SGD, Adam, AdamW, Adadelta, Adagrad, RMSprop, Adamax, NAdam and RAdam update parameters with
fused multi-tensor C++ kernels (one ``_C`` call per param group per step); LBFGS runs its
two-loop recursion and line search over flattened parameters.
"""
from tinytorch.optim.optimizer import Optimizer
from tinytorch.optim.sgd import SGD
from tinytorch.optim.adam import Adam
from tinytorch.optim.adamw import AdamW
from tinytorch.optim.adadelta import Adadelta
from tinytorch.optim.adagrad import Adagrad
from tinytorch.optim.rmsprop import RMSprop
from tinytorch.optim.adamax import Adamax
from tinytorch.optim.nadam import NAdam
from tinytorch.optim.radam import RAdam
from tinytorch.optim.lbfgs import LBFGS
from tinytorch.optim.chuck import Chuck
from tinytorch.optim import lr_scheduler  # noqa: F401

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "Adadelta", "Adagrad", "RMSprop", "Adamax", "NAdam", "RAdam",
           "LBFGS", "Chuck"]
