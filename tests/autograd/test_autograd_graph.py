"""The autograd graph: accumulation, retain_graph, hooks, grad_fn, version counters,
backward(inputs=...) and bad input. Grad modes, threads and memory are in test_autograd_runtime.py;
custom Functions, autograd.grad and double backward in test_autograd_api.py."""
import numpy as np
import pytest

import tinytorch as tt
from support.numeric import to_numpy


def leaf(values, dtype=tt.float64):
    return tt.tensor(values, dtype=dtype, requires_grad=True)


# ------------------------------------------------------------------ accumulation / retain_graph

def test_grads_accumulate_over_two_backwards_with_retain_graph():
    x = leaf([1.0, 2.0, 3.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    np.testing.assert_array_equal(to_numpy(x.grad), [2, 4, 6])
    y.backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [4, 8, 12])
    # a fresh graph keeps accumulating into the same .grad until it is reset
    (x * 3.0).sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [7, 11, 15])
    x.grad = None
    (x * 3.0).sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [3, 3, 3])


def test_second_backward_through_freed_graph_raises():
    x = leaf([1.0, 2.0])
    y = (x.exp() * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()
    # also through autograd.grad, and for a graph whose root saved nothing itself
    z = (x.sin() + 1.0) * 2.0
    tt.autograd.grad(z.sum(), x)
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        tt.autograd.grad(z.sum(), x)


def test_accumulated_grad_is_not_aliased_to_upstream_gradient():
    x = leaf([1.0, 2.0])
    g = tt.tensor([1.0, 1.0], dtype=tt.float64)
    (x * 1.0).backward(g)
    g.add_(5.0)                      # must not write into x.grad
    np.testing.assert_array_equal(to_numpy(x.grad), [1, 1])


def test_diamond_graph_sums_both_paths():
    x = leaf([2.0])
    a = x * 3.0
    y = a * a + a.sin()              # a is used three times
    y.backward()
    np.testing.assert_allclose(to_numpy(x.grad), [3 * (2 * 6.0 + np.cos(6.0))])


# ------------------------------------------------------------------ hooks

def test_leaf_and_non_leaf_hooks_see_the_gradient():
    x = leaf([1.0, 2.0])
    seen = {}
    x.register_hook(lambda g: seen.__setitem__("x", to_numpy(g)))
    y = x * 2.0
    y.register_hook(lambda g: seen.__setitem__("y", to_numpy(g)))
    (y * tt.tensor([3.0, 4.0], dtype=tt.float64)).sum().backward()
    np.testing.assert_array_equal(seen["y"], [3, 4])
    np.testing.assert_array_equal(seen["x"], [6, 8])
    np.testing.assert_array_equal(to_numpy(x.grad), [6, 8])


def test_hook_returning_a_tensor_replaces_the_gradient():
    x = leaf([1.0, 2.0])
    y = x * 2.0
    y.register_hook(lambda g: g * 10.0)          # non-leaf: changes what flows on
    x.register_hook(lambda g: g + 1.0)           # leaf: changes what is accumulated
    y.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [21, 21])


def test_hook_returning_wrong_shape_raises():
    x = leaf([1.0, 2.0])
    y = x * 2.0
    y.register_hook(lambda g: g.sum())
    with pytest.raises(RuntimeError, match="has changed the size of value"):
        y.sum().backward()
    x2 = leaf([1.0, 2.0])
    x2.register_hook(lambda g: tt.zeros(3, dtype=tt.float64))
    with pytest.raises(RuntimeError, match=r"expected \[2\] but got \[3\]"):
        (x2 * 1.0).sum().backward()


def test_hook_handle_remove():
    x = leaf([1.0])
    calls = []
    h = x.register_hook(lambda g: calls.append(1) or g * 2.0)
    y = x * 1.0
    hy = y.register_hook(lambda g: calls.append(2))
    y.backward(retain_graph=True)
    assert sorted(calls) == [1, 2] and to_numpy(x.grad).tolist() == [2.0]
    h.remove()
    hy.remove()
    h.remove()                               # removing twice is harmless
    y.backward()
    assert sorted(calls) == [1, 2] and to_numpy(x.grad).tolist() == [3.0]


def test_hook_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        tt.ones(2).register_hook(lambda g: g)


def test_post_accumulate_grad_hook():
    x = leaf([1.0, 2.0])
    seen = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append(to_numpy(t.grad)))
    (x * 4.0).sum().backward()
    np.testing.assert_array_equal(seen[0], [4, 4])
    with pytest.raises(RuntimeError, match="non-leaf"):
        (x * 1.0).register_post_accumulate_grad_hook(lambda t: None)


# ------------------------------------------------------------------ retain_grad / is_leaf / grad_fn

