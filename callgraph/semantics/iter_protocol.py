"""`protocol`: the dunder calls a `for` statement makes without a call expression.

`for x in obj` (and an `async for`, each `for` clause of a comprehension, an unpacking
assignment `a, b = obj`, a `*obj` argument) runs
`iter(obj)`, which calls `type(obj).__iter__(obj)`, then the iterator's `__next__()` for each
element. The exploration dispatches these as two synthetic calls placed at the iterable's
source position, `obj.__iter__()` and `obj.__iter__().__next__()`, so an in-tree `__iter__` or
`__next__` is an edge named `protocol`; `f(**m)` calls `m.keys()` and `m.__getitem__(k)`.
(The elements the loop binds are the container rules'
business: `containers.py`, `iterators.py`.)
"""
from __future__ import annotations

import ast

from ..index.scopes import spreads, unpacks
from .rule import Rule


class IterProtocol(Rule):
    """implicit dunder calls: `for x in obj` (also `a, b = obj`, `f(*obj)`) calls
    `obj.__iter__()` and the iterator's `__next__()`; `f(**m)` `m.keys()` and `__getitem__`;
    `with m:` calls `m.__enter__()` and `m.__exit__(...)`; `obj[k]` calls
    `obj.__getitem__(k)` (`__setitem__`, `__delitem__`; a dict subclass's `__missing__`,
    `Cls[k]` `__class_getitem__`, the key's `__index__`) of an in-tree class; operators call
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
    on its iterable, then `__next__` on what that returns; the same for what an unpacking
    assignment (`a, b = obj`) unpacks and each `*obj` argument of a call; `m.keys()` and
    `m.__getitem__(k)` for each `**m` argument; none for any other node."""
    if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
        return _iterated(node.iter)
    if unpacks(node):
        return _iterated(node.value)
    if spreads(node):
        out = [c for a in node.args if isinstance(a, ast.Starred) for c in _iterated(a.value)]
        for kw in node.keywords:
            if kw.arg is None:  # `f(**m)`: the mapping protocol
                keys = ast.Call(func=ast.Attribute(value=kw.value, attr="keys", ctx=ast.Load()), args=[], keywords=[])
                item = ast.Call(func=ast.Attribute(value=kw.value, attr="__getitem__", ctx=ast.Load()),
                                args=[ast.Constant(value=None)], keywords=[])
                out += [_placed(c, kw.value) for c in (keys, item)]
        return out
    return []


def _iterated(value: ast.AST) -> list[ast.Call]:
    it = ast.Call(func=ast.Attribute(value=value, attr="__iter__", ctx=ast.Load()), args=[], keywords=[])
    nxt = ast.Call(func=ast.Attribute(value=it, attr="__next__", ctx=ast.Load()), args=[], keywords=[])
    return [_placed(c, value) for c in (it, nxt)]


def _placed(call: ast.Call, at: ast.AST) -> ast.Call:
    ast.copy_location(call, at)
    ast.copy_location(call.func, at)
    return call
