"""What the rules and the inference's helpers may ask of the evaluator (mypy's
`SemanticAnalyzerCoreInterface`, jedi's inference state handed to its plugins).

The evaluator (`infer/evaluator.py`) implements `Inference`; `infer/calls.py`, `classes.py`
and every rule under `semantics/` are written against this protocol and the
`Scope` record, never against the Evaluator class, so none of them imports it back: the
import graph stays one way (docs/architecture.md).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, FrozenSet, Iterable, Protocol

if TYPE_CHECKING:
    from ..index.bindings import Binding
    from ..index.project import Project
    from ..index.scopes import ClassInfo, FuncInfo, ModuleInfo
    from ..fixpoint import Solver
    from ..values import Ctx, Value


@dataclass(slots=True)
class Scope:
    """Where an expression is evaluated. Never changed once made (plain, not frozen: a frozen
    dataclass's __init__ costs three times as much, and scopes are made per name read)."""

    mod: ModuleInfo
    fn: FuncInfo | None = None
    ctx: Ctx | None = None
    cls: ClassInfo | None = None  # evaluating a class body


class Classes(Protocol):
    """The class model (`infer/classes.py`) as the rules see it: lookups along the MRO of
    in-tree classes, each memoised there."""

    def info(self, qual: str) -> ClassInfo | None: ...

    def mro(self, qual: str) -> tuple[str, ...]: ...

    def bases(self, qual: str) -> tuple[Value, ...]: ...

    def subclasses(self, qual: str) -> list[str]: ...

    def method(self, qual: str, name: str, after: str | None = None) -> tuple[FuncInfo, str] | None: ...

    def external_bases(self, qual: str) -> list[str]: ...

    def unknown_bases(self, qual: str) -> list[str]: ...

    def is_module(self, qual: str) -> bool: ...

    def is_container(self, qual: str) -> bool: ...

    def overriders(self, qual: str, names: tuple[str, ...]) -> list[str]: ...

    def effective_methods(self, qual: str) -> frozenset[str]: ...

    def bind_method(self, fn: FuncInfo, owner: Value, cls_qual: str, tags: set[str],
                    name: str | None = None) -> FrozenSet[Value]: ...


class Inference(Protocol):
    """The evaluator as its helpers and the rules see it. `tags` collects the rules that typed
    a value (they become the `via` of an edge)."""

    p: Project
    binds: dict[str, str]
    registries: object  # registries.Registries: the framework registries and the model config
    classes: Classes  # infer.classes.ClassModel: MRO, attribute lookup
    calls: object    # infer.calls.CallModel: dispatch of a call site
    stores_memo: dict
    solver: Solver   # fixpoint.Solver: what the memo tables keep through recursion

    def eval(self, node: ast.AST | None, scope: Scope, tags: set[str]) -> FrozenSet[Value]: ...

    def lookup(self, name: str, scope: Scope, tags: set[str], node: ast.Name | None = None) -> FrozenSet[Value]: ...

    def attribute(self, values: FrozenSet[Value], attr: str, tags: set[str]) -> FrozenSet[Value]: ...

    def iterate(self, values: FrozenSet[Value], tags: set[str]) -> FrozenSet[Value]: ...

    def returns(self, fn: FuncInfo, ctx: Ctx) -> FrozenSet[Value]: ...

    def binding_value(self, b: Binding, scope: Scope, tags: set[str]) -> FrozenSet[Value]: ...

    def bindings(self, bindings: Iterable[Binding], scope: Scope, tags: set[str], key, remote=()) -> FrozenSet[Value]: ...

    def fill(self, values: set[Value], items: list, tags: set[str]) -> set[Value]: ...

    def bound_factory(self, node: ast.Call, scope: Scope) -> tuple[str, ...]: ...

    def annotation(self, ann: ast.AST, scope: Scope, tags: set[str] | None = None) -> FrozenSet[Value]: ...