def test_retain_grad():
    x = leaf([1.0, 2.0])
    y = x * 3.0
    z = y * y
    y.retain_grad()
    assert y.retains_grad and not z.retains_grad
    z.sum().backward(retain_graph=True)
    np.testing.assert_array_equal(to_numpy(y.grad), [6, 12])
    assert z.grad is None                     # non-leaf without retain_grad: no .grad
    z.sum().backward()
    np.testing.assert_array_equal(to_numpy(y.grad), [12, 24])   # accumulates like a leaf
    x.retain_grad()                           # no-op on a leaf
    with pytest.raises(RuntimeError, match="requires_grad=False"):
        tt.ones(2).retain_grad()


def test_is_leaf():
    x = leaf([1.0])
    c = tt.ones(1)
    assert x.is_leaf and c.is_leaf and not c.requires_grad
    y = x * 2.0
    assert not y.is_leaf and y.requires_grad
    assert (c * 2.0).is_leaf                  # no input requires grad: no history
    assert y.detach().is_leaf
    with tt.no_grad():
        assert (x * 2.0).is_leaf


def test_grad_fn_names_and_next_functions():
    x = leaf([1.0, 2.0])
    w = leaf([3.0, 4.0])
    z = x * w + x.exp()
    assert z.grad_fn.name() == "AddBackward0"
    (mul, _), (exp, _) = z.grad_fn.next_functions
    assert mul.name() == "MulBackward0" and exp.name() == "ExpBackward0"
    acc_x, acc_w = [n for n, _ in mul.next_functions]
    assert acc_x.name() == "AccumulateGrad" and acc_x.variable is x and acc_w.variable is w
    assert exp.next_functions[0][0] is acc_x          # one AccumulateGrad per leaf, shared
    assert x.grad_fn is None
    # inputs that don't require grad have a None edge
    assert (x * tt.ones(2, dtype=tt.float64)).grad_fn.next_functions[1] == (None, 0)
    names = {
        "SumBackward0": x.sum(), "SumBackward1": x.sum(0), "MeanBackward0": x.mean(),
        "ViewBackward0": x.view(2, 1), "TransposeBackward0": x.view(1, 2).t(), "SelectBackward0": x[0],
        "SliceBackward0": x[1:], "IndexBackward0": x[tt.tensor([0])], "CatBackward0": tt.cat([x, x]),
        "ToCopyBackward0": x.float(), "SoftmaxBackward0": x.softmax(0), "DivBackward0": x / w,
        "PowBackward0": x ** 2, "PowBackward1": x ** w, "CloneBackward0": x.clone(),
        "ExpandBackward0": x.expand(3, 2), "UnsqueezeBackward0": x.unsqueeze(0),
        "MaxBackward0": x.max(0).values, "MaxBackward1": x.max(), "WhereBackward0": tt.where(x > 1, x, w),
        "SortBackward0": x.sort().values, "TopkBackward0": x.topk(1).values, "GatherBackward0": x.gather(0, tt.tensor([1])),
        "SplitBackward0": x.split(1)[1], "SplitWithSizesBackward0": x.split([1, 1])[0],
        "UnbindBackward0": x.unbind()[0],
    }
    for name, t in names.items():
        assert t.grad_fn.name() == name, (name, t.grad_fn.name())
        assert name in repr(t.grad_fn)


def test_split_pieces_share_one_node_and_unused_pieces_get_zeros():
    x = tt.tensor(np.arange(12.0).reshape(3, 4), dtype=tt.float64, requires_grad=True)
    a, b, c = x.split([1, 2, 1], dim=1)
    assert a.grad_fn is b.grad_fn is c.grad_fn
    (a * 2 + c * c).sum().backward()          # b unused: its columns get zeros
    expected = np.zeros((3, 4))
    expected[:, 0] = 2
    expected[:, 3] = 2 * np.arange(12.0).reshape(3, 4)[:, 3]
    np.testing.assert_array_equal(to_numpy(x.grad), expected)
    y = x * 1.0
    rows = y.unbind(0)
    rows[1].mul_(3)                           # in place through one piece: the base's history follows
    (y * y).sum().backward()
    x0 = np.arange(12.0).reshape(3, 4)
    scale = np.array([[1.0], [3.0], [1.0]])
    np.testing.assert_allclose(to_numpy(x.grad), expected + 2 * x0 * scale ** 2)


def test_in_place_op_moves_history():
    x = leaf([1.0, -2.0])
    y = x * 1.0
    y.relu_()
    assert y.grad_fn.name() == "ReluBackward0" and not y.is_leaf
    y.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [1, 0])


def test_in_place_on_leaf_requiring_grad_raises():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        x.add_(1.0)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        x[0] = 3.0
    with tt.no_grad():
        x.add_(1.0)                            # allowed without grad (optimizer updates)
    np.testing.assert_array_equal(to_numpy(x), [2, 3])


# ------------------------------------------------------------------ version counter

