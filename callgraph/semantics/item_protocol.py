"""`protocol` (subscripts): `obj[k]` calls `type(obj).__getitem__(obj, k)`; `obj[k] = v` its
`__setitem__`, `del obj[k]` its `__delitem__`.

A plain class of the tree defining these runs code there (a lazy mapping importing and
building what a key names, a cache filling a slot). The value of `obj[k]` was read off
`__getitem__`'s return (`infer/calls.py` `dunder`, `container_subclass.py`), but the method was
no edge, so a target reached inside it was a false "unreachable". The exploration asks, for
each subscript (`x[k]`, `self.table[k]`, `self.model(x)[0]`: `FuncInfo.item_accesses`), which
in-tree methods run: the class's own, and each in-tree subclass's override for an object known
by its base type; each is an edge named `protocol`, with the key bound; the key's in-tree
`__hash__` is one too (a dict's lookup hashes it), and its `__index__` (a list's indexes by
it); a dict subclass's `__missing__` runs for a key it lacks, a class's `__class_getitem__` on
`Cls[k]`. An object not inferred is a blocker in `reach` only where a def named as the method
may lead to the target (explore.py `_not_inferred`): a tensor's indexing is an outside value's.
"""
from __future__ import annotations

import ast
from typing import FrozenSet

from ..values import Ctx, Value, VClass
from . import class_hierarchy
from .binding import bind
from .rule import CallArgs

METHODS = {ast.Load: "__getitem__", ast.Store: "__setitem__", ast.Del: "__delitem__"}


def calls(node: ast.Subscript, defined: FrozenSet[str]) -> list[tuple[str, ast.Call]]:
    """The synthetic calls a subscript makes, `obj.__getitem__(k)` (or `__setitem__` /
    `__delitem__` by its context), placed at the subscript, and, where some file of the scope
    defines `__hash__` (`defined`: the scope's dunders), the key's `k.__hash__()` (a dict's
    lookup hashes it), of kind "operator", for a key that is a name, an attribute or a call."""
    name = next((m for ctx, m in METHODS.items() if isinstance(node.ctx, ctx)), None)
    if name is None:
        return []
    func = ast.copy_location(ast.Attribute(value=node.value, attr=name, ctx=ast.Load()), node)
    out = [("item", ast.copy_location(ast.Call(func=func, args=[node.slice], keywords=[]), node))]
    key = node.slice
    for dunder in ("__hash__", "__index__"):  # a dict's lookup hashes the key, a list's indexes by it
        if dunder in defined and isinstance(key, (ast.Name, ast.Attribute, ast.Call)):
            used = ast.copy_location(ast.Attribute(value=key, attr=dunder, ctx=ast.Load()), key)
            out.append(("operator", ast.copy_location(ast.Call(func=used, args=[], keywords=[]), key)))
    return out


def runs(ev, owners: FrozenSet[Value], call: ast.Call, scope) -> list[tuple[str, Ctx]]:
    """The in-tree methods the synthetic `call` (`calls`) runs on each of `owners`, each with
    its owner and the key bound."""
    found = class_hierarchy.cone_methods(ev, owners, call.func.attr)
    if call.func.attr == "__getitem__":  # a dict subclass's `__missing__` answers a key it lacks
        found += class_hierarchy.cone_methods(ev, owners, "__missing__")
    classes = [v for v in owners if v.__class__ is VClass] if call.func.attr == "__getitem__" else []
    for v in classes:  # `Cls[k]`: the class's `__class_getitem__` (an implicit classmethod)
        method = ev.classes.method(v.qual, "__class_getitem__")
        if method is not None:
            found.append((method[0], v))
    if not found:
        return []
    key = ev.eval(call.args[0], scope, set())
    return [(fn.qual, bind(fn, owner, CallArgs([key]), None)) for fn, owner in found]
