"""``tinytorch.nn``: modules, layers, losses, initializers (PyTorch's names and defaults)."""
from tinytorch.nn.parameter import Buffer, Parameter  # noqa: F401
from tinytorch.nn.modules import *  # noqa: F401,F403
from tinytorch.nn import functional, init, parallel, utils  # noqa: F401
from tinytorch.nn import attention  # noqa: E402,F401  (nn.attention: SDPBackend, sdpa_kernel)
from tinytorch.nn.parallel import DataParallel  # noqa: E402,F401  (nn.DataParallel)
from tinytorch.nn.functional.linear_cross_entropy import LinearCrossEntropyOptions  # noqa: E402,F401
