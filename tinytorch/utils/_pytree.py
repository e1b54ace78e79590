"""Nested containers of values ("pytrees"), as ``torch.utils._pytree``: ``tree_flatten`` turns a
nest of tuples, lists, dicts, OrderedDicts, defaultdicts, deques and namedtuples into its leaves and
a :class:`TreeSpec`, ``tree_unflatten`` builds the nest back, ``tree_map`` applies a function to
every leaf. Every other value is a leaf (``None`` included, as PyTorch's); more container types are
added with :func:`register_pytree_node`. Dicts keep their insertion order."""
from __future__ import annotations

import collections
import dataclasses
from typing import Any, Callable, Iterable, List, NamedTuple, Optional, Tuple

PyTree = Any
Context = Any
FlattenFunc = Callable[[PyTree], Tuple[List[Any], Context]]
UnflattenFunc = Callable[[Iterable[Any], Context], PyTree]


class NodeDef(NamedTuple):
    """How one container type comes apart: its children and a context, and back."""
    type: type
    flatten_fn: FlattenFunc
    unflatten_fn: UnflattenFunc


SUPPORTED_NODES: dict = {}


def register_pytree_node(cls: type, flatten_fn: FlattenFunc, unflatten_fn: UnflattenFunc, *,
                         serialized_type_name: Optional[str] = None, to_dumpable_context=None,
                         from_dumpable_context=None, flatten_with_keys_fn=None) -> None:
    """Registers a container type: ``flatten_fn(x) -> (children, context)`` and
    ``unflatten_fn(children, context) -> x``. The serialization arguments are accepted and unused
    (tinytorch has no TreeSpec serialization)."""
    if cls in SUPPORTED_NODES:
        raise ValueError(f"register_pytree_node: {cls} is already registered as a pytree node")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn)


def _is_namedtuple(x) -> bool:
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def _node_type(x) -> type:
    return collections.namedtuple if _is_namedtuple(x) else type(x)


register_pytree_node(tuple, lambda t: (list(t), None), lambda c, _: tuple(c))
register_pytree_node(list, lambda t: (list(t), None), lambda c, _: list(c))
register_pytree_node(dict, lambda d: (list(d.values()), list(d.keys())), lambda c, keys: dict(zip(keys, c)))
register_pytree_node(collections.OrderedDict, lambda d: (list(d.values()), list(d.keys())),
                     lambda c, keys: collections.OrderedDict(zip(keys, c)))
register_pytree_node(collections.defaultdict, lambda d: (list(d.values()), (d.default_factory, list(d.keys()))),
                     lambda c, ctx: collections.defaultdict(ctx[0], zip(ctx[1], c)))
register_pytree_node(collections.deque, lambda d: (list(d), d.maxlen), lambda c, n: collections.deque(c, maxlen=n))
register_pytree_node(collections.namedtuple, lambda t: (list(t), type(t)), lambda c, cls: cls(*c))


@dataclasses.dataclass(eq=True)
class TreeSpec:
    """The structure of a pytree: its container type, the context that rebuilds it, and its
    children's specs (a leaf's spec is :class:`LeafSpec`)."""
    type: Any
    context: Context
    children_specs: List["TreeSpec"]

    @property
    def num_children(self) -> int:
        return len(self.children_specs)

    @property
    def num_leaves(self) -> int:
        return sum(c.num_leaves for c in self.children_specs)

    @property
    def num_nodes(self) -> int:
        return 1 + sum(c.num_nodes for c in self.children_specs)

    def is_leaf(self) -> bool:
        return False

    def unflatten(self, leaves: Iterable[Any]) -> PyTree:
        return tree_unflatten(leaves, self)

    def _build(self, it) -> PyTree:
        children = [c._build(it) for c in self.children_specs]
        return SUPPORTED_NODES[self.type].unflatten_fn(children, self.context)


class LeafSpec(TreeSpec):
    """The spec of a leaf."""

    def __init__(self) -> None:
        super().__init__(None, None, [])

    @property
    def num_leaves(self) -> int:
        return 1

    def is_leaf(self) -> bool:
        return True

    def _build(self, it) -> PyTree:
        return next(it)

    def __repr__(self) -> str:
        return "*"


