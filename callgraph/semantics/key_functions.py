"""`key-function`: builtins that call a function they are given.

`sorted(xs, key=f)`, `min(xs, key=f)` / `max(a, b, key=f)` and `xs.sort(key=f)` call `f` on
each element; `filter(f, xs)` calls `f` on each element; `iter(f, sentinel)` calls `f` with
nothing until it returns the sentinel. These builtins are in the callback rule's list of
builtins that never call their arguments (the iterable is only read: `callbacks.NEVER_CALL`),
so before this rule `sorted(layers, key=lambda m: m.score())` ran no `score`: a false
"unreachable" wherever the target was behind a key function. (`map(f, xs)` was already a
callback: `map` is not in that list.)

The function runs with one element of the iterable bound to its first parameter (any of them:
positions are not followed), or with nothing for `iter`. A key that may be an unknown value
leaves the site unresolved, with its reason: it is certainly called. The call's value stays the
builtins' and containers' rules' (a list of the elements, the element, the iterator).
"""
from __future__ import annotations

from typing import FrozenSet

from ..values import EMPTY, Value, VExt, VSeqMethod, VUnknown
from . import callbacks
from .rule import Call, CallArgs, Outcome, Rule

# builtin -> (where the function is: a keyword or a position, where the elements are: a
# position, "all" for every positional argument when there are several, None for none)
BUILTINS = {"builtins.sorted": ("key", 0), "builtins.min": ("key", "all"), "builtins.max": ("key", "all"),
            "builtins.filter": (0, 1), "builtins.iter": (0, None)}


class KeyFunctions(Rule):
    """a function handed to a builtin that calls it: `sorted(xs, key=f)`, `min`/`max(...,
    key=f)`, `xs.sort(key=f)`, `filter(f, xs)` call `f` with an element; `iter(f, sentinel)`
    calls `f`"""

    name = "key-function"
    where = ("semantics/key_functions.py",)
    kinds = (VExt, VSeqMethod)

    def applies(self, call: Call) -> bool:
        v = call.value
        if v.__class__ is VSeqMethod:
            return v.attr == "sort" and "key" in call.args.kw
        if v.name == "builtins.iter":
            return len(call.args.pos) == 2  # iter(f, sentinel); iter(xs) calls nothing given
        return v.name in BUILTINS

    def apply(self, call: Call) -> Outcome:
        v, args = call.value, call.args
        if v.__class__ is VSeqMethod:
            fns, elems = args.kw["key"], call.calls.ev.iterate(frozenset({v.seq}), call.tags)
        else:
            where_fn, where_elems = BUILTINS[v.name]
            fns = args.kw.get(where_fn, EMPTY) if isinstance(where_fn, str) else _at(args.pos, where_fn)
            elems = _elements(call, where_elems)
        passed = CallArgs() if elems is None else CallArgs([elems])
        for f in fns:
            if isinstance(f, VUnknown):
                call.dispatch.unresolved.append(f.why)
        callbacks.hand_over(call.calls, fns, passed, call.dispatch, self.name)
        return None  # the value is the builtins' (or the containers') rule's


RULE = KeyFunctions()


def _at(pos: list, i: int) -> FrozenSet[Value]:
    return pos[i] if i < len(pos) else EMPTY


def _elements(call: Call, where) -> FrozenSet[Value] | None:
    """What the function is called with: one element of the iterable argument (or, for
    `min(a, b, key=f)`, one of the arguments)."""
    if where is None:
        return None
    pos, ev = call.args.pos, call.calls.ev
    if where == "all":
        if len(pos) > 1:
            return frozenset().union(*pos)
        where = 0
    src = _at(pos, where)
    out = ev.iterate(src, call.tags) if src else EMPTY
    return out | call.args.star if call.args.has_star else out

