"""`protocol`: the dunder calls a `for` statement makes without a call expression.

`for x in obj` (and each `for` clause of a comprehension, `yield from obj`, an unpacking
assignment `a, b = obj`, a `*obj` argument, and below those each value a nested target list
unpacks: `for a, b in pairs` each element, `x, (a, b) = obj` the part: `element_unpacks`) runs
`iter(obj)`, which calls `type(obj).__iter__(obj)`, then the iterator's `__next__()` for each
element; an `async for` (a statement or a comprehension's clause) calls `__aiter__` and
`__anext__` instead (before, `__iter__`: an in-tree `__aiter__` was a false "unreachable"). The exploration dispatches these as two synthetic calls placed at the iterable's
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
    """implicit dunder calls: `for x in obj` (also `a, b = obj`, `f(*obj)`, `yield from obj`,
    and each element a target list unpacks: `for a, b in pairs`, `x, (a, b) = obj`) calls
    `obj.__iter__()` and the iterator's `__next__()` (`async for`: `__aiter__`, `__anext__`); `f(**m)` `m.keys()` and `__getitem__`;
    `with m:` calls `m.__enter__()` and `m.__exit__(...)`; `obj[k]` calls
    `obj.__getitem__(k)` (`__setitem__`, `__delitem__`; a dict subclass's `__missing__`,
    `Cls[k]` `__class_getitem__`, the key's `__index__`) of an in-tree class; operators call
    their operands' dunders (`a + b`: `__add__` / `__radd__`, `a == b`, `k in obj`:
    `__contains__`, `-a`, `a += b`, `await x`: `__await__`), a truth test `__bool__` / `__len__` (`if obj:`, `not obj`),
    `fmt % x` `x.__str__` / `__repr__`, a dict key or set member (`{k: v}`, `d[k]`, `k in s`,
    `d.get(k)`, `s.add(k)`) its `__hash__`"""

    name = "protocol"
    where = ("semantics/iter_protocol.py", "semantics/with_protocol.py", "semantics/item_protocol.py",
             "semantics/operator_protocol.py", "explore.py")


RULE = IterProtocol()


def calls(node: ast.AST) -> list[ast.Call]:
    """The calls a loop `node` (`for`, a comprehension's clause, `yield from`) makes: `__iter__`
    on its iterable, then `__next__` on what that returns (`__aiter__` / `__anext__` for an
    `async for`); the same for what an unpacking
    assignment (`a, b = obj`) unpacks and each `*obj` argument of a call; `m.keys()` and
    `m.__getitem__(k)` for each `**m` argument; none for any other node."""
    if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
        return _iterated(node.iter, _asynchronous(node))
    if isinstance(node, ast.YieldFrom):  # `yield from obj` iterates obj
        made = _iterated(node.value)
        for c in made:
            c.shown = f"yield from {ast.unparse(node.value)}"[:80]  # a blocker's text (explore.py)
        return made
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


def element_unpacks(node: ast.AST) -> list[ast.Call]:
    """The calls unpacking what a target list binds, below the iterable or value itself: each
    element of a loop whose target is a tuple (`for a, b in pairs`, `for i, (a, b) in
    enumerate(pairs)`, a comprehension's clause) and each nested target of an unpacking
    assignment (`x, (a, b) = obj`) runs `__iter__` / `__next__` on the value it unpacks. That
    value is written `next(xs)`, which the builtins' model reads as any element of `xs` (the
    position of a nested target is not kept: every element's dunders count)."""
    if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
        if not isinstance(node.target, (ast.Tuple, ast.List)):
            return []
        each = _element(node.iter)
        return _iterated(each) + _nested(node.target, each)
    if unpacks(node):
        return [c for t in node.targets if isinstance(t, (ast.Tuple, ast.List)) for c in _nested(t, node.value)]
    return []


def _nested(target: ast.AST, value: ast.AST) -> list[ast.Call]:
    out = []
    for elt in target.elts:
        if isinstance(elt, ast.Starred):
            elt = elt.value
        if isinstance(elt, (ast.Tuple, ast.List)):
            each = _element(value)
            out += _iterated(each) + _nested(elt, each)
    return out


def _element(value: ast.AST) -> ast.Call:
    return _placed(ast.Call(func=ast.Name(id="next", ctx=ast.Load()), args=[value], keywords=[]), value)


def _asynchronous(node: ast.AST) -> bool:
    """Whether a loop is an `async for` (a statement, or a comprehension's `async for` clause)."""
    return isinstance(node, ast.AsyncFor) or (isinstance(node, ast.comprehension) and bool(node.is_async))


def _iterated(value: ast.AST, asynchronous: bool = False) -> list[ast.Call]:
    """`value.__iter__()` and its `__next__()`; `__aiter__` / `__anext__` for an `async for`."""
    first, then = ("__aiter__", "__anext__") if asynchronous else ("__iter__", "__next__")
    it = ast.Call(func=ast.Attribute(value=value, attr=first, ctx=ast.Load()), args=[], keywords=[])
    nxt = ast.Call(func=ast.Attribute(value=it, attr=then, ctx=ast.Load()), args=[], keywords=[])
    return [_placed(c, value) for c in (it, nxt)]


def _placed(call: ast.Call, at: ast.AST) -> ast.Call:
    ast.copy_location(call, at)
    ast.copy_location(call.func, at)
    return call
