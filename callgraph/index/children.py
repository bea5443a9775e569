"""A node's child nodes, for the walks run over every body of a tree.

`ast.iter_child_nodes` runs two generators and a guarded getattr per field, and yields the
context and operator singletons (`Load`, `Store`, `Add`, `Eq`) that a third of all nodes are.
No walk of ours looks for those, so `child_nodes` leaves them out, and lists per class, once,
the fields it reads. The order is iter_child_nodes' order: fields in `_fields` order, list
items in order.
"""
from __future__ import annotations

import ast

# Fields holding only context or operator singletons.
_SINGLETON_FIELDS = frozenset({"ctx", "op", "ops"})
_FIELDS: dict[type, tuple[str, ...]] = {}
_AST = ast.AST


def child_fields(cls: type) -> tuple[str, ...]:
    """The fields of a node class that may hold child nodes other than singletons."""
    fields = _FIELDS.get(cls)
    if fields is None:
        fields = _FIELDS[cls] = tuple(f for f in cls._fields if f not in _SINGLETON_FIELDS)
    return fields


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """ast.iter_child_nodes(node), without context and operator singletons, as a list."""
    fields = _FIELDS.get(node.__class__)
    if fields is None:
        fields = child_fields(node.__class__)
    out = []
    for name in fields:
        value = getattr(node, name, None)
        if value.__class__ is list:
            out += [x for x in value if isinstance(x, _AST)]
        elif isinstance(value, _AST):
            out.append(value)
    return out
