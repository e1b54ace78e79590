"""Autocast state and the casting wrapper that the op schema puts around the ops with an
autocast policy ("lower" runs in float16/bfloat16, "fp32" in float32). Which ops cast depends on the
autocast device type, as PyTorch's per-device lists: on CUDA the schema's column (codegen/ops.py), on
CPU PyTorch's CPU lists (``CPU_POLICY``), where e.g. exp, pow, softmax and layer_norm are not cast and
stay in bfloat16. The wrappers are in place from import on; outside an autocast region each costs one
flag check. The user-facing context manager is ``tinytorch.amp.autocast``."""
from __future__ import annotations

import functools
import threading
from typing import Any, Callable, Dict, Optional

from tinytorch._core.dtype import bfloat16, float16, float32, float64
from tinytorch._tensor.tensor import Tensor

LOWER, FP32 = "lower", "fp32"
DEFAULT_DTYPE = {"cuda": float16, "cpu": bfloat16}

# PyTorch's CPU autocast lists (AutocastCPU in aten/src/ATen/autocast_mode.cpp), by tinytorch name: the
# function's name, "linalg.<name>" / "fft.<name>" in those namespaces. An op not listed is not cast on CPU.
_CPU_LOWER = (
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "bmm", "mm",
    "matmul", "baddbmm", "addmm", "addbmm", "linear", "prelu", "scaled_dot_product_attention", "linalg.vecdot",
    # not listed, but PyTorch's decompose into bmm / mm, which are: their results come out in lower precision
    "einsum", "tensordot",
)
_CPU_FP32 = (
    "avg_pool3d", "max_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d", "fractional_max_pool2d",
    "fractional_max_pool3d", "max_unpool2d", "max_unpool3d", "grid_sample", "polar", "prod", "quantile",
    "nanquantile", "stft", "cdist", "trace", "view_as_complex", "cholesky", "cholesky_inverse", "cholesky_solve",
    "inverse", "lu_solve", "orgqr", "ormqr", "pinverse", "geqrf", "qr", "svd", "triangular_solve",
    # losses
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "mse_loss", "l1_loss", "smooth_l1_loss",
    "huber_loss", "cross_entropy", "nll_loss", "kl_div", "cosine_embedding_loss", "hinge_embedding_loss",
    "margin_ranking_loss", "soft_margin_loss", "triplet_margin_loss", "multi_margin_loss", "multilabel_margin_loss",
    "poisson_nll_loss", "ctc_loss",
    # tinytorch.fft and tinytorch.linalg
    *(f"fft.{n}" for n in ("fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
                           "rfftn", "irfftn", "hfft", "ihfft")),
    *(f"linalg.{n}" for n in ("cond", "matrix_rank", "solve", "cholesky", "cholesky_ex", "svdvals", "eigvals",
                              "eigvalsh", "inv", "inv_ex", "householder_product", "tensorinv", "tensorsolve",
                              "qr", "svd", "eig", "eigh", "lstsq")),
)
CPU_POLICY: Dict[str, str] = {**dict.fromkeys(_CPU_LOWER, LOWER), **dict.fromkeys(_CPU_FP32, FP32)}

# Ops whose kernels read float16/bfloat16 inputs in float32 and can return a float32 result: under the
# "fp32" policy, name -> reader(device_type, cast, *args, **kwargs), called instead of fn on the cast
# arguments: device_type is the region's, cast(value) the policy's cast (for the arguments the reader
# does not read in float32 itself). The numbers are the cast's; the float32 copy of the input (for
# GPT-2's logits, 1.6 GB) is never made.
FP32_READERS: Dict[str, Callable] = {}


def device_policies(name: str, cuda_policy: Optional[str]) -> Dict[str, Optional[str]]:
    """The policy of op ``name`` per autocast device type (None: not cast there): on CUDA the schema's
    (``cuda_policy``), on CPU ``CPU_POLICY``'s."""
    return {"cuda": cuda_policy, "cpu": CPU_POLICY.get(name)}


def policy_of(fn: Callable, device_type: str) -> Optional[str]:
    """The autocast policy ``fn`` applies inside an autocast region on ``device_type`` (None: runs in its
    inputs' dtypes)."""
    return getattr(fn, "_autocast_policy", {}).get(device_type)


class _State(threading.local):
    """Per thread, as PyTorch's: (device type, dtype) of the active autocast region, or None."""
    active: Optional[tuple] = None


state = _State()


def _cast(value: Any, device_type: str, dtype, policy: str) -> Any:
    if isinstance(value, Tensor):
        dt = value.dtype
        if value.device.type != device_type or not dt.is_floating_point or dt == float64:
            return value
        target = dtype if policy == LOWER else float32
        return value if dt == target else value.to(target)
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype, policy) for v in value)
    return value


def wrap(fn: Callable, policy: Optional[str], name: Optional[str] = None) -> Callable:
    """fn with its float arguments on the autocast device cast inside autocast, per the policy of op
    ``name`` (default: fn's name) on the region's device type: ``policy`` on CUDA (the schema's column),
    ``CPU_POLICY`` on CPU."""
    assert policy in (LOWER, FP32, None), policy
    name = name or fn.__name__
    policies = device_policies(name, policy)

    @functools.wraps(fn)
    def autocast_fn(*args, **kwargs):
        s = state.active
        if s is None:
            return fn(*args, **kwargs)
        device_type, dtype = s
        p = policies.get(device_type)
        if p is None:      # not on this device's lists: runs as its inputs are, the ops inside it may cast
            return fn(*args, **kwargs)
        state.active = None                        # ops inside this one are not cast again
        try:
            reader = FP32_READERS.get(name) if p == FP32 else None
            if reader is not None:
                return reader(device_type, lambda v: _cast(v, device_type, dtype, p), *args, **kwargs)
            args = tuple(_cast(a, device_type, dtype, p) for a in args)
            kwargs = {k: _cast(v, device_type, dtype, p) for k, v in kwargs.items()}
            return fn(*args, **kwargs)
        finally:
            state.active = s
    autocast_fn._autocast_original = fn
    autocast_fn._autocast_policy = policies
    return autocast_fn


def wrap_namespace(namespace: dict, policy: dict) -> None:
    """Wraps each function of namespace that has an autocast policy on some device: named in policy (the
    schema's, name -> "lower" | "fp32") or in CPU_POLICY."""
    for name in {**policy, **CPU_POLICY}:
        fn = namespace.get(name)
        if callable(fn) and not hasattr(fn, "_autocast_original"):
            namespace[name] = wrap(fn, policy.get(name), name)
