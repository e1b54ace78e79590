"""AccumulateGrad takes a leaf's first gradient as it is when nothing else holds it (as PyTorch
does: no copy of every parameter's gradient per step), and copies it otherwise: a leaf's .grad is
never an alias of another tensor that a later in-place change could reach."""
import weakref

import numpy as np
import pytest

import tinytorch as tt


def _leaf(*shape):
    return tt.tensor(np.random.default_rng(0).standard_normal(shape).astype(np.float32), requires_grad=True)


def _grad_seen_by_a_hook(x, loss_of):
    """The gradient object that reaches the leaf (a weak reference: the hook must not keep it)."""
    seen = []
    x.register_hook(lambda g: seen.append(weakref.ref(g)))
    loss_of(x).backward()
    return seen[0]()


@pytest.mark.parametrize("loss_of", [lambda x: (x * 3.0).sum(), lambda x: (x.exp() * x).sum(),
                                     lambda x: (x @ x.T).sum()], ids=["mul", "exp_mul", "matmul"])
def test_fresh_gradient_is_taken_without_a_copy(loss_of):
    x = _leaf(3, 3)
    g = _grad_seen_by_a_hook(x, loss_of)
    assert g is not None and x.grad is g


def test_gradient_shared_by_two_leaves_is_copied():
    a, b = _leaf(2, 3), _leaf(2, 3)
    (a + b).sum().backward()  # add hands one gradient object to both inputs
    a.grad.add_(1.0)
    np.testing.assert_array_equal(b.grad.numpy(), np.ones((2, 3), np.float32))
    np.testing.assert_array_equal(a.grad.numpy(), np.full((2, 3), 2.0, np.float32))


@pytest.mark.parametrize("forward", [lambda x: x.view(6), lambda x: x.clone(), lambda x: x + 0.0,
                                     lambda x: x.reshape(6)], ids=["view", "clone", "add0", "reshape"])
def test_callers_gradient_is_not_aliased(forward):
    x = _leaf(2, 3)
    g = tt.ones(6).reshape(6) if forward(x).dim() == 1 else tt.ones(2, 3)
    forward(x).backward(g)
    g.add_(5.0)  # the caller's gradient changes afterwards; x.grad must not
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((2, 3), np.float32))


def test_gradient_kept_by_a_hook_is_copied():
    x = _leaf(4)
    kept = []
    x.register_hook(lambda g: kept.append(g))
    (x * 2.0).sum().backward()
    x.grad.add_(1.0)
    np.testing.assert_array_equal(kept[0].numpy(), np.full(4, 2.0, np.float32))


def test_view_of_a_larger_gradient_is_copied():
    x = _leaf(3)
    tt.cat([x, tt.zeros(5)]).sum().backward()  # x's gradient: a slice of the (8,) gradient
    assert x.grad._impl.storage_nbytes == 3 * 4  # a copy that owns just its memory
    np.testing.assert_array_equal(x.grad.numpy(), np.ones(3, np.float32))


def test_accumulation_into_a_taken_gradient_is_correct():
    x = _leaf(3)
    for _ in range(3):
        (x * 2.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full(3, 6.0, np.float32))


def test_create_graph_keeps_the_gradient_in_the_graph():
    x = _leaf(3)
    (x * x).sum().backward(create_graph=True)
    assert x.grad.requires_grad
    x.grad.sum().backward()
    np.testing.assert_allclose(x.grad.detach().numpy(), 2 * x.detach().numpy() + 2.0, rtol=1e-6)
