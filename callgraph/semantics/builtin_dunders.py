"""`dunder`: builtins that call a dunder method of the object they are given.

`len(x)` runs `type(x).__len__(x)`, `str(x)` its `__str__` (or `__repr__`, which `object.__str__`
calls), `repr`, `hash`, `bool` (`__bool__`, else `__len__`), `abs`, `format` (`__format__`, else
the string's), `int`, `float`, `round`, `print(a, b)` each argument's `__str__` (or `__repr__`),
`next(x)` its `__next__`, `iter(x)` and `reversed(x)`
their `__iter__` / `__reversed__`, `math.floor` / `ceil` / `trunc` their `__floor__` /
`__ceil__` / `__trunc__`, `copy.copy(x)` / `copy.deepcopy(x)` its `__copy__` / `__deepcopy__`
(else the reduce protocol's `__reduce_ex__` / `__reduce__`) and `__getstate__` /
`__setstate__`, `pickle.dump(s)` its reduce methods and `__getstate__`, `sorted(xs)`, `min` and
`max` (of an iterable or of several arguments, with no `key=`) the elements' `__lt__` /
`__gt__`, `sum(xs)` their `__add__` / `__radd__`, `sep.join(xs)` iterates `xs`, an exit
stack's `enter_context(cm)` runs `cm.__enter__` (and `__exit__` when it closes),
`"...".format(a, k=b)` each argument's `__format__` (whose default calls `__str__`, then
`__repr__`), a logging call (`logger.info("%s", x)`,
`logging.warning`, `logger.log(level, msg, x)`) the `__str__` / `__repr__` of the message and
the arguments; and the builtins that consume an iterable (`list(x)`,
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

from typing import FrozenSet

from ..values import EMPTY, Value, VExt
from . import class_hierarchy
from .binding import bind
from .rule import Call, CallArgs, Outcome, Rule

# builtin -> the dunders it calls on its first argument, each tried only where no earlier one is
# in the tree (`str(x)`: `__str__`, else `object.__str__` calls `__repr__`)
CALLS = {
    "builtins.len": ("__len__",), "builtins.str": ("__str__", "__repr__"), "builtins.repr": ("__repr__",),
    "builtins.hash": ("__hash__",), "builtins.bool": ("__bool__", "__len__"), "builtins.abs": ("__abs__",),
    "builtins.format": ("__format__", "__str__", "__repr__"), "builtins.int": ("__int__", "__index__"),
    "builtins.float": ("__float__",), "builtins.round": ("__round__",), "builtins.next": ("__next__",),
    "builtins.reversed": ("__reversed__",),
    "math.floor": ("__floor__",), "math.ceil": ("__ceil__",), "math.trunc": ("__trunc__",),
}
# outside functions that call several dunders of their first argument: each group's first in the
# tree runs (a copy runs `__deepcopy__`, else the reduce protocol, whose default reads the
# state with `__getstate__` and the copy sets it with `__setstate__`: all may run; the state's
# own objects, copied in turn, are not followed)
GROUPS = {
    "copy.copy": (("__copy__", "__reduce_ex__", "__reduce__"), ("__getstate__",), ("__setstate__",)),
    "copy.deepcopy": (("__deepcopy__", "__reduce_ex__", "__reduce__"), ("__getstate__",), ("__setstate__",)),
    "pickle.dumps": (("__reduce_ex__", "__reduce__"), ("__getstate__",)),
    "pickle.dump": (("__reduce_ex__", "__reduce__"), ("__getstate__",)),
    # an exit stack enters what it is given now, and exits it when it closes
    "contextlib.ExitStack().enter_context": (("__enter__",), ("__exit__",)),
    "contextlib.AsyncExitStack().enter_context": (("__enter__",), ("__exit__",)),
    "contextlib.AsyncExitStack().enter_async_context": (("__aenter__",), ("__aexit__",)),
}
# builtins that compare or add the elements of their iterable (or, for `min` / `max` of several
# arguments, the arguments): `sorted` and `min` by `<`, `max` by `>`, each with the reflected
# one (which answers NotImplemented is not followed), `sum` by `+` (`0 + x` first: `__radd__`);
# not where a `key=` function gives what is compared
COMBINING = {"builtins.sorted": ("__lt__", "__gt__"), "builtins.min": ("__lt__", "__gt__"),
             "builtins.max": ("__gt__", "__lt__"), "builtins.sum": ("__add__", "__radd__")}
# builtins that call these on every positional argument (`print(a, b)` formats each with str())
EACH = {"builtins.print": ("__str__", "__repr__")}
# formatting that calls these on its arguments: `"{}".format(x)` (positional and keyword), and
# a logger's `logger.info("%s", x)` / `logging.warning(...)` on the message and the arguments
# (after the level for `log`), when the record is emitted
FORMATTING = ("__format__", "__str__", "__repr__")
LOGGED = ("__str__", "__repr__")
LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "fatal"})
# builtins that iterate the positional arguments in these slices
ITERATING = {
    "builtins.list": slice(0, 1), "builtins.tuple": slice(0, 1), "builtins.set": slice(0, 1),
    "builtins.frozenset": slice(0, 1), "builtins.sorted": slice(0, 1), "builtins.sum": slice(0, 1),
    "builtins.any": slice(0, 1), "builtins.all": slice(0, 1), "builtins.enumerate": slice(0, 1),
    "builtins.zip": slice(0, None), "builtins.filter": slice(1, 2), "builtins.map": slice(1, None),
    "builtins.iter": slice(0, 1), "builtins.min": slice(0, 1), "builtins.max": slice(0, 1),
}
# `sep.join(xs)` of a string iterates its argument
JOINED = slice(0, 1)
# ... only when given one positional argument (`min(a, b)` compares, `iter(f, sentinel)` calls f)
ONE_ARGUMENT = frozenset({"builtins.min", "builtins.max", "builtins.iter"})


class BuiltinDunders(Rule):
    """a builtin that calls a dunder method of its argument: `len(x)` runs `x.__len__()`,
    `str(x)` `__str__` (or `__repr__`), `repr`, `hash`, `bool`, `abs`, `format`, `int`, `float`,
    `round`, `print(x, ...)` each one's `__str__` (or `__repr__`), `"...".format(x)` each
    argument's `__format__` / `__str__` / `__repr__`, a logging call (`logger.info("%s", x)`)
    those of its message and arguments, `next(x)` `__next__`,
    `reversed(x)` `__reversed__`, `math.floor` `__floor__` (`ceil`, `trunc`), `copy.copy` /
    `deepcopy` `__copy__` / `__deepcopy__` / `__reduce_ex__` / `__getstate__` / `__setstate__`,
    `pickle.dumps` the reduce protocol; `sorted(xs)`, `min`, `max` compare the elements
    (`__lt__` / `__gt__`), `sum(xs)` adds them (`__add__` / `__radd__`); `list(x)`, `tuple`, `set`,
    `sorted`, `sum`, `any`, `all`, `enumerate`, `zip`, `map`, `filter`, `iter`, `min`/`max` of
    one argument run `x.__iter__()` and the iterator's `__next__()`"""

    name = "dunder"
    where = ("semantics/builtin_dunders.py",)
    kinds = (VExt,)

    def applies(self, call: Call) -> bool:
        name = call.value.name
        return ((name in CALLS or name in ITERATING or name in EACH or name in GROUPS or joins(name))
                and bool(call.args.pos)) or formatted(name) is not None

    def apply(self, call: Call) -> Outcome:
        name, pos = call.value.name, call.args.pos
        found = formatted(name)
        if found is not None:
            for vals in pos[found[0]] + (list(call.args.kw.values()) if found[1] else []):
                _run(call, vals, found[2])
            return None
        if name in CALLS:
            _run(call, pos[0], CALLS[name])
        for group in GROUPS.get(name, ()):
            _run(call, pos[0], group)
        combined = COMBINING.get(name)
        if combined is not None and "key" not in call.args.kw:
            ev = call.calls.ev
            items = ev.iterate(pos[0], call.tags) if len(pos) == 1 else frozenset().union(*pos)
            for dunder in combined:
                _run(call, items, (dunder,))
        for vals in pos if name in EACH else ():
            _run(call, vals, EACH[name])
        where = ITERATING.get(name) or (JOINED if joins(name) else None)
        if where is not None and not (name in ONE_ARGUMENT and len(pos) > 1):
            for vals in pos[where]:
                iterators = _run(call, vals, ("__iter__",))
                _run(call, iterators, ("__next__",))
        return None  # the value is the builtins' rule's


