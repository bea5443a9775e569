"""`return-type`: a call's value is what the functions it runs return.

A function returns the union of its `return` expressions, evaluated in the call's context
(so `make_layers(n, lambda idx, prefix: Layer(...))` returns what the lambda builds); a bare
`return`, or a body that may run to its end (its last statement is not a `return` or `raise`,
or is an `if`, `try`, loop or `with` that may finish: a context manager may swallow the
exception of a `return`'s expression) returns `None` too, so `x = f()` is never taken to rule
None out where f may give it (`none-narrowing`); a generator function returns a generator whose elements are its
`yield`s (and the elements of what it `yield from`s); a `@contextmanager` function returns the
external manager object (`contextmanager.py`). The evaluator memoises each context's answer,
guards recursion and bounds the nesting (`MAX_INFER_DEPTH`, `MAX_RETURN_CONTEXTS`).
"""
from __future__ import annotations

import ast
import weakref
from typing import FrozenSet

from ..index.flow import completes
from ..index.scopes import FuncInfo
from ..values import NONE, Value, VSeq
from . import contextmanager, isinstance_narrowing
from .protocol import Inference, Scope
from .rule import Rule


class ReturnType(Rule):
    """the value a helper or factory returns (`make_layers(n, lambda idx, prefix: Layer(...))`
    returns the layers the lambda builds)"""

    name = "return-type"
    where = ("semantics/return_type.py", "infer/calls.py", "infer/evaluator.py")


def returned(ev: Inference, fn: FuncInfo, scope: Scope) -> FrozenSet[Value]:
    """What calling `fn` in `scope` (its body, in one calling context) returns."""
    tags: set[str] = set()
    out: set[Value] = set()
    dead = isinstance_narrowing.dead_nodes(ev, fn, scope)
    for expr in fn.returns():
        if dead and id(expr) in dead:
            continue  # a `return` in a branch `isinstance` rules out in this context
        out |= ev.eval(expr, scope, tags)
    if not isinstance(fn.node, ast.Lambda) and fn.is_generator():
        elems: set[Value] = set()
        for node in ast.walk(fn.node):
            if isinstance(node, ast.Yield) and node.value is not None:
                elems |= ev.eval(node.value, scope, tags)
            elif isinstance(node, ast.YieldFrom):
                elems |= ev.iterate(ev.eval(node.value, scope, tags), tags)
        out = {VSeq(frozenset(elems), "generator")}
    elif implicit_none(fn):
        out.add(NONE)
    managed = contextmanager.returned(fn)
    return managed if managed is not None else frozenset(out)


RULE = ReturnType()


def implicit_none(fn: FuncInfo) -> bool:
    """Whether calling `fn` may return None without a `return <value>` saying so: a bare
    `return`, or a body that may run to its end."""
    found = _IMPLICIT.get(fn)
    if found is None:
        node = fn.node
        if isinstance(node, ast.Lambda):
            found = False
        else:
            found = completes(node.body) or any(
                isinstance(n, ast.Return) and n.value is None for n in _own_nodes(node.body))
        _IMPLICIT[fn] = found
    return found


_IMPLICIT: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # FuncInfo -> implicit_none


def _own_nodes(stmts):
    """The nodes of `stmts`, not those of the functions, lambdas and classes they define."""
    stack = list(stmts)
    while stack:
        n = stack.pop()
        yield n
        for child in ast.iter_child_nodes(n):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                stack.append(child)
