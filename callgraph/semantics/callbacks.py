"""In-tree functions handed to external code: `torch.utils.checkpoint.checkpoint(fn, x)`,
`module.register_forward_hook(fn)`, `executor.submit(fn)`. The external code may call them, so
each becomes a target with rule `callback`. Introspection builtins (`getattr`, `isinstance`,
`print`, logging) never call their arguments and are left out.
"""
from __future__ import annotations

from ..values import VExt, VFunc, VPartial
from .binding import CallArgs
from .rule import Call, Outcome, Rule

NEVER_CALL = {
    "getattr", "hasattr", "setattr", "isinstance", "issubclass", "id", "print", "repr", "str", "type",
    "len", "callable", "hash", "vars", "dir", "format", "bool", "int", "float", "tuple", "list", "dict", "set",
    "super", "iter", "next", "zip", "enumerate", "range", "sorted", "reversed", "min", "max", "sum", "any", "all",
}
NEVER_CALL_PREFIXES = ("logging.", "logger.", "warnings.", "inspect.", "typing.", "dataclasses.")


class Callbacks(Rule):
    """an in-tree function handed to external code (`checkpoint(fn, x)`,
    `register_forward_hook(fn)`), which may call it"""

    name = "callback"
    where = ("semantics/callbacks.py",)
    kinds = (VExt,)

    def applies(self, call: Call) -> bool:
        name = call.value.name
        short = name.rsplit(".", 1)[-1]
        if name.startswith("builtins.") and short in NEVER_CALL or name.startswith(NEVER_CALL_PREFIXES):
            return False
        return not (".logger." in name or ".log." in name or name.endswith(".debug") or name.endswith(".info")
                    or name.endswith(".warning"))

    def apply(self, call: Call) -> Outcome:
        """Each function among the arguments is a target; the call's value is left to the
        caller's default (an external result)."""
        args, d, calls = call.args, call.dispatch, call.calls
        functions = calls.ev.p.functions
        values = [m for a in list(args.pos) + list(args.kw.values()) for m in a]
        for m in values:
            if isinstance(m, VFunc):
                fn = functions.get(m.qual)
                if fn is not None:
                    calls.invoke(fn, m.self_val, CallArgs(), m.closure, self.name, d, returning=False)
            elif isinstance(m, VPartial):
                for f in m.func:
                    if isinstance(f, VFunc) and f.qual in functions:
                        calls.invoke(functions[f.qual], f.self_val, CallArgs(list(m.args)), f.closure, self.name, d,
                                     returning=False)
        return None


RULE = Callbacks()
