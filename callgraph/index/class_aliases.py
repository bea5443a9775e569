"""Methods a class body binds by assignment: `__radd__ = __add__`, `forward_native =
forward_cpu`, `x = property(_get, _set)`.

An assignment in a class body whose value is a def of the same body binds the same function
object under the new name: the class's `__radd__` *is* its `__add__` (vLLM's `__str__ =
__repr__`, SGLang's `forward_native = forward_cpu` in a custom op and `get_video_feature =
get_image_feature` in a model). Before, such a name was a class attribute only: a call through
it worked as a value, but the implicit calls (`1 + a` runs `__radd__`, `str(x)` `__str__`) and
the dispatch tables read defs alone, and a target reached through one was a false
"unreachable". `property(fget, fset, fdel)` of the body's defs makes a property like
`@property` does: reading the name runs `fget`, storing into it `fset`, deleting it `fdel`.

Only the body's own top-level statements are read, in order: a name bound again later (by a
def, an assignment of anything else, an import, a loop) is what the later statement binds, and
an alias under an `if` or `try` stays a class attribute (its value is still read where it is
used as one; none of the three real trees has one).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
PROPERTY_PARTS = ("fget", "fset", "fdel")


@dataclass
class BodyAliases:
    # name -> the def node it holds once the body ran (an alias of a def of the same body)
    methods: dict[str, ast.AST] = field(default_factory=dict)
    # name -> {"fget"/"fset"/"fdel": def node} for `name = property(...)` of the body's defs
    properties: dict[str, dict[str, ast.AST]] = field(default_factory=dict)


def read(node: ast.ClassDef, binds) -> BodyAliases:
    """The aliases of `node`'s body. `binds(def)` tells whether a def binds its name (a
    `@x.setter` does not: the name stays the property)."""
    out = BodyAliases()
    held: dict[str, ast.AST] = {}  # name -> the def it holds now
    for stmt in node.body:
        if isinstance(stmt, _FUNCTIONS):
            if binds(stmt):
                _rebind(out, held, stmt.name)
                held[stmt.name] = stmt
            continue
        targets, value = _assignment(stmt)
        if targets is None:
            for name in _bound_names(stmt):
                _rebind(out, held, name)
            continue
        made = _property_parts(value, held)
        for name in targets:
            _rebind(out, held, name)
            if isinstance(value, ast.Name) and value.id in held:
                held[name] = out.methods[name] = held[value.id]
            elif made:
                out.properties[name] = made
    return out


def _rebind(out: BodyAliases, held: dict, name: str) -> None:
    held.pop(name, None)
    out.methods.pop(name, None)
    out.properties.pop(name, None)


def _assignment(stmt: ast.stmt) -> tuple[list[str] | None, ast.AST | None]:
    """(target names, value) of `a = b = value` / `a: T = value` where every target is a plain
    name; (None, None) for any other statement."""
    if isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets):
        return [t.id for t in stmt.targets], stmt.value
    if isinstance(stmt, ast.AnnAssign) and stmt.value is not None and isinstance(stmt.target, ast.Name):
        return [stmt.target.id], stmt.value
    return None, None


def _property_parts(value: ast.AST, held: dict) -> dict[str, ast.AST]:
    """{"fget": def, ...} for `property(f, g, h)` / `property(fget=f, ...)` whose arguments
    are names of the body's defs; empty for anything else (or an argument that is not one)."""
    if not (isinstance(value, ast.Call) and _is_property(value.func)):
        return {}
    given = list(zip(PROPERTY_PARTS, value.args[:3])) + [
        (k.arg, k.value) for k in value.keywords if k.arg in PROPERTY_PARTS]
    out = {}
    for part, arg in given:
        if not (isinstance(arg, ast.Name) and arg.id in held):
            return {}  # a lambda or an outside function: the class attribute's value stands
        out[part] = held[arg.id]
    return out if "fget" in out else {}


def _is_property(func: ast.AST) -> bool:
    return (isinstance(func, ast.Name) and func.id == "property") or (
        isinstance(func, ast.Attribute) and func.attr == "property" and isinstance(func.value, ast.Name)
        and func.value.id == "builtins")


def _bound_names(stmt: ast.stmt) -> set[str]:
    """Every name a statement of the body may bind: stores, imports, defs and classes anywhere
    in it but inside the functions and classes it defines."""
    out: set[str] = set()
    todo = [stmt]
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out.add(node.name)
        elif isinstance(node, ast.NamedExpr) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
        todo.extend(ast.iter_child_nodes(node))
    return out