def _run(call: Call, values: FrozenSet[Value], names: tuple[str, ...]) -> FrozenSet[Value]:
    """Each in-tree instance among `values` has the first of `names` its class (or, for one known
    by a base type, each class of its cone) gives from the tree called, as an edge of this rule
    whose value is not the call's; what those methods return."""
    ev = call.calls.ev
    out: set[Value] = set()
    for m in values:
        for attr in names:
            found = class_hierarchy.cone_methods(ev, frozenset({m}), attr)
            for fn, owner in found:
                ctx = bind(fn, owner, CallArgs(), None)
                call.calls.add_target(fn.qual, ctx, RULE.name, call.dispatch)
                out |= ev.returns(fn, ctx)
            if found:
                break
    return frozenset(out) if out else EMPTY


RULE = BuiltinDunders()


def formatted(name: str) -> tuple[slice, bool, tuple[str, ...]] | None:
    """For an outside callee that formats its arguments (`str.format`, a logging call): the
    positional arguments it formats (a logging call's message too), whether its keyword
    arguments are formatted too, and the dunders formatting runs; None for any other."""
    head, _, last = name.rpartition(".")
    if last == "format" and head.startswith("builtins.str"):  # `"...".format`, a `str` value's
        return slice(0, None), True, FORMATTING
    if name.startswith("logging."):  # `logging.warning`, `logging.getLogger(...).info`
        if last in LOG_METHODS:  # the message too: the record's getMessage() runs str(msg)
            return slice(0, None), False, LOGGED
        if last == "log":  # after the level
            return slice(1, None), False, LOGGED
    return None


def joins(name: str) -> bool:
    """Whether the outside callee `name` is a string's `join` (`", ".join`, `str.join`)."""
    head, _, last = name.rpartition(".")
    return last == "join" and head.startswith("builtins.str")


def handles(name: str) -> bool:
    """Whether this rule reads the arguments of a call of the outside callee `name`."""
    return (name in CALLS or name in ITERATING or name in EACH or name in GROUPS or joins(name)
            or formatted(name) is not None)
