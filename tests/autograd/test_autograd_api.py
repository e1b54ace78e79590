"""The autograd API beyond backward(): custom ``autograd.Function``, ``autograd.grad``,
``create_graph``. Double backward through each op: tests/autograd/test_double_backward.py."""
import numpy as np
import pytest

import tinytorch as tt
from tinytorch.autograd import Function, gradcheck
from support.numeric import to_numpy


def leaf(values, dtype=tt.float64):
    return tt.tensor(values, dtype=dtype, requires_grad=True)


# ------------------------------------------------------------------ custom Function

class MulAdd(Function):
    """(x * y + 1, x - y) with x, y tensors and a scalar ``k`` scaling the first output."""

    @staticmethod
    def forward(ctx, x, y, k):
        ctx.save_for_backward(x, y)
        ctx.k = k
        ctx.seen_needs = ctx.needs_input_grad
        assert not tt.is_grad_enabled()       # forward runs without recording
        return (x * y + 1.0) * k, x - y

    @staticmethod
    def backward(ctx, g0, g1):
        x, y = ctx.saved_tensors
        return g0 * y * ctx.k + g1, g0 * x * ctx.k - g1, None


def test_custom_function_multiple_outputs():
    x = leaf([1.0, 2.0])
    y = leaf([3.0, -1.0])
    a, b = MulAdd.apply(x, y, 2.0)
    assert a.grad_fn.name() == "MulAddBackward" and b.grad_fn is a.grad_fn
    np.testing.assert_array_equal(to_numpy(a), [8, -2])
    (a.sum() + (b * 3.0).sum()).backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [2 * 3 + 3, 2 * -1 + 3])
    np.testing.assert_array_equal(to_numpy(y.grad), [2 * 1 - 3, 2 * 2 - 3])
    # one output unused: its gradient is materialized as zeros
    x.grad = y.grad = None
    a, b = MulAdd.apply(x, y, 1.0)
    b.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [1, 1])
    assert gradcheck(lambda p, q: MulAdd.apply(p, q, 0.5), (leaf([0.3, -0.7]), leaf([1.1, 0.2])))


def test_custom_function_needs_input_grad():
    x = leaf([1.0])
    c = tt.tensor([2.0], dtype=tt.float64)
    captured = {}

    class Probe(Function):
        @staticmethod
        def forward(ctx, a, b):
            captured["fwd"] = ctx.needs_input_grad
            return a * b

        @staticmethod
        def backward(ctx, g):
            captured["bwd"] = ctx.needs_input_grad
            return g * 2.0, g * 100.0     # second is dropped: c doesn't need grad

    out = Probe.apply(x, c)
    out.backward()
    assert captured["fwd"] == (True, False) and captured["bwd"] == (True, False)
    assert c.grad is None and to_numpy(x.grad).tolist() == [2.0]
    # no input requires grad: no node, output doesn't require grad
    assert not Probe.apply(c, c).requires_grad


def test_custom_function_mark_non_differentiable():
    class SortWithIndex(Function):
        @staticmethod
        def forward(ctx, x):
            v, i = x.sort()
            ctx.mark_non_differentiable(i)
            ctx.save_for_backward(i)
            return v, i

        @staticmethod
        def backward(ctx, gv, gi):
            i, = ctx.saved_tensors
            return tt.zeros_like(gv).scatter(0, i, gv)

    x = leaf([3.0, 1.0, 2.0])
    v, i = SortWithIndex.apply(x)
    assert v.requires_grad and not i.requires_grad
    (v * tt.tensor([1.0, 2.0, 3.0], dtype=tt.float64)).sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [3, 1, 2])


