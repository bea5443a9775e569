"""In-tree functions handed to external code: `torch.utils.checkpoint.checkpoint(fn, x)`,
`module.register_forward_hook(fn)`, `executor.submit(fn)`. The external code may call them, so
each becomes a target with rule `callback`. Introspection builtins (`getattr`, `isinstance`,
`print`, logging) never call their arguments and are left out.
"""
from __future__ import annotations

from .binding import CallArgs
from ..values import VFunc, VPartial

NEVER_CALL = {
    "getattr", "hasattr", "setattr", "isinstance", "issubclass", "id", "print", "repr", "str", "type",
    "len", "callable", "hash", "vars", "dir", "format", "bool", "int", "float", "tuple", "list", "dict", "set",
    "super", "iter", "next", "zip", "enumerate", "range", "sorted", "reversed", "min", "max", "sum", "any", "all",
}
NEVER_CALL_PREFIXES = ("logging.", "logger.", "warnings.", "inspect.", "typing.", "dataclasses.")


def call(calls, v, args, node, scope, d, tags):
    name = v.name
    short = name.rsplit(".", 1)[-1]
    if name.startswith("builtins.") and short in NEVER_CALL or name.startswith(NEVER_CALL_PREFIXES):
        return None
    if ".logger." in name or ".log." in name or name.endswith(".debug") or name.endswith(".info") or name.endswith(".warning"):
        return None
    values = [m for a in list(args.pos) + list(args.kw.values()) for m in a]
    for m in values:
        if isinstance(m, VFunc):
            fn = calls.ev.p.functions.get(m.qual)
            if fn is not None:
                calls.invoke(fn, m.self_val, CallArgs(), m.closure, "callback", d, returning=False)
        elif isinstance(m, VPartial):
            for f in m.func:
                if isinstance(f, VFunc) and f.qual in calls.ev.p.functions:
                    calls.invoke(calls.ev.p.functions[f.qual], f.self_val, CallArgs(list(m.args)), f.closure, "callback", d,
                                 returning=False)
    return None
