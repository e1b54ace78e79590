"""tinytorch.utils._pytree as torch.utils._pytree: flatten order, round trips of every built-in
container, None as a leaf, is_leaf, tree_map over several trees, registered types, and errors."""
from __future__ import annotations

import collections

import pytest

import tinytorch as tt
import tinytorch.utils._pytree as pytree

Point = collections.namedtuple("Point", "x y")


def _nest():
    dd = collections.defaultdict(list, {"b": 5})
    return {"a": [1, (2, 3)], "z": None, "p": Point(4, tt.ones(2)), "o": collections.OrderedDict(k=6),
            "d": dd, "q": collections.deque([7, 8], maxlen=3)}


def test_flatten_order_and_round_trip():
    tree = _nest()
    leaves, spec = pytree.tree_flatten(tree)
    assert [x if not isinstance(x, tt.Tensor) else "t" for x in leaves] == [1, 2, 3, None, 4, "t", 6, 5, 7, 8]
    assert spec.num_leaves == 10 and spec.num_children == 6
    back = pytree.tree_unflatten(leaves, spec)
    assert list(back) == list(tree) and back["a"] == [1, (2, 3)] and back["z"] is None
    assert type(back["p"]) is Point and back["p"].x == 4 and back["p"].y is leaves[5]
    assert type(back["o"]) is collections.OrderedDict and back["o"] == {"k": 6}
    assert back["d"].default_factory is list and back["d"] == {"b": 5}
    assert back["q"].maxlen == 3 and list(back["q"]) == [7, 8]
    assert pytree.tree_structure(tree) == spec and spec.unflatten(leaves) == back
    assert pytree.tree_flatten(tt.zeros(1))[1].is_leaf()


def test_tree_map_and_friends():
    tree = {"w": [tt.ones(2), 3], "b": (tt.zeros(1),)}
    doubled = pytree.tree_map_only(tt.Tensor, lambda t: t * 2, tree)
    assert doubled["w"][1] == 3 and tt.equal(doubled["w"][0], tt.full((2,), 2.0))
    sums = pytree.tree_map(lambda a, b: a + b, {"x": 1, "y": [2]}, {"x": 10, "y": [20]})
    assert sums == {"x": 11, "y": [22]}
    assert pytree.tree_leaves([[1], [2, [3]]], is_leaf=lambda x: x == [3]) == [1, 2, [3]]
    assert pytree.tree_any(lambda x: x == 2, [1, (2,)]) and not pytree.tree_all(lambda x: x == 2, [1, (2,)])
    seen = []
    assert pytree.tree_map_(seen.append, [1, {"a": 2}]) == [1, {"a": 2}] and seen == [1, 2]


def test_registered_type():
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b
    pytree.register_pytree_node(Pair, lambda p: ([p.a, p.b], None), lambda c, _: Pair(*c))
    try:
        out = pytree.tree_map(lambda x: x + 1, [Pair(1, 2)])
        assert (out[0].a, out[0].b) == (2, 3)
        with pytest.raises(ValueError, match="already registered"):
            pytree.register_pytree_node(Pair, lambda p: ([], None), lambda c, _: Pair(0, 0))
    finally:
        del pytree.SUPPORTED_NODES[Pair]


def test_errors_name_the_function_and_counts():
    _, spec = pytree.tree_flatten([1, 2])
    with pytest.raises(ValueError, match="expects 2 leaves, but got 3"):
        pytree.tree_unflatten([1, 2, 3], spec)
    with pytest.raises(TypeError, match="TreeSpec"):
        pytree.tree_unflatten([1], [1])
    with pytest.raises(ValueError, match="does not match"):
        pytree.tree_map(lambda a, b: a, [1, 2], [1, (2,)])


def test_reachable_as_an_attribute_after_import():
    assert tt.utils._pytree is pytree
