"""The interface of a model-semantics rule (jedi's `plugins/`, mypy's function hooks).

A rule models one runtime behaviour of Python or torch. It has a `name` (what an edge records
when the rule resolved the hop), a docstring saying which behaviour it models (docs/rules.md's
table is generated from these), the modules that implement it (`where`), a cheap `applies`
test and `apply(call) -> Outcome`. Rules that dispatch a call declare the kinds of callee
value they handle (`kinds`); the registry (`semantics/__init__.py`) asks them in its order,
the first whose `apply` answers wins. Rules with no `kinds` type a receiver inside the
evaluator (MRO lookup, `self.x` attributes...): they are registered for their name, their
place in the precedence and their documentation.
"""
from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, FrozenSet, Optional

from ..values import EMPTY, Ctx

if TYPE_CHECKING:
    from ..values import Value  # noqa: F401  (the annotations' strings)
    from .protocol import Inference, Scope

# What `apply` answers: the values the call gives, or None when the rule passes (the next rule
# in the registry is asked; when none answers the caller's default holds).
Outcome = Optional[FrozenSet["Value"]]


@dataclass
class CallArgs:
    """The argument values of one call, as `semantics/binding.py` binds them to parameters."""

    pos: list[FrozenSet[Value]] = field(default_factory=list)
    star: FrozenSet[Value] = EMPTY          # elements of *iterable args (positions unknown)
    has_star: bool = False
    kw: dict[str, FrozenSet[Value]] = field(default_factory=dict)
    kw_star: FrozenSet[Value] = EMPTY       # **mapping whose keys are unknown
    has_kw_star: bool = False
    # every argument of a call written in the source: a parameter with a default that none of
    # them gives holds its default (binding.OR_DEFAULT), where argument lists made up by a rule
    # (a hook's, a setter's) leave the parameters they do not give unbound
    complete: bool = False

    def prepend(self, values: list[FrozenSet[Value]]) -> "CallArgs":
        return CallArgs(values + self.pos, self.star, self.has_star, dict(self.kw), self.kw_star, self.has_kw_star,
                        self.complete)


@dataclass(frozen=True, slots=True)
class Target:
    """A function a call runs, in its calling context, with the rule that found it."""

    fn: str          # qualified name of the function that runs
    ctx: Ctx         # its calling context
    rule: str        # the dispatch rule (see callgraph.model.RULES)
    key: str = ""    # the registry key that chose it (`text_config.model_type=llama`), if any


@dataclass(slots=True)
class Dispatch:
    """What one call site does in one context (memoised by infer/calls.py): the rules write
    their targets, externals and unresolved reasons here."""

    results: FrozenSet["Value"] = EMPTY       # values known without running a target (instances...)
    targets: list[Target] = field(default_factory=list)
    returning: list[Target] = field(default_factory=list)  # targets whose return values are the call's
    externals: list[str] = field(default_factory=list)  # external functions/classes called, by name
    unresolved: list[str] = field(default_factory=list)  # why, for unknown callee values
    tags: frozenset = frozenset()                         # rules that typed the receiver


@dataclass(slots=True)
class Call:
    """One callee value called at one site: everything a rule reads, and the dispatch it adds
    targets to (`calls.invoke(...)`, `dispatch.externals`, `dispatch.unresolved`)."""

    calls: object        # infer.calls.CallModel: invoke, construct, call_value
    value: Value         # the callee value this rule is asked about
    args: CallArgs
    node: ast.Call
    scope: Scope
    dispatch: Dispatch
    tags: set            # rules that typed what this call returns (an edge's `via`)

    @property
    def ev(self) -> Inference:
        return self.calls.ev


class Rule:
    """Subclasses override the docstring (the behaviour modelled), `name`, `where`, and, for
    rules that dispatch a call, `kinds`, `applies` and `apply`."""

    name: str = ""
    where: tuple[str, ...] = ()      # modules that implement it, relative to callgraph/
    kinds: tuple[type, ...] = ()     # callee value kinds it dispatches on (none: a typing rule)
    on_edges: bool = True            # False: a model of values only, never the rule of a hop

    def applies(self, call: Call) -> bool:
        """Cheap: whether `apply` may answer (a name or kind test, nothing inferred)."""
        return True

    def apply(self, call: Call) -> Outcome:
        return None

    @classmethod
    def behaviour(cls) -> str:
        """The docstring as one paragraph (a row of the rules table)."""
        return " ".join(inspect.getdoc(cls).split())

    def __repr__(self) -> str:
        return f"<rule {self.name}>"
