"""`jedi`: what runs where Jedi answers a call site the index could not resolve.

`jedi_oracle.py` (the one module that imports jedi) asks Jedi's `infer` about the call sites
that block a proof and maps each answer to an in-tree name and a kind; this module decides what
such an answer means for the call. A function runs itself; a class is constructed (its
`__init__` runs); an instance is called, which runs its `__call__` or `forward` and, since Jedi
may have read the class off an annotation, each in-tree subclass's override too
(`class-hierarchy`).

An answer adds edges; it never settles the site. Jedi's inference is not complete: it reads a
parameter off the calls it finds in the project (`run(os.getcwd, 1)` makes `fn` "os.getcwd",
though the entry may be called with anything), answers its own limits (recursion, execution
counts) and code it cannot read with fewer names or none, and names an outside base where the
tree only has an annotation (`-> nn.Module`). So the site stays unresolved, a blocker with its
index reason, whatever Jedi says: Jedi can make a proof reach, never make one unreachable.
"""
from __future__ import annotations

from typing import Iterator

from ..values import Ctx, VInst
from .binding import self_context
from .class_hierarchy import RULE as CLASS_HIERARCHY
from .rule import Rule


class Jedi(Rule):
    """Jedi's `infer` answered where the index could not"""

    name = "jedi"
    where = ("semantics/oracle.py", "jedi_oracle.py", "query.py")


RULE = Jedi()

_CALLED = ("__call__", "forward")


def targets(answer, classes) -> Iterator[tuple[str, Ctx, tuple[str, ...]]]:
    """(function, its context, the rules that typed it: the edge's `via`) for each function
    that runs when Jedi says the callee is `answer` (a function, class or instance)."""
    if answer.kind == "function":
        yield answer.qual, Ctx(answer.qual), ()
    elif answer.kind == "class":
        init = classes.method(answer.qual, "__init__")
        if init is not None:
            yield init[0].qual, self_context(init[0], VInst(answer.qual)), ("constructor",)
    elif answer.kind == "instance":
        for qual in [answer.qual] + classes.overriders(answer.qual, _CALLED):
            m = classes.method(qual, "__call__") or classes.method(qual, "forward")
            if m is not None and (qual == answer.qual or m[1] not in classes.mro(answer.qual)):
                via = ("module-call",) if qual == answer.qual else ("module-call", CLASS_HIERARCHY.name)
                yield m[0].qual, self_context(m[0], VInst(qual, exact=False)), via  # any subclass too
