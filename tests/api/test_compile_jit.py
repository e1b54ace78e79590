"""tinytorch.compile and tinytorch.jit pass modules and functions through unchanged, so programs
written for torch.compile / TorchScript run eagerly; jit.save raises."""
import pytest

import tinytorch as tt


def test_compile_and_jit_pass_through():
    lin = tt.nn.Linear(2, 2)
    assert tt.compile(lin) is lin
    assert tt.compile(lin, mode="max-autotune", fullgraph=True, dynamic=False, backend="inductor") is lin

    @tt.compile
    def f(x):
        return x * 2

    @tt.compile(mode="reduce-overhead")
    def g(x):
        return x + 1

    assert f(tt.ones(1)).item() == 2.0 and g(tt.ones(1)).item() == 2.0
    assert lin.compile(mode="default") is None
    assert tt.compiler.is_compiling() is False
    assert tt.jit.script(lin) is lin and tt.jit.trace(f, (tt.ones(1),)) is f
    assert tt.jit.is_scripting() is False and tt.jit.annotate(int, 3) == 3
    assert tt.jit.ignore(f) is f and tt.jit.unused()(f) is f
    with pytest.raises(NotImplementedError, match="TorchScript"):
        tt.jit.save(lin, "m.pt")
