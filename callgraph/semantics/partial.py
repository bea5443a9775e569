"""`functools.partial(f, *args, **kw)`: calling the partial calls `f` with those args first."""
from __future__ import annotations

from ..values import VExt, VPartial
from .rule import Call, Outcome, Rule

NAMES = {"functools.partial", "functools.partialmethod"}


class Partial(Rule):
    """`functools.partial(f, ...)` called calls `f`"""

    name = "partial"
    where = ("semantics/partial.py", "infer/calls.py")
    kinds = (VExt,)

    def applies(self, call: Call) -> bool:
        return call.value.name in NAMES and bool(call.args.pos)

    def apply(self, call: Call) -> Outcome:
        args = call.args
        call.tags.add(self.name)
        return frozenset({VPartial(args.pos[0], tuple(args.pos[1:]), tuple(sorted(args.kw.items())))})


RULE = Partial()