def test_modified_saved_output_raises_with_node_and_versions():
    x = leaf([1.0, 2.0])
    y = x.exp()                               # ExpBackward0 saves its output
    y.add_(1.0)
    with pytest.raises(RuntimeError, match=r"saved tensor \d of ExpBackward0, is at version 1; expected version 0"):
        y.sum().backward()


def test_modified_saved_input_raises():
    x = leaf([1.0, 2.0])
    a = tt.tensor([3.0, 4.0], dtype=tt.float64)
    y = x * a                                 # MulBackward0 saves a
    a.mul_(2.0)
    a.add_(1.0)
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation.*MulBackward0, is at version 2; "
                                           r"expected version 0"):
        y.sum().backward()


def test_modification_through_a_view_is_detected():
    x = leaf([1.0, 2.0, 3.0])
    y = x.sigmoid()
    with tt.no_grad():
        y[1:].zero_()                          # writes y's storage through a view
    with pytest.raises(RuntimeError, match="SigmoidBackward0"):
        y.sum().backward()


def test_in_place_after_use_by_op_that_saves_nothing_is_fine():
    x = leaf([1.0, 2.0])
    y = x * 2.0
    z = y + 1.0                               # AddBackward0 saves nothing
    y.mul_(3.0)
    z.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [2, 2])


# ------------------------------------------------------------------ detach / requires_grad

def test_detach_shares_storage_and_has_no_grad():
    x = leaf([1.0, 2.0])
    y = x * 2.0
    d = y.detach()
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    assert d.data_ptr() == y.data_ptr()
    d[0] = 7.0                                # writes through to y
    np.testing.assert_array_equal(to_numpy(y), [7, 4])
    assert y._version == d._version           # shared version counter


def test_detach_in_place():
    x = leaf([1.0, 2.0])
    y = x * 2.0
    out = y.detach_()
    assert out is y and y.is_leaf and not y.requires_grad and y.grad_fn is None
    z = (y * x).sum()
    z.backward()
    np.testing.assert_array_equal(to_numpy(x.grad), [2, 4])   # only the direct path


def test_requires_grad_flags():
    x = leaf([1.0])
    y = x * 2.0
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        y.requires_grad_(False)
    y.requires_grad_(True)                    # already requires grad: allowed
    with pytest.raises(RuntimeError, match="only Tensors of floating point and complex dtype can require gradients"):
        tt.tensor([1, 2]).requires_grad_()
    c = tt.ones(2)
    assert c.requires_grad_() is c and c.requires_grad
    c.requires_grad = False
    assert not c.requires_grad


# ------------------------------------------------------------------ backward(inputs=...)

def test_backward_inputs_only_accumulates_into_those():
    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    h = x * y
    h.retain_grad()
    out = (h * 2.0).sum()
    out.backward(inputs=[x], retain_graph=True)
    np.testing.assert_array_equal(to_numpy(x.grad), [6, 8])
    assert y.grad is None
    out.backward(inputs=[y])
    np.testing.assert_array_equal(to_numpy(y.grad), [2, 4])
    np.testing.assert_array_equal(to_numpy(x.grad), [6, 8])
    # a non-leaf in inputs gets its .grad too (as PyTorch)
    x.grad = None
    z = x * 3.0
    (z * z).sum().backward(inputs=[z])
    np.testing.assert_array_equal(to_numpy(z.grad), [6, 12])
    assert x.grad is None


# ------------------------------------------------------------------ bad input

def test_backward_non_scalar_without_gradient():
    y = leaf([1.0, 2.0]) * 2.0
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        y.backward()


def test_backward_gradient_of_wrong_shape():
    y = leaf([1.0, 2.0]) * 2.0
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of \(3,\)"):
        y.backward(tt.ones(3, dtype=tt.float64))


def test_backward_through_tensor_not_requiring_grad():
    with pytest.raises(RuntimeError, match="does not require grad and does not have a grad_fn"):
        (tt.ones(2) * 2.0).sum().backward()
    x = leaf([1.0])
    with tt.no_grad():
        y = x * 2.0
    with pytest.raises(RuntimeError, match="does not require grad"):
        y.backward()


def test_numpy_on_tensor_requiring_grad():
    x = leaf([1.0])
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad"):
        x.numpy()
    with pytest.raises(RuntimeError, match="Can't call numpy"):
        (x * 2).numpy()
    np.testing.assert_array_equal(x.detach().numpy(), [1.0])
    with pytest.raises(RuntimeError, match="Can't call numpy"):
        np.asarray(x * 2)                                       # __array__ as PyTorch's: no silent detach


def test_assigning_bad_grad():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="different size"):
        x.grad = tt.zeros(3, dtype=tt.float64)
    with pytest.raises(RuntimeError, match="different type"):
        x.grad = tt.zeros(2, dtype=tt.float32)
    with pytest.raises(TypeError):
        x.grad = [1.0, 2.0]
