"""`module-getattr`: reading a name a module does not bind runs the module's `__getattr__`
(PEP 562).

`m.name` off a module object, or `from m import name` (in a function body too, where it runs
each time the body does), where `m`'s top level defines `def __getattr__(name)` and does not
bind `name` at run time, calls `m.__getattr__("name")`; what it returns is the value read.
vLLM makes `current_platform` this way (`vllm/platforms/__init__.py`: the first read resolves
the platform class by name and builds it) and every `envs.VLLM_*` (`vllm/envs.py`: the
hook calls `environment_variables[name]()`). Before, the hook was no edge and the read's value
was the annotation alone: a target reached inside the hook was a false "unreachable".

"Bound at run time" is what the module body binds outside `if TYPE_CHECKING:` (whose `else:`
runs): a bare annotation `x: T` binds nothing, and neither does a name only imported for type
checkers. A conditional binding counts as bound (a name bound on one branch only leaves the
hook out on the other: not followed). A name that is a submodule counts as bound: reading
`pkg.sub` through `import pkg.sub` finds the module the import set. A name bound only from
outside (`m.x = v`, `setattr(m, "x", v)`, a function's `global x`) is unbound here, so the hook
may run: more edges, never fewer. Not followed: `getattr(m, name)` with the name computed; a
module whose `__getattr__` is set by assignment rather than defined.
"""
from __future__ import annotations

import ast
import weakref
from typing import FrozenSet

from ..index.scopes import FuncInfo, ModuleInfo, bind_node, import_bindings, walk_local
from ..values import Ctx, Value, VConst, VModule
from .binding import bind
from .getattr_hook import ANY_NAME
from .rule import CallArgs, Rule

HOOK = "__getattr__"


class ModuleGetattr(Rule):
    """reading a name a module does not bind at run time (`m.name`, `from m import name`) runs
    the module's `__getattr__(name)` (PEP 562); its return is the value read; names bound only
    under `if TYPE_CHECKING:` or by a bare annotation count as unbound"""

    name = "module-getattr"
    where = ("semantics/module_getattr.py", "infer/evaluator.py", "explore.py")


RULE = ModuleGetattr()

# ModuleInfo -> the names its body binds at run time; FuncInfo -> its imports' synthetic calls.
_BOUND: "weakref.WeakKeyDictionary[ModuleInfo, frozenset]" = weakref.WeakKeyDictionary()
_IMPORTS: "weakref.WeakKeyDictionary[FuncInfo, list]" = weakref.WeakKeyDictionary()


def hook(p, mod: ModuleInfo | None) -> FuncInfo | None:
    """The module's own top-level `__getattr__`, or None."""
    if mod is None or HOOK not in mod.globals:
        return None
    fn = p.functions.get(f"{mod.name}.{HOOK}")
    return fn if fn is not None and fn.cls is None and fn.module is mod else None


def answers(p, mod: ModuleInfo | None, attr: str) -> FuncInfo | None:
    """The hook that a read of `attr` off `mod` runs: `mod`'s `__getattr__` where its body does
    not bind `attr` at run time and `attr` is not a submodule (any name may be unbound, for
    `getattr(m, name)` with a name not known: `ANY_NAME`); else None."""
    fn = hook(p, mod)
    if fn is None or attr == ANY_NAME:
        return fn
    if attr in bound(mod) or p.locate(f"{mod.name}.{attr}") is not None:
        return None
    return fn


def bound(mod: ModuleInfo) -> frozenset:
    """The names `mod`'s body binds at run time (memoised): every statement's bindings, nested
    ones included, but those under `if TYPE_CHECKING:`; a bare annotation binds nothing."""
    found = _BOUND.get(mod)
    if found is None:
        table: dict = {}
        stack: list = list(mod.tree.body)
        while stack:
            stmt = stack.pop()
            if isinstance(stmt, ast.If) and _type_checking(stmt.test):
                stack.extend(stmt.orelse)  # `else:` runs
                continue
            bind_node(stmt, table, mod.name, mod.package, False, mod.renamed)
            if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                for field in ("body", "orelse", "finalbody", "handlers"):  # if, try, for, while, with
                    stack.extend(getattr(stmt, field, ()))
        found = _BOUND[mod] = frozenset(n for n, bs in table.items() if any(b.kind != "annot" for b in bs))
    return found


def _type_checking(test: ast.AST) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def values(ev, mod: ModuleInfo | None, attr: str, tags: set[str]) -> FrozenSet[Value] | None:
    """What `mod.__getattr__(attr)` returns, where a read of `attr` off `mod` runs it; None
    where it does not."""
    fn = answers(ev.p, mod, attr)
    if fn is None:
        return None
    tags.add(RULE.name)
    return ev.returns(fn, _context(fn, attr))


def runs(ev, owners: FrozenSet[Value], attr: str) -> list[tuple[str, Ctx]]:
    """The module hooks a read of `attr` off each of `owners` runs, each in its context."""
    out = {}
    for v in owners:
        if v.__class__ is VModule:
            fn = answers(ev.p, ev.p.module(v.name), attr)
            if fn is not None:
                out[(fn.qual, _context(fn, attr))] = None
    return list(out)


def import_calls(p, fn: FuncInfo) -> list[tuple[str, ast.Call]]:
    """("import", synthetic call `m.name()`) for each `from m import name` of `fn`'s body where
    `m` is an in-tree module whose `__getattr__` answers `name`, placed at the statement
    (memoised). The call's receiver is a Name holding `m`'s dotted name: explore.py reads it as
    that module, not as a variable."""
    found = _IMPORTS.get(fn)
    if found is None:
        found = []
        imports = [b.target for bs in fn.locals().values() for b in bs if b.kind == "import"]
        if imports and HOOK in p.dunder_names() and any(answers(p, p.module(t.rpartition(".")[0]), t.rpartition(".")[2]) for t in imports if "." in t):
            for node in walk_local(fn.node):
                if not isinstance(node, ast.ImportFrom):
                    continue
                for _, target in import_bindings(node, fn.module.package):
                    head, _, attr = target.rpartition(".")
                    if head and answers(p, p.module(head), attr) is not None:
                        call = ast.Call(func=ast.Attribute(value=ast.Name(id=head, ctx=ast.Load()), attr=attr,
                                                           ctx=ast.Load()), args=[], keywords=[])
                        found.append(("import", ast.copy_location(call, node)))
        _IMPORTS[fn] = found
    return found


def _context(fn: FuncInfo, attr: str) -> Ctx:
    """The hook's context: its parameter bound to the name read, or unbound for `ANY_NAME`."""
    return bind(fn, None, CallArgs([frozenset({VConst(attr)})] if attr != ANY_NAME else []), None)
