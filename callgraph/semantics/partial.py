"""`functools.partial(f, *args, **kw)`: calling the partial calls `f` with those args first."""
from __future__ import annotations

from ..values import VPartial

NAMES = {"functools.partial", "functools.partialmethod"}


def call(calls, v, args, node, scope, d, tags):
    if v.name not in NAMES or not args.pos:
        return None
    tags.add("partial")
    return frozenset({VPartial(args.pos[0], tuple(args.pos[1:]), tuple(sorted(args.kw.items())))})
