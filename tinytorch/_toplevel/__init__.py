"""PyTorch's top-level names for functions of the packages above the op schema: ``torch.selu``,
``torch.max_pool2d``, ``torch.batch_norm``, ... (``nn_functional``), which the package root resolves
lazily so that ``import tinytorch`` does not load nn."""
