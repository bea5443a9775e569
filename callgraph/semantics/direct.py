"""`direct`: calling a function value runs that function."""
from __future__ import annotations

from ..values import EMPTY, VFunc
from .rule import Call, Outcome, Rule


class Direct(Rule):
    """a name or attribute bound to a def (imports followed, star imports too)"""

    name = "direct"
    where = ("semantics/direct.py", "infer/evaluator.py")
    kinds = (VFunc,)

    def apply(self, call: Call) -> Outcome:
        v = call.value
        fn = call.ev.p.functions.get(v.qual)
        if fn is None:
            call.dispatch.unresolved.append(f"function {v.qual} is not indexed")
            return EMPTY
        return call.calls.invoke(fn, v.self_val, call.args, v.closure, self.name, call.dispatch)


RULE = Direct()
