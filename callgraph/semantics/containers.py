"""torch containers: `nn.ModuleList`, `nn.Sequential`, `nn.ModuleDict` (and their Parameter twins).

At run time these hold the modules given to their constructor; iterating, indexing or slicing
them gives those modules back, and calling a `Sequential` calls each of them in turn. We model
them as a container value holding the constructor's elements.
"""
from __future__ import annotations

from functools import lru_cache

from ..values import EMPTY, VSeq

_PREFIXES = ("torch.nn.", "torch.nn.modules.container.", "nn.")
KINDS = {"ModuleList": "list", "Sequential": "Sequential", "ModuleDict": "dict", "ParameterList": "list", "ParameterDict": "dict"}


@lru_cache(maxsize=4096)
def container_kind(name: str) -> str | None:
    for prefix in _PREFIXES:
        if name.startswith(prefix) and name[len(prefix):] in KINDS:
            return KINDS[name[len(prefix):]]
    return None


def call(calls, v, args, node, scope, d, tags):
    kind = container_kind(v.name)
    if kind is None:
        return None
    ev = calls.ev
    elems = set()
    if kind == "Sequential":
        for a in args.pos:
            for m in a:
                # Sequential(OrderedDict(...)) and Sequential(*layers) both end up here
                elems |= ev.iterate(frozenset({m}), tags) if isinstance(m, VSeq) else {m}
        elems |= args.star
    else:
        for a in args.pos[:1]:
            for m in a:
                if isinstance(m, VSeq):
                    elems |= m.elems
                else:
                    elems |= ev.iterate(frozenset({m}), tags)
    return frozenset({VSeq(frozenset(elems) or EMPTY, kind)})
