"""`protocol`: the dunder calls a `for` statement makes without a call expression.

`for x in obj` (and an `async for`, and each `for` clause of a comprehension) runs
`iter(obj)`, which calls `type(obj).__iter__(obj)`, then the iterator's `__next__()` for each
element. The exploration dispatches these as two synthetic calls placed at the iterable's
source position, `obj.__iter__()` and `obj.__iter__().__next__()`, so an in-tree `__iter__` or
`__next__` is an edge named `protocol`. (The elements the loop binds are the container rules'
business: `containers.py`, `iterators.py`.)
"""
from __future__ import annotations

import ast

from .rule import Rule


class IterProtocol(Rule):
    """implicit dunder calls: `for x in obj` calls `obj.__iter__()` and the iterator's
    `__next__()`; `with m:` calls `m.__enter__()` and `m.__exit__(...)`; `obj[k]` calls
    `obj.__getitem__(k)` (`__setitem__`, `__delitem__`) of an in-tree class; operators call
    their operands' dunders (`a + b`: `__add__` / `__radd__`, `a == b`, `k in obj`:
    `__contains__`, `-a`, `a += b`), a truth test `__bool__` / `__len__` (`if obj:`, `not obj`),
    `fmt % x` `x.__str__` / `__repr__`, a dict key or set member (`{k: v}`, `d[k]`, `k in s`,
    `d.get(k)`, `s.add(k)`) its `__hash__`"""

    name = "protocol"
    where = ("semantics/iter_protocol.py", "semantics/with_protocol.py", "semantics/item_protocol.py",
             "semantics/operator_protocol.py", "explore.py")


RULE = IterProtocol()


def calls(node: ast.AST) -> list[ast.Call]:
    """The calls a loop `node` (`for`, `async for`, a comprehension's clause) makes: `__iter__`
    on its iterable, then `__next__` on what that returns; none for any other node."""
    if not isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
        return []
    it = ast.Call(func=ast.Attribute(value=node.iter, attr="__iter__", ctx=ast.Load()), args=[], keywords=[])
    nxt = ast.Call(func=ast.Attribute(value=it, attr="__next__", ctx=ast.Load()), args=[], keywords=[])
    for c in (it, nxt):
        ast.copy_location(c, node.iter)
        ast.copy_location(c.func, node.iter)
    return [it, nxt]