def _is_leaf(tree: PyTree, is_leaf: Optional[Callable[[PyTree], bool]]) -> bool:
    return (is_leaf is not None and is_leaf(tree)) or _node_type(tree) not in SUPPORTED_NODES


def _flatten_into(tree: PyTree, leaves: list, is_leaf) -> TreeSpec:
    if _is_leaf(tree, is_leaf):
        leaves.append(tree)
        return LeafSpec()
    kind = _node_type(tree)
    children, context = SUPPORTED_NODES[kind].flatten_fn(tree)
    return TreeSpec(kind, context, [_flatten_into(c, leaves, is_leaf) for c in children])


def tree_flatten(tree: PyTree, is_leaf: Optional[Callable[[PyTree], bool]] = None) -> Tuple[List[Any], TreeSpec]:
    """Flattens a pytree into a list of its leaves and the :class:`TreeSpec` that rebuilds it.
    ``is_leaf(x)`` returning True stops the descent at ``x``."""
    leaves: list = []
    return leaves, _flatten_into(tree, leaves, is_leaf)


def tree_unflatten(leaves: Iterable[Any], treespec: TreeSpec) -> PyTree:
    """Builds the pytree of ``treespec`` with ``leaves`` in place of its leaves."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"tree_unflatten(leaves, treespec): expected treespec to be a TreeSpec, got {type(treespec).__name__}")
    leaves = list(leaves)
    if len(leaves) != treespec.num_leaves:
        raise ValueError(f"tree_unflatten(leaves, treespec): treespec expects {treespec.num_leaves} leaves, "
                         f"but got {len(leaves)}")
    return treespec._build(iter(leaves))


def tree_leaves(tree: PyTree, is_leaf: Optional[Callable[[PyTree], bool]] = None) -> List[Any]:
    """The leaves of a pytree, in flattening order."""
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: PyTree, is_leaf: Optional[Callable[[PyTree], bool]] = None) -> TreeSpec:
    """The :class:`TreeSpec` of a pytree."""
    return tree_flatten(tree, is_leaf)[1]


def tree_map(func: Callable[..., Any], tree: PyTree, *rests: PyTree,
             is_leaf: Optional[Callable[[PyTree], bool]] = None) -> PyTree:
    """A pytree of ``tree``'s structure whose leaves are ``func(leaf, *the rests' leaves there)``;
    each of ``rests`` must have ``tree``'s structure."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = []
    for r in rests:
        r_leaves, r_spec = tree_flatten(r, is_leaf)
        if r_spec != spec:
            raise ValueError(f"tree_map: a tree of structure {r_spec} does not match the first tree's {spec}")
        others.append(r_leaves)
    return tree_unflatten([func(*xs) for xs in zip(leaves, *others)], spec)


def tree_map_(func: Callable[..., Any], tree: PyTree, *rests: PyTree,
              is_leaf: Optional[Callable[[PyTree], bool]] = None) -> PyTree:
    """Calls ``func`` on every leaf for its side effects; returns ``tree``."""
    tree_map(func, tree, *rests, is_leaf=is_leaf)
    return tree


def tree_map_only(type_or_types, func: Callable[[Any], Any], tree: PyTree,
                  is_leaf: Optional[Callable[[PyTree], bool]] = None) -> PyTree:
    """``tree_map`` applying ``func`` to the leaves that are instances of ``type_or_types`` (the
    others stay)."""
    return tree_map(lambda x: func(x) if isinstance(x, type_or_types) else x, tree, is_leaf=is_leaf)


def tree_any(pred: Callable[[Any], bool], tree: PyTree, is_leaf: Optional[Callable[[PyTree], bool]] = None) -> bool:
    """Whether ``pred`` holds for some leaf."""
    return any(map(pred, tree_leaves(tree, is_leaf)))


def tree_all(pred: Callable[[Any], bool], tree: PyTree, is_leaf: Optional[Callable[[PyTree], bool]] = None) -> bool:
    """Whether ``pred`` holds for every leaf."""
    return all(map(pred, tree_leaves(tree, is_leaf)))


__all__ = ["PyTree", "TreeSpec", "LeafSpec", "SUPPORTED_NODES", "register_pytree_node", "tree_flatten",
           "tree_unflatten", "tree_leaves", "tree_structure", "tree_map", "tree_map_", "tree_map_only",
           "tree_any", "tree_all"]