def test_custom_function_wrong_gradient_count_and_gradcheck_catches_bad_backward():
    class TooMany(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2.0

        @staticmethod
        def backward(ctx, g):
            return g, g, g

    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        TooMany.apply(leaf([1.0])).backward()

    class Wrong(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * x                         # should be 2 * g * x

    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        gradcheck(Wrong.apply, (leaf([0.5, 1.5]),))
    assert gradcheck(Wrong.apply, (leaf([0.5, 1.5]),), raise_exception=False) is False


def test_custom_function_returning_its_input():
    class Ident(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 3.0

    x = leaf([1.0, 2.0])
    y = Ident.apply(x)
    assert y is not x and x.is_leaf and not y.is_leaf
    y.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [3, 3])


# ------------------------------------------------------------------ autograd.grad

def test_autograd_grad_allow_unused():
    x, y, z = leaf([1.0, 2.0]), leaf([3.0]), leaf([5.0])
    out = (x * y).sum()
    gx, gz = tt.autograd.grad(out, [x, z], retain_graph=True, allow_unused=True)
    np.testing.assert_array_equal(to_numpy(gx), [3, 3])
    assert gz is None
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        tt.autograd.grad(out, [x, z], retain_graph=True)
    gz, = tt.autograd.grad(out, [z], materialize_grads=True)
    np.testing.assert_array_equal(to_numpy(gz), [0])
    assert x.grad is None and y.grad is None   # grad() doesn't accumulate


def test_autograd_grad_with_grad_outputs_and_multiple_outputs():
    x = leaf([1.0, 2.0, 3.0])
    a, b = x * 2.0, x.sum()
    go = tt.tensor([1.0, 0.0, -1.0], dtype=tt.float64)
    g, = tt.autograd.grad([a, b], [x], grad_outputs=[go, tt.tensor(10.0, dtype=tt.float64)])
    np.testing.assert_array_equal(to_numpy(g), [12, 10, 8])


def test_autograd_grad_of_non_leaf_intermediate():
    x = leaf([1.0, 2.0])
    h = x * 3.0
    out = (h * h).sum()
    gh, gx = tt.autograd.grad(out, [h, x])
    np.testing.assert_array_equal(to_numpy(gh), [6, 12])
    np.testing.assert_array_equal(to_numpy(gx), [18, 36])


def test_autograd_grad_input_not_requiring_grad_raises():
    x = leaf([1.0])
    with pytest.raises(RuntimeError, match="does not require grad"):
        tt.autograd.grad((x * 2).sum(), [tt.ones(1)])


def test_backward_create_graph_populates_differentiable_grad():
    x = leaf([2.0])
    (x ** 3).backward(create_graph=True)
    assert x.grad.requires_grad
    np.testing.assert_allclose(to_numpy(x.grad), [12.0])
    g = x.grad
    x.grad = None
    g.backward()
    np.testing.assert_allclose(to_numpy(x.grad), [12.0])   # d(3x^2)/dx = 6x


# ------------------------------------------------------------------ Node hooks

def test_node_hook_sees_and_replaces_grad_inputs():
    x, w = leaf([1.0, 2.0]), leaf([3.0, -1.0])
    y = x * w
    seen = []

    def hook(grad_inputs, grad_outputs):
        seen.append(([to_numpy(g) for g in grad_inputs], [to_numpy(g) for g in grad_outputs]))
        return grad_inputs[0] * 10.0, grad_inputs[1]
    handle = y.grad_fn.register_hook(hook)
    (y * tt.tensor([2.0, 5.0], dtype=tt.float64)).sum().backward()
    (gi_x, gi_w), (go,) = seen[0]
    np.testing.assert_array_equal(go, [2, 5])
    np.testing.assert_array_equal(gi_x, [6, -5])          # before the hook: g * w
    np.testing.assert_array_equal(gi_w, [2, 10])
    np.testing.assert_array_equal(to_numpy(x.grad), [60, -50])
    np.testing.assert_array_equal(to_numpy(w.grad), [2, 10])
    handle.remove()
    x.grad = None
    (x * w).sum().backward()
    assert len(seen) == 1
    np.testing.assert_array_equal(to_numpy(x.grad), [3, -1])


def test_node_prehook_replaces_grad_outputs_and_runs_first():
    x = leaf([1.0, 4.0])
    values, _ = x.view(1, 2).max(1)
    order = []
    values.grad_fn.register_prehook(lambda go: order.append(("pre", len(go))) or (go[0] * 3.0,))
    values.grad_fn.register_hook(lambda gi, go: order.append(("post", float(go[0].sum()))))
    values.sum().backward()
    assert order == [("pre", 1), ("post", 3.0)]      # the hook sees the pre-hook's replacement
    np.testing.assert_array_equal(to_numpy(x.grad), [0, 3])


def test_node_hooks_with_autograd_grad_and_create_graph():
    x = leaf([2.0])
    y = x ** 3
    y.grad_fn.register_hook(lambda gi, go: (gi[0] * 2.0,))
    g, = tt.autograd.grad(y.sum(), x, create_graph=True)
    np.testing.assert_allclose(to_numpy(g), [24.0])    # 2 * 3x^2
    g2, = tt.autograd.grad(g.sum(), x)                 # the hook's product is differentiable
    np.testing.assert_allclose(to_numpy(g2), [24.0])   # d(6x^2)/dx = 12x


def test_node_hook_returning_the_wrong_number_of_gradients_raises():
    x = leaf([1.0])
    y = x * 2.0
    y.grad_fn.register_hook(lambda gi, go: (gi[0], gi[0], gi[0]))
    with pytest.raises(RuntimeError, match=r"MulBackward0 hook returned tuple of length 3; expected a tuple of 2"):
        y.sum().backward()
