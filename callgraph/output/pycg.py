"""PyCG's adjacency JSON (`{"caller": ["callee", ...]}`), with PyCG's own names.

So that existing PyCG consumers, and PyCG's micro-benchmark scoring, can read our graph. Our
qualified names already match PyCG's for functions, methods and nested defs (`main.Class.method`,
`main.func.nested`). Three kinds of name differ:
- lambdas: ours are `scope.<lambda:LINE:COL>`, PyCG's `scope.<lambdaN>`, N counting the lambdas of
  that scope (function, class or lambda) from 1 in source order. The mapping needs the source,
  read here with `ast` from `view.root` + the node's file (read only, never imported).
- builtins: `builtins.print` is `<builtin>.print` in PyCG; a method of a builtin type is spelt
  with PyCG's pseudo-type, `builtins.str.join` as `<**PyStr**>.join`, `builtins.dict.items` as
  `<**PyDict**>.items`.
- module-level code: PyCG names it by the module (`main`); a caller `main.<module>` becomes `main`.
- a name a body defines twice: ours tell the defs apart (`main.f<def:LINE>`, a property's
  `main.C.x<setter:LINE>`: `index/redefinitions.py`), PyCG names each `main.f`.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

from ..index.sources import read_file
from ..model import GraphView

_LAMBDA = re.compile(r"<lambda:(\d+):(\d+)>$")
_REDEFINED = re.compile(r"<(?:def|setter|deleter|getter):\d+>")
MODULE_SUFFIX = ".<module>"


def pycg_adjacency(view: GraphView) -> dict[str, list[str]]:
    """Every node as a key (callees sorted, no duplicates); callees that are not nodes too."""
    rename = pycg_names(view)
    name = lambda q: rename.get(q) or _plain(q)  # noqa: E731
    adj: dict[str, set[str]] = {name(n.name): set() for n in view.nodes}
    for e in view.edges:
        adj.setdefault(name(e.caller), set()).add(name(e.callee))
        adj.setdefault(name(e.callee), set())
    return {k: sorted(v) for k, v in sorted(adj.items())}


# PyCG's pseudo-types for the values of Python literals.
PSEUDO_TYPES = {"str": "PyStr", "dict": "PyDict", "list": "PyList", "tuple": "PyTuple", "set": "PySet",
                "int": "PyInt", "float": "PyFloat", "bytes": "PyBytes", "bool": "PyBool"}


def _plain(q: str) -> str:
    q = _REDEFINED.sub("", q)
    if q.startswith("builtins."):
        rest = q[len("builtins."):]
        head, dot, attr = rest.partition(".")
        if dot and head in PSEUDO_TYPES:
            return f"<**{PSEUDO_TYPES[head]}**>.{attr}"
        return "<builtin>." + rest
    if q.endswith(MODULE_SUFFIX):
        return q[: -len(MODULE_SUFFIX)]
    return q


def pycg_names(view: GraphView) -> dict[str, str]:
    """Our lambda names -> PyCG's, for the lambdas the view mentions (others keep their name)."""
    files = {n.name: n.file for n in view.nodes}
    wanted = {q for e in view.edges for q in (e.caller, e.callee)} | set(files)
    out: dict[str, str] = {}
    tables: dict[str, dict[tuple[int, int], str]] = {}
    for q in wanted:
        m = _LAMBDA.search(q)
        if not m or not files.get(q):
            continue
        rel = files[q]
        if rel not in tables:
            tables[rel] = _lambda_table(view.root, rel)
        pos = (int(m.group(1)), int(m.group(2)))
        if pos in tables[rel]:
            out[q] = tables[rel][pos]
    return out


def _lambda_table(roots, rel: str) -> dict[tuple[int, int], str]:
    for root in roots:
        path = Path(root) / rel
        if path.is_file():
            src = read_file(path)  # the graph may come from the cache: no analysis has read it
            tree = src.parse()[0] if not isinstance(src, str) else None
            if tree is None:
                return {}
            table: dict[tuple[int, int], str] = {}
            _walk(tree, module_name(rel), {}, table)
            return table
    return {}


def module_name(rel: str) -> str:
    parts = list(Path(rel).with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _walk(node: ast.AST, scope: str, counters: dict[str, int], table: dict) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for sub in (*child.decorator_list, *getattr(child, "bases", ()), *_defaults(child)):
                _walk_expr(sub, scope, counters, table)
            inner = f"{scope}.{child.name}"
            for stmt in child.body:
                _walk_expr(stmt, inner, counters, table)
        else:
            _walk_expr(child, scope, counters, table)


def _walk_expr(node: ast.AST, scope: str, counters: dict[str, int], table: dict) -> None:
    if isinstance(node, ast.Lambda):
        counters[scope] = counters.get(scope, 0) + 1
        name = f"{scope}.<lambda{counters[scope]}>"
        table[(node.lineno, node.col_offset)] = name
        _walk(node, name, counters, table)
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        wrapper = ast.Module(body=[node], type_ignores=[])
        _walk(wrapper, scope, counters, table)
    else:
        _walk(node, scope, counters, table)


def _defaults(fn: ast.AST) -> list[ast.AST]:
    args = getattr(fn, "args", None)
    if args is None:
        return []
    return [d for d in (*args.defaults, *args.kw_defaults) if d is not None]
