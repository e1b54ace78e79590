"""tinytorch._dynamo / _inductor / _functorch: the config modules PyTorch programs set before
compiling (PyTorch's names and defaults, settable, unknown names raise AttributeError on read,
patch() restores), the graph-capture entry points as pass-throughs that leave values unchanged,
and tinytorch.backends.cuda.sdp_kernel selecting nn.attention's backends."""
import pickle

import numpy as np
import pytest

import tinytorch as tt
import tinytorch._dynamo
import tinytorch._functorch
import tinytorch._inductor
import tinytorch.backends.cuda
from tinytorch import nn
from tinytorch.nn.attention import SDPBackend, enabled_backends, sdpa_kernel

dynamo_config = tinytorch._dynamo.config
inductor_config = tinytorch._inductor.config
functorch_config = tinytorch._functorch.config


def test_configs_have_torchs_defaults():
    assert dynamo_config.cache_size_limit == 8 and dynamo_config.recompile_limit == 8
    assert dynamo_config.suppress_errors is False
    assert dynamo_config.capture_scalar_outputs is False
    assert dynamo_config.optimize_ddp is True
    assert inductor_config.coordinate_descent_tuning is False
    assert inductor_config.fx_graph_cache is True
    assert inductor_config.triton.cudagraphs is False
    assert inductor_config.triton.unique_kernel_names is True
    assert functorch_config.activation_memory_budget == 1.0


@pytest.mark.parametrize("config, name, value", [
    (dynamo_config, "cache_size_limit", 64),
    (dynamo_config, "suppress_errors", True),
    (dynamo_config, "capture_scalar_outputs", True),
    (dynamo_config, "optimize_ddp", False),
    (inductor_config, "coordinate_descent_tuning", True),
    (inductor_config, "fx_graph_cache", False),
    (functorch_config, "donated_buffer", False),
])
def test_known_settings_are_settable(config, name, value):
    default = getattr(config, name)
    setattr(config, name, value)
    try:
        assert getattr(config, name) == value
        assert config.get_config_copy()[name] == value
    finally:
        delattr(config, name)                 # back to the default (as PyTorch's config)
    assert getattr(config, name) == default


def test_nested_settings():
    inductor_config.triton.unique_kernel_names = False
    try:
        assert inductor_config.triton.unique_kernel_names is False
        assert inductor_config.get_config_copy()["triton.unique_kernel_names"] is False
    finally:
        inductor_config.triton.unique_kernel_names = True
    inductor_config.cpp.threads = 4
    assert inductor_config.cpp.threads == 4
    inductor_config.cpp.threads = -1
    assert "cudagraphs" in dir(inductor_config.triton)
    with pytest.raises(AttributeError):
        inductor_config.triton = object()         # a group is not a value


@pytest.mark.parametrize("config", [dynamo_config, inductor_config, functorch_config])
def test_unknown_names_raise_on_read(config):
    with pytest.raises(AttributeError, match=r"\.no_such_setting does not exist"):
        config.no_such_setting
    assert not hasattr(config, "no_such_setting")
    with pytest.raises(AttributeError, match="does not exist"):
        inductor_config.triton.no_such_setting


def test_patch_restores_as_context_manager_and_decorator():
    with dynamo_config.patch(suppress_errors=True, cache_size_limit=16):
        assert dynamo_config.suppress_errors is True and dynamo_config.cache_size_limit == 16
    assert dynamo_config.suppress_errors is False and dynamo_config.cache_size_limit == 8
    with inductor_config.patch({"triton.cudagraphs": True, "max_autotune": True}):
        assert inductor_config.triton.cudagraphs is True and inductor_config.max_autotune is True
    assert inductor_config.triton.cudagraphs is False and inductor_config.max_autotune is False

    @inductor_config.patch("coordinate_descent_tuning", True)
    def read():
        return inductor_config.coordinate_descent_tuning

    assert read() is True and inductor_config.coordinate_descent_tuning is False
    with pytest.raises(ZeroDivisionError):
        with dynamo_config.patch(verbose=True):
            1 / 0
    assert dynamo_config.verbose is False


