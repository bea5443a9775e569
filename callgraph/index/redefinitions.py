"""Names a body defines more than once: which qualified name each def gets, and which bind.

Python binds a def's name when the def runs, so where one body (a module's, a class's, a
function's) defines a name twice, what the name holds afterwards is the later def:

- `@typing.overload` stubs are replaced by the implementation below them (vLLM's
  `Executor.execute_model`: two stubs whose bodies are `pass`, then the def that calls
  `collective_rpc`). Such a stub is neither indexed nor bound.
- `@x.setter` / `@x.deleter` / `@x.getter` build a new property from the one `x` holds: the
  name stays the property whose getter is the first def. The accessor is indexed under its own
  name, `Cls.x<setter:LINE>`, and binds nothing.
- Otherwise each def is indexed. The last one keeps the plain name `scope.name` (what the name
  holds once the body ran through, the implementation after its stubs); each earlier one is
  `scope.name<def:LINE>`, bound beside it: `if c: def f(): ... else: def f(): ...` leaves either,
  and a read in statement order (`index/flow.py`) sees the one that reaches it. A class's
  `methods` table names the last one only (`ClassInfo.methods`): where a class body defines a
  method twice under a condition, the earlier one is not followed (none of the three real
  trees does; SGLang's `ForwardMode.is_dllm_extend` and Gemma 4's `get_embed_and_head` are
  defined twice in a row, and the later def is what runs).

Before, the index kept the first def of a class and the last of any other body: an overload
stub stood for the implementation, and "unreachable" was answered for what it calls.
"""
from __future__ import annotations

import ast
from typing import Iterator

from .decorator_names import decorator_name

ACCESSORS = ("setter", "deleter", "getter")
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def names(tree: ast.Module, module: str) -> dict[int, str | None]:
    """id(def node) -> its qualified name, for every def of `tree` not named `scope.name`;
    None for a def that is neither indexed nor bound (an overload stub replaced below it).
    Empty where no body defines a name twice (almost every module)."""
    out: dict[int, str | None] = {}
    _body(tree.body, module, out)
    return out


def binds(node: ast.AST) -> bool:
    """Whether a def binds its name (an accessor does not: the name stays the property)."""
    return accessor(node) is None


def _body(body: list, scope: str, out: dict) -> None:
    by_name: dict[str, list[ast.AST]] = {}
    for stmt in body:
        for d in defs_in(stmt):
            if isinstance(d, _FUNCTIONS):
                by_name.setdefault(d.name, []).append(d)
    for name, found in by_name.items():
        if len(found) > 1:
            _name(name, found, scope, out)
    for stmt in body:
        for d in defs_in(stmt):
            qual = out.get(id(d), f"{scope}.{d.name}")
            if qual is not None:
                _body(d.body, qual, out)


def _name(name: str, found: list, scope: str, out: dict) -> None:
    plain = []
    for d in found:
        kind = accessor(d)
        if kind is not None:
            out[id(d)] = f"{scope}.{name}<{kind}:{d.lineno}>"
        else:
            plain.append(d)
    if not plain:
        return
    last = plain[-1]
    for d in plain[:-1]:
        if _overload(d) and not _overload(last):
            out[id(d)] = None  # replaced by the implementation
        else:
            out[id(d)] = f"{scope}.{name}<def:{d.lineno}>"


def accessor(d: ast.AST) -> str | None:
    """"setter", "deleter" or "getter" for a def decorated `@<its name>.setter` (...), else None."""
    name = getattr(d, "name", None)
    for dec in getattr(d, "decorator_list", ()):
        if (isinstance(dec, ast.Attribute) and dec.attr in ACCESSORS and isinstance(dec.value, ast.Name)
                and dec.value.id == name):
            return dec.attr
    return None


def _overload(d: ast.AST) -> bool:
    return any(n == "overload" or n.endswith(".overload") for n in map(decorator_name, d.decorator_list))


def defs_in(node: ast.AST) -> Iterator[ast.AST]:
    """Defs directly in a body, including those nested in if/try/with blocks of that body."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield node
        return
    if isinstance(node, (ast.If, ast.Try, ast.With, ast.AsyncWith, ast.For, ast.While)) or (
        hasattr(ast, "TryStar") and isinstance(node, getattr(ast, "TryStar"))
    ):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt):
                yield from defs_in(child)
            elif isinstance(child, ast.ExceptHandler):
                for s in child.body:
                    yield from defs_in(s)
