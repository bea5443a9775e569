"""`outside-results`: what an outside function returns may be an in-tree object it was given.

`heapq.nsmallest(2, layers)`, `dataclasses.replace(config, x=1)`,
`torch.nn.utils.weight_norm(module)`, `contextlib.nullcontext(model)`: an outside function
handed an in-tree instance or class may return it, or a container holding it. Before, the
result was an outside leaf (`heapq.nsmallest()`), whose methods and elements run nothing of the
tree, so `for m in heapq.nsmallest(2, layers): m.step()` or `dataclasses.replace(cfg).build()`
was a false "unreachable". Now such a result is unknown, with its reason, so a call on it stays
unresolved. Only the arguments the evaluator reads for an outside callee are looked at (names,
attributes, lambdas: `calls.args(light=True)`); an in-tree object built inside a nested call or a
list display passed to an outside function is not seen, and stays a documented gap. Builtins
(modelled or data-returning: `len`, `isinstance`, `str`), methods of outside classes
(`nn.Module.__init__(self)`, `Function.apply`), logging, typing (`TypeVar(..., bound=C)`),
torch's functions (they return tensors), field specifiers (`field(default_factory=C)`), and the
modules that only keep or copy what they are given (`callbacks.KEEPING_PREFIXES`; `copy` is the
builtins model's) are left out.
"""
from __future__ import annotations

from ..values import VClass, VExt, VInst, VSeq, VUnknown
from . import callbacks
from .constructor import FIELD_SPECIFIERS
from .rule import Call, Outcome, Rule


# Outside callees whose results are data, type constructs or nothing, never an object handed
# to them: builtins (the modelled ones answer before this rule), logging and warnings, typing
# (`TypeVar("T", bound=Layer)`), torch's functions (tensors: an in-tree `__torch_function__` is
# not followed, docs/rules.md), ctypes and inspect.
QUIET_PREFIXES = ("builtins.", "logging.", "logger.", "warnings.", "typing.", "typing_extensions.", "torch.",
                  "ctypes.", "inspect.")
# Field specifiers (`constructor.FIELD_SPECIFIERS`: `dataclasses.field(default_factory=Cfg)`)
# describe a field; the factory they are given runs at construction (constructor.py).


class OutsideResults(Rule):
    """an outside function handed an in-tree instance or class (`heapq.nsmallest(2, layers)`,
    `dataclasses.replace(cfg)`, `weight_norm(module)`) may return it or hold it: its result is
    unknown, not an outside leaf"""

    name = "outside-results"
    where = ("semantics/outside_results.py",)
    kinds = (VExt,)
    on_edges = False  # it makes values; a call on the result is named by its own rule

    def applies(self, call: Call) -> bool:
        name = call.value.name
        return (not name.startswith(QUIET_PREFIXES) and name.rpartition(".")[2] not in FIELD_SPECIFIERS
                and callbacks.may_call_instances(name))

    def apply(self, call: Call) -> Outcome:
        args = call.args
        given = [v for a in list(args.pos) + list(args.kw.values()) + [args.star, args.kw_star] for v in a]
        if not any(_in_tree(v) for v in given):
            return None
        return frozenset({VUnknown(f"the result of {call.value.name}(...), handed an in-tree object: "
                                   "it may return it")})


RULE = OutsideResults()


def _in_tree(v, depth: int = 0) -> bool:
    if v.__class__ is VInst or v.__class__ is VClass:
        return True
    if v.__class__ is VSeq and depth < 3:
        return any(_in_tree(e, depth + 1) for e in v.elems)
    return False
