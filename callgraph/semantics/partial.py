"""`functools.partial(f, *args, **kw)`: calling the partial calls `f` with those args first."""
from __future__ import annotations

from dataclasses import replace

from ..values import VExt, VPartial
from .rule import Call, CallArgs, Outcome, Rule

NAMES = {"functools.partial", "functools.partialmethod"}


class Partial(Rule):
    """`functools.partial(f, ...)` called calls `f`"""

    name = "partial"
    where = ("semantics/partial.py",)
    kinds = (VExt, VPartial)

    def applies(self, call: Call) -> bool:
        v = call.value
        return v.__class__ is VPartial or (v.name in NAMES and bool(call.args.pos))

    def apply(self, call: Call) -> Outcome:
        v, args, d = call.value, call.args, call.dispatch
        call.tags.add(self.name)
        if v.__class__ is VExt:  # functools.partial(f, ...) made
            return frozenset({VPartial(args.pos[0], tuple(args.pos[1:]), tuple(sorted(args.kw.items())))})
        out: set = set()
        merged = CallArgs(list(v.args) + args.pos, args.star, args.has_star, {**dict(v.kwargs), **args.kw}, args.kw_star,
                          args.has_kw_star, args.complete)
        first = len(d.targets)
        for f in v.func:
            out |= call.calls.call_value(f, merged, call.node, call.scope, d, call.tags)
        d.targets[first:] = [replace(t, rule=self.name) if t.rule == "direct" else t for t in d.targets[first:]]
        return frozenset(out)


RULE = Partial()
