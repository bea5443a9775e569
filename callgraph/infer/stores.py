"""Container stores: what `x[k] = v`, `x.append(v)`, `x.extend(vs)`, `x.update(m)` and nested
`x["a"]["b"] = v` do to the container values of `x`.

Stores are applied in the order given. A *strong* store (one that certainly ran after the
value was made, see `index/flow.py`) with a constant key replaces that key of a dict (or that
position of a list), as Python does: `d = {"a": f1}; d["a"] = f2; d["a"]()` calls `f2` only.
A weak store (conditional, from another function, or of unknown order) adds to what was there.
Stores into names a function does not bind itself go to the enclosing function's or the
module's name (`remote_stores`): `def f(k): table[k] = g` fills the global `table`.
"""
from __future__ import annotations

import ast
from typing import FrozenSet, Iterator

from ..index.children import child_nodes
from ..index.scopes import ANY_KEY, Binding, FuncInfo, ModuleInfo
from ..semantics.protocol import Inference
from ..values import EMPTY, Value, VSeq, cap


def apply(ev: Inference, values: set[Value], items: list, tags: set[str]) -> set[Value]:
    """`values` with the stores `items` ((Binding, Scope) or (Binding, Scope, strong)) applied
    in order. A name holding no container yet gets a list of what was put in."""
    out = set(values)
    if not any(isinstance(v, VSeq) for v in out):
        out.add(VSeq(EMPTY, "list"))
    for item in items:
        b, scope = item[0], item[1]
        strong = item[2] if len(item) > 2 else False
        vals = ev.eval(b.expr, scope, tags)
        if b.path == ("*",):
            vals, pairs = ev.iterate(vals, tags), None
        elif b.path == ("**",):
            vals, pairs = _mapping_items(ev, vals, tags)
        else:
            pairs = None
        vals = cap(vals)
        out = {_put(v, b, vals, pairs, strong, 0) if isinstance(v, VSeq) else v for v in out}
    return out


def _mapping_items(ev, vals: FrozenSet[Value], tags) -> tuple[FrozenSet[Value], list | None]:
    """`x.update(m)`: m's values, and its (key, values) pairs where every key is known."""
    elems: set[Value] = set()
    pairs: list | None = []
    for m in vals:
        if isinstance(m, VSeq) and m.kind == "dict":
            elems |= m.elems
            if m.keys is not None and pairs is not None:
                pairs.extend(m.keys)
            else:
                pairs = None
        else:  # an iterable of (key, value) pairs
            pairs = None
            for pair in ev.iterate(frozenset({m}), tags):
                if isinstance(pair, VSeq) and pair.items and len(pair.items) == 2:
                    elems |= pair.items[1]
                elif isinstance(pair, VSeq):
                    elems |= pair.elems
    return frozenset(elems), pairs


def _put(v: VSeq, b: Binding, vals: FrozenSet[Value], pairs, strong: bool, depth: int) -> VSeq:
    """v after the store b, whose subscript chain from v starts at b.keys[depth]."""
    store = b.path == ("=",)
    descend = b.keys[depth:-1] if store else b.keys[depth:]
    if descend:
        k = descend[0]
        change = lambda vs, st: frozenset(  # noqa: E731
            _put(e, b, vals, pairs, st, depth + 1) if isinstance(e, VSeq) else e for e in vs)
        return _at(v, k, change, strong)
    if store:
        return _at(v, b.keys[-1], lambda vs, st: vals if st else vs | vals, strong, new=vals)
    if pairs is not None:
        for k, kv in pairs:
            v = _at(v, k, lambda vs, st, kv=kv: kv if st else vs | kv, strong, new=kv)
        return v
    return VSeq(v.elems | vals, v.kind, None, None)  # appended: the positions from the end moved


def _at(v: VSeq, k, change, strong: bool, new: FrozenSet[Value] = EMPTY) -> VSeq:
    """v with its entry at key (or position) k changed; every entry when k is not known."""
    if k is not ANY_KEY and v.keys is not None:
        table = dict(v.keys)
        table[k] = change(table.get(k, EMPTY), strong) if k in table else change(EMPTY, True) | new
        keys = tuple(sorted(table.items(), key=lambda kv: repr(kv[0])))
        return VSeq(_union(kv for _, kv in keys), v.kind, None, keys)
    if isinstance(k, int) and not isinstance(k, bool) and v.items is not None and -len(v.items) <= k < len(v.items):
        items = list(v.items)
        items[k] = change(items[k], strong)
        return VSeq(_union(items), v.kind, tuple(items), None)
    # unknown key or position: any entry may be the one changed
    elems = v.elems | change(v.elems, False) | new
    return VSeq(elems, v.kind, None, None)


def _union(sets: Iterator[FrozenSet[Value]]) -> FrozenSet[Value]:
    out: set[Value] = set()
    for s in sets:
        out |= s
    return frozenset(out)


def remote_stores(ev: Inference, mod: ModuleInfo) -> dict[str, list[tuple[Binding, FuncInfo]]]:
    """Stores that functions of `mod` make into module globals they do not bind themselves."""
    cache = ev.stores_memo
    if id(mod) in cache:
        return cache[id(mod)]
    out: dict[str, list[tuple[Binding, FuncInfo]]] = {}
    for fn in _functions(ev, mod.tree.body, mod.name):
        for name, bs in fn.locals().items():
            if name in fn.param_names() or not all(b.kind == "item" for b in bs):
                continue
            if _bound_above(fn, name):
                continue  # the store is into an enclosing function's name
            out.setdefault(name, []).extend((b, fn) for b in bs)
    cache[id(mod)] = out
    return out


def _bound_above(fn: FuncInfo, name: str) -> bool:
    p = fn.parent
    while p is not None:
        if name in p.param_names() or any(b.kind != "item" for b in p.locals().get(name, ())):
            return True
        p = p.parent
    return False


def _functions(ev, body, scope: str) -> Iterator[FuncInfo]:
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            qual = f"{scope}.{node.name}"
            fn = ev.p.functions.get(qual)
            if fn is not None and fn.node is node:
                yield fn
            yield from _functions(ev, node.body, qual)
        elif isinstance(node, ast.ClassDef):
            yield from _functions(ev, node.body, f"{scope}.{node.name}")
        elif isinstance(node, ast.stmt):
            for child in child_nodes(node):
                if isinstance(child, ast.stmt):
                    yield from _functions(ev, [child], scope)
                elif isinstance(child, ast.ExceptHandler):
                    yield from _functions(ev, child.body, scope)


__all__ = ["apply", "remote_stores"]
