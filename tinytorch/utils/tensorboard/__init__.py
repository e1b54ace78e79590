"""``tinytorch.utils.tensorboard``: ``SummaryWriter`` (``torch.utils.tensorboard``), which writes
TensorBoard event files through the ``tensorboard`` package's own event-file writer and protos.
Like PyTorch, it needs that package: without it (or with one older than 1.15) importing this
module raises ImportError."""
try:
    import tensorboard
except ImportError as error:
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above") from error


def _version_tuple(version: str) -> tuple:
    parts = []
    for p in version.split(".")[:2]:
        digits = "".join(c for c in p if c.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


if not hasattr(tensorboard, "__version__") or _version_tuple(tensorboard.__version__) < (1, 15):
    raise ImportError("TensorBoard logging requires TensorBoard version 1.15 or above")

del tensorboard

from tinytorch.utils.tensorboard.writer import FileWriter, SummaryWriter  # noqa: E402

__all__ = ["FileWriter", "SummaryWriter"]
