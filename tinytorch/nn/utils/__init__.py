"""``nn.utils``: gradient clipping, parameter/vector conversion, LoRA adapters (``nn.utils.lora``)."""
from tinytorch.nn.utils.clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_  # noqa: F401
from tinytorch.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
from tinytorch.nn.utils import lora  # noqa: F401
