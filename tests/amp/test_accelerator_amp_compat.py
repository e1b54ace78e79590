"""tinytorch.accelerator, tinytorch.cuda.amp, GradScaler without CUDA, cuda.is_bf16_supported and
backends.mps on a machine without a GPU, as PyTorch's CPU build behaves."""
import warnings

import pytest

import tinytorch
from tinytorch import nn

no_gpu = pytest.mark.skipif(tinytorch.cuda.is_available(), reason="checks the no-GPU behaviour")


@no_gpu
def test_accelerator_without_gpu():
    acc = tinytorch.accelerator
    assert acc.current_accelerator() is None
    assert acc.current_accelerator(check_available=True) is None
    assert acc.is_available() is False
    assert acc.device_count() == 0
    for call in (acc.current_device_index, acc.synchronize, lambda: acc.set_device_index(0),
                 acc.current_stream, acc.memory_allocated):
        with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available"):
            call()
    with acc.device_index(None):        # None switches nothing, so needs no device
        pass
    acc.empty_cache()


def test_accelerator_default_device_pattern():
    # the examples' idiom: device = torch.accelerator.current_accelerator() if available else cpu
    acc = tinytorch.accelerator
    device = acc.current_accelerator().type if acc.is_available() else "cpu"
    assert tinytorch.ones(2, device=device).device.type == device


@no_gpu
def test_grad_scaler_default_cuda_disables_itself_with_warning():
    with pytest.warns(UserWarning, match="CUDA is not available.  Disabling"):
        scaler = tinytorch.amp.GradScaler()
    assert not scaler.is_enabled()
    loss = tinytorch.tensor(2.0, requires_grad=True)
    assert scaler.scale(loss) is loss
    assert scaler.get_scale() == 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tinytorch.amp.GradScaler("cpu").is_enabled()          # cpu: stays on, no warning
        assert not tinytorch.amp.GradScaler(enabled=False).is_enabled()


@no_gpu
def test_grad_scaler_disabled_still_steps():
    lin = nn.Linear(3, 1)
    opt = tinytorch.optim.SGD(lin.parameters(), lr=0.1)
    with pytest.warns(UserWarning):
        scaler = tinytorch.amp.GradScaler(enabled=True)
    before = lin.weight.detach().clone()
    scaler.scale(lin(tinytorch.ones(2, 3)).sum()).backward()
    scaler.step(opt)
    scaler.update()
    assert (before - lin.weight.detach()).abs().sum().item() > 0


@no_gpu
def test_cuda_amp_deprecated_aliases():
    from tinytorch.cuda import amp as cuda_amp
    assert tinytorch.cuda.amp is cuda_amp
    with pytest.warns(FutureWarning, match=r"torch.amp.GradScaler\('cuda'"), \
            pytest.warns(UserWarning, match="CUDA is not available.  Disabling"):
        scaler = cuda_amp.GradScaler(init_scale=8.0)
    assert isinstance(scaler, tinytorch.amp.GradScaler) and not scaler.is_enabled()
    with pytest.warns(FutureWarning, match=r"torch.amp.autocast\('cuda'"), \
            pytest.warns(UserWarning, match="Disabling autocast"):
        ctx = cuda_amp.autocast()
    assert isinstance(ctx, tinytorch.amp.autocast) and not ctx.enabled
    with ctx:
        assert not tinytorch.amp.is_autocast_enabled("cuda")


def test_custom_fwd_casts_inputs_and_bwd_restores_state():
    seen = {}

    class Double(tinytorch.autograd.Function):
        @staticmethod
        @tinytorch.amp.custom_fwd(device_type="cpu", cast_inputs=tinytorch.float32)
        def forward(ctx, x):
            seen["fwd"] = (x.dtype, tinytorch.amp.is_autocast_enabled())
            return x * 2

        @staticmethod
        @tinytorch.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            seen["bwd"] = tinytorch.amp.is_autocast_enabled()
            return g * 2

    x = tinytorch.ones(3, dtype=tinytorch.bfloat16, requires_grad=True)
    with tinytorch.autocast("cpu"):
        y = Double.apply(x)
    y.sum().backward()
    assert seen == {"fwd": (tinytorch.float32, False), "bwd": False}
    assert x.grad.dtype == tinytorch.bfloat16 and x.grad.tolist() == [2.0, 2.0, 2.0]


@no_gpu
def test_is_bf16_supported_without_gpu():
    assert tinytorch.cuda.is_bf16_supported() is False
    assert tinytorch.cuda.is_bf16_supported(including_emulation=False) is False


def test_backends_mps():
    assert tinytorch.backends.mps.is_available() is False
    assert tinytorch.backends.mps.is_built() is False


def test_matches_torch_cpu_build():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available() or tinytorch.cuda.is_available():
        pytest.skip("compares the CPU-only behaviour")
    assert torch.accelerator.is_available() == tinytorch.accelerator.is_available()
    assert torch.accelerator.device_count() == tinytorch.accelerator.device_count()
    assert torch.cuda.is_bf16_supported() == tinytorch.cuda.is_bf16_supported()
    assert torch.backends.mps.is_available() == tinytorch.backends.mps.is_available()
    with pytest.warns(UserWarning):
        assert torch.amp.GradScaler().is_enabled() == tinytorch.amp.GradScaler().is_enabled()