def test_save_and_load_config():
    saved = inductor_config.save_config()
    assert pickle.loads(saved)["triton.cudagraphs"] is False
    inductor_config.max_autotune = True
    inductor_config.load_config(saved)
    assert inductor_config.max_autotune is False
    assert "triton.cudagraphs" in tinytorch._inductor.list_options()
    assert tinytorch._inductor.list_mode_options("max-autotune") == {
        "max_autotune": True, "triton.cudagraphs": True, "coordinate_descent_tuning": True}
    with pytest.raises(RuntimeError, match="Unrecognized mode"):
        tinytorch._inductor.list_mode_options("fastest")


def test_dynamo_entry_points_are_pass_throughs():
    def f(x):
        return x * 2 + 1

    assert tinytorch._dynamo.allow_in_graph(f) is f
    assert tinytorch._dynamo.disable(f) is f
    assert tinytorch._dynamo.disable(recursive=False)(f) is f
    assert tinytorch._dynamo.optimize("inductor")(f) is f
    assert tinytorch._dynamo.reset() is None
    assert tinytorch._dynamo.is_compiling() is False

    @tinytorch._dynamo.disable
    def g(x):
        return x - 1

    x = tt.arange(6.0).reshape(2, 3)
    tinytorch._dynamo.mark_dynamic(x, 0)
    tinytorch._dynamo.mark_dynamic(x, [0, 1], min=1, max=8)
    tinytorch._dynamo.mark_static(x, 1)
    tinytorch._dynamo.maybe_mark_dynamic(x, 0)
    assert x.shape == (2, 3)
    model = nn.Linear(3, 2)
    compiled = tt.compile(model)
    np.testing.assert_allclose(compiled(x).detach().numpy(), model(x).detach().numpy())
    np.testing.assert_array_equal(g(f(x)).numpy(), np.arange(6.0).reshape(2, 3) * 2)


def test_sdp_kernel_selects_backends_and_restores():
    everything = enabled_backends()
    q = tt.randn(1, 2, 4, 8)
    reference = nn.functional.scaled_dot_product_attention(q, q, q).numpy()
    with pytest.warns(FutureWarning, match="sdp_kernel"):
        with tinytorch.backends.cuda.sdp_kernel(enable_flash=False, enable_math=True, enable_mem_efficient=False,
                                                enable_cudnn=False):
            assert enabled_backends() == [SDPBackend.MATH]
            assert tinytorch.backends.cuda.math_sdp_enabled() is True
            assert tinytorch.backends.cuda.flash_sdp_enabled() is False
            assert tinytorch.backends.cuda.mem_efficient_sdp_enabled() is False
            out = nn.functional.scaled_dot_product_attention(q, q, q).numpy()
    assert enabled_backends() == everything
    np.testing.assert_allclose(out, reference, rtol=1e-6, atol=1e-7)   # one implementation: same values


def test_sdp_switches():
    everything = enabled_backends()
    cuda = tinytorch.backends.cuda
    with sdpa_kernel(everything):      # restores the selection (and its order) at the end
        cuda.enable_flash_sdp(False)
        assert cuda.flash_sdp_enabled() is False
        assert SDPBackend.FLASH_ATTENTION not in enabled_backends()
        cuda.enable_flash_sdp(True)
        assert cuda.flash_sdp_enabled() is True
        for enable in (cuda.enable_cudnn_sdp, cuda.enable_math_sdp, cuda.enable_mem_efficient_sdp):
            enable(False)
        assert not (cuda.cudnn_sdp_enabled() or cuda.math_sdp_enabled() or cuda.mem_efficient_sdp_enabled())
        assert set(enabled_backends()) == {SDPBackend.FLASH_ATTENTION, SDPBackend.OVERRIDEABLE}
    assert enabled_backends() == everything
