"""tinytorch: a lightweight, PyTorch-style deep-learning framework.

C++/CUDA kernels (``tinytorch._C``), a Cython autograd graph, and a Python nn/optim/data API
that reads like PyTorch."""
from __future__ import annotations

try:
    from tinytorch import _C
except ImportError:
    import importlib.util as _util
    if _util.find_spec("tinytorch._C") is not None:
        raise  # the extension is there but failed to load: its own error says why
    raise ImportError(
        f"you are importing tinytorch from its source tree ({__path__[0]}) without its compiled extensions; "
        "install it with `pip install .` and run from another directory (launch distributed jobs with "
        "`tinytorch-run`), or build in place with `cmake -S . -B build/dev -G Ninja && ninja -C build/dev && "
        "scripts/dev_link.sh`") from None
from tinytorch._core.dtype import (
    bfloat16, can_cast, complex64, complex128, device, dtype, float8_e4m3fn, float8_e5m2, float16, float32, float64, get_default_dtype, int8,
    int16, int32, int64, layout, promote_types, set_default_dtype, strided, uint8, uint16, uint32, uint64,
)
from tinytorch._core.dtype import bool_ as bool  # noqa: A001  (torch.bool)
from tinytorch._core.dtype import (  # noqa: A001  (torch.float, torch.int, ...)
    float16 as half, float32 as float, float64 as double, int16 as short, int32 as int, int64 as long,
    complex64 as cfloat, complex128 as cdouble,
)
from tinytorch._core.size import Size
from tinytorch._core.cuda_loader import cuda_backend as _cuda_backend  # noqa: F401  (the old name)
from tinytorch._core.threads import get_num_threads, set_num_threads
from tinytorch._core.graph import is_grad_enabled
from tinytorch._tensor.tensor import Tensor, is_tensor, numel
from tinytorch._tensor.creation import (  # noqa: A004  (torch.range)
    arange, as_tensor, asarray, empty, empty_like, empty_strided, eye, from_numpy, full, full_like, linspace,
    logspace, ones, ones_like, range, scalar_tensor, tensor, zeros, zeros_like,
)
from tinytorch.random import (
    Generator, bernoulli, default_generator, get_rng_state, initial_seed, manual_seed, normal, rand, rand_like,
    randint, randint_like, randn, randn_like, randperm, seed, set_rng_state,
)
from tinytorch._tensor.formatting import get_printoptions, set_printoptions
from tinytorch._tensor.interop import from_dlpack  # DLPack, zero-copy
from tinytorch._tensor.legacy import CPU_TYPES as _LEGACY_TYPES, finfo, iinfo, tensor_type as _tensor_type
from tinytorch._tensor.queries import broadcast_shapes, result_type, typename
from tinytorch._tensor.settings import *  # noqa: F401,F403  (set_default_device, set_autocast_enabled, ...)
from tinytorch._tensor import torch_function as _tf

# the op schema's forms (codegen/ops.py): every Tensor op method, and every op function as tinytorch.<name>
# (the composites' load on first use: _functional.DEFERRED, resolved by __getattr__ below)
from tinytorch._generated import functional as _functional, methods as _methods
from tinytorch._ops import _common as _ops_common
_methods.install(Tensor)
from tinytorch._generated.functional import *  # noqa: F401,F403,E402  (tinytorch.exp, tinytorch.cat, ...)


def _load_complex_ops() -> None:
    """Complex arithmetic, composed over real views, registers itself with the op families."""
    from tinytorch._composites import complex  # noqa: F401


_ops_common.set_complex_loader(_load_complex_ops)

from tinytorch import autograd  # noqa: E402
from tinytorch.autograd.grad_mode import (  # noqa: E402
    enable_grad, inference_mode, is_inference_mode_enabled, no_grad, set_grad_enabled,
)
from tinytorch.backends.precision import *  # noqa: F401,F403,E402  (use_deterministic_algorithms, ...)
from tinytorch.compiler import compile  # noqa: E402,A004  (a pass-through: tinytorch runs eagerly)

globals().update(_LEGACY_TYPES)   # FloatTensor, LongTensor, ...: legacy constructors/isinstance checks
Tensor.type = _tensor_type        # Tensor.type('torch.FloatTensor') and friends


_dispatching = False   # whether a Tensor subclass with __torch_function__ exists


def _dispatch_op_functions() -> None:
    """Once a Tensor subclass with __torch_function__ exists, tinytorch.<op>(subclass, ...) dispatches too
    (until then the op functions stay the plain ones: no cost without subclasses)."""
    global _dispatching
    _dispatching = True
    for name in _functional.__all__ + sorted(_functional.DEFERRED):
        if name in globals() and globals()[name] is getattr(_functional, name) and callable(globals()[name]):
            globals()[name] = _tf.dispatching_function(globals()[name])


_tf.on_first_subclass(_dispatch_op_functions)


__version__ = "0.1.0"


_LAZY_SUBMODULES = {"nn", "optim", "utils", "datasets", "transforms", "cuda", "distributed", "amp", "backends"}
_LAZY_SUBMODULES |= {"accelerator", "onnx", "jit", "compiler"}   # PyTorch's module paths
_LAZY_SUBMODULES |= {"distributions"}
_LAZY_SUBMODULES |= {"models", "linalg", "testing", "profiler"}
_LAZY_SUBMODULES |= {"_dynamo", "_inductor", "_functorch"}   # torch.compile's config modules (no effect here)
# names from packages that load on first use: (module, attribute)
_LAZY_NAMES = {"autocast": ("tinytorch.amp", "autocast"),
               "load": ("tinytorch.serialization", "load"), "save": ("tinytorch.serialization", "save")}


def __getattr__(name: str):
    # Heavier subpackages, the composite ops and checkpoint I/O load on first use, keeping
    # `import tinytorch` fast.
    import importlib
    if name in _functional.DEFERRED:
        fn = getattr(_functional, name)
        globals()[name] = _tf.dispatching_function(fn) if _dispatching and callable(fn) else fn
        return globals()[name]
    if name.startswith("_foreach_"):   # torch._foreach_add_, ...: the multi-tensor forms
        foreach = importlib.import_module("tinytorch._composites.foreach")
        if name in foreach.__all__:
            globals()[name] = getattr(foreach, name)
            return globals()[name]
    if name in _LAZY_NAMES:
        module, attr = _LAZY_NAMES[name]
        globals()[name] = getattr(importlib.import_module(module), attr)
        return globals()[name]
    nn_functional = importlib.import_module("tinytorch._toplevel.nn_functional")
    if name in nn_functional.NAMES:   # torch.selu, torch.max_pool2d, ...: nn.functional under torch's top-level names
        globals()[name] = nn_functional.resolve(name)
        return globals()[name]
    if name in _LAZY_SUBMODULES:
        module = importlib.import_module(f"tinytorch.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module 'tinytorch' has no attribute '{name}'")


def __dir__():
    from tinytorch._composites import foreach
    from tinytorch._toplevel import nn_functional
    return sorted(set(globals()) | set(foreach.__all__) | _functional.DEFERRED | set(_LAZY_NAMES) | _LAZY_SUBMODULES | set(nn_functional.NAMES))
