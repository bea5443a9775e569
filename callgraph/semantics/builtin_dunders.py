"""`dunder`: builtins that call a dunder method of the object they are given.

`len(x)` runs `type(x).__len__(x)`, `str(x)` its `__str__` (or `__repr__`, which `object.__str__`
calls), `repr`, `hash`, `bool` (`__bool__`, else `__len__`), `abs`, `format` (`__format__`, else
the string's), `int`, `float`, `round`, `next(x)` its `__next__`, `iter(x)` and `reversed(x)`
their `__iter__` / `__reversed__`; and the builtins that consume an iterable (`list(x)`,
`tuple`, `set`, `frozenset`, `sorted`, `sum`, `any`, `all`, `min` / `max` of one argument,
`enumerate`, `zip`, `filter` / `map`'s iterables, `dict.fromkeys`-free `dict(...)` is not one)
run its `__iter__` and the iterator's `__next__`. An in-tree class defining one runs code there;
before, only the value was modelled (`builtins_model.py`), so a target reached from, say, a
registry's `__iter__` behind `list(registry)` was a false "unreachable".

Each in-tree method found (on the instance's class, or for a value known by a base type on each
in-tree subclass's, as any method call dispatches) is an edge named `dunder`; its return value
does not become the builtin's (`len` gives an int whatever `__len__` returns; the elements of
`list(x)` are the container rules'). A value not inferred blocks nothing here, as for loops
(`iter_protocol.py`): these methods' names lead nowhere by themselves.
"""
from __future__ import annotations

from dataclasses import replace
from typing import FrozenSet

from ..values import EMPTY, Value, VExt, VFunc, VInst
from .rule import Call, CallArgs, Outcome, Rule

# builtin -> the dunders it calls on its first argument, each tried only where no earlier one is
# in the tree (`str(x)`: `__str__`, else `object.__str__` calls `__repr__`)
CALLS = {
    "builtins.len": ("__len__",), "builtins.str": ("__str__", "__repr__"), "builtins.repr": ("__repr__",),
    "builtins.hash": ("__hash__",), "builtins.bool": ("__bool__", "__len__"), "builtins.abs": ("__abs__",),
    "builtins.format": ("__format__", "__str__", "__repr__"), "builtins.int": ("__int__", "__index__"),
    "builtins.float": ("__float__",), "builtins.round": ("__round__",), "builtins.next": ("__next__",),
    "builtins.reversed": ("__reversed__",),
}
# builtins that iterate the arguments at these positions ("*": every positional argument)
ITERATING = {
    "builtins.list": (0,), "builtins.tuple": (0,), "builtins.set": (0,), "builtins.frozenset": (0,),
    "builtins.sorted": (0,), "builtins.sum": (0,), "builtins.any": (0,), "builtins.all": (0,),
    "builtins.enumerate": (0,), "builtins.zip": "*", "builtins.filter": (1,), "builtins.map": "*",
    "builtins.iter": (0,), "builtins.min": (0,), "builtins.max": (0,),
}


class BuiltinDunders(Rule):
    """a builtin that calls a dunder method of its argument: `len(x)` runs `x.__len__()`,
    `str(x)` `__str__` (or `__repr__`), `repr`, `hash`, `bool`, `abs`, `format`, `int`, `float`,
    `round`, `next(x)` `__next__`, `reversed(x)` `__reversed__`; `list(x)`, `tuple`, `set`,
    `sorted`, `sum`, `any`, `all`, `enumerate`, `zip`, `map`, `filter`, `iter`, `min`/`max` of
    one argument run `x.__iter__()` and the iterator's `__next__()`"""

    name = "dunder"
    where = ("semantics/builtin_dunders.py",)
    kinds = (VExt,)

    def applies(self, call: Call) -> bool:
        name = call.value.name
        return (name in CALLS or name in ITERATING) and bool(call.args.pos)

    def apply(self, call: Call) -> Outcome:
        name, pos = call.value.name, call.args.pos
        if name in CALLS:
            _run(call, pos[0], CALLS[name])
        where = ITERATING.get(name)
        if where is not None and not (name in ("builtins.min", "builtins.max") and len(pos) > 1) \
                and not (name == "builtins.iter" and len(pos) > 1):
            picked = pos if where == "*" else [pos[i] for i in where if i < len(pos)]
            if name == "builtins.map":
                picked = pos[1:]
            for vals in picked:
                iterators = _run(call, vals, ("__iter__",))
                _run(call, iterators, ("__next__",))
        return None  # the value is the builtins' rule's


def _run(call: Call, values: FrozenSet[Value], names: tuple[str, ...]) -> FrozenSet[Value]:
    """Each in-tree instance among `values` has the first of `names` its class (or, for one known
    by a base type, each class of its cone) gives from the tree called, as an edge of this rule
    whose value is not the call's; what those methods return."""
    ev, d = call.calls.ev, call.dispatch
    out: set[Value] = set()
    for m in values:
        if m.__class__ is not VInst:
            continue
        for attr in names:
            found = [f for f in ev.attribute(frozenset({m}), attr, set()) if f.__class__ is VFunc
                     and f.qual in ev.p.functions]
            if not found:
                continue
            first, returning = len(d.targets), len(d.returning)
            for f in found:
                call.calls.call_value(f, CallArgs(), call.node, call.scope, d, set())
            added = d.targets[first:]
            del d.targets[first:]
            del d.returning[returning:]
            for t in added:
                d.targets.append(replace(t, rule=RULE.name))
                fn = ev.p.functions.get(t.fn)
                if fn is not None:
                    out |= ev.returns(fn, t.ctx)
            break
    return frozenset(out) if out else EMPTY


RULE = BuiltinDunders()


def handles(name: str) -> bool:
    """Whether this rule reads the arguments of a call of the outside callee `name`."""
    return name in CALLS or name in ITERATING
