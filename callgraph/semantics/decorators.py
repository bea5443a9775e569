"""Decorators: `@dec def f` binds `f = dec(f)`.

An in-tree decorator runs at definition time and the name is bound to what it returns (a
wrapper, a registered copy, an object with `__call__`); the application `dec(f)` is itself a call
(explore.py records it as an implicit edge). External decorators (`@torch.no_grad()`,
`@functools.lru_cache`) and in-tree ones whose result is not an in-tree callable keep the
function itself, which is what calling the name runs in practice.
"""
from __future__ import annotations

import ast
from typing import FrozenSet

from ..index.decorator_names import NON_CALLING, decorator_name
from ..index.scopes import FuncInfo
from ..values import Value, VClass, VFunc, VInst, VPartial
from .protocol import Inference, Scope
from .rule import CallArgs, Dispatch, Rule


class Decorator(Rule):
    """the callee is decorated: external decorators (`@torch.no_grad()` and the like) keep the
    function itself; an in-tree decorator's return value is what the name binds (`@dec def f` is
    `f = dec(f)`); the application `dec(f)` is itself an edge"""

    name = "decorator"
    where = ("semantics/decorators.py", "explore.py")


def decorated(ev: Inference, fn: FuncInfo, value: FrozenSet[Value], scope: Scope, tags: set[str]) -> FrozenSet[Value]:
    """The values the name of decorated def `fn` binds: each in-tree decorator's return value,
    applied innermost first, starting from `value` (the function itself)."""
    for dec in reversed(fn.node.decorator_list):
        if decorator_name(dec) in NON_CALLING:
            continue
        dvals = ev.eval(dec, scope, set())
        if not any(isinstance(d, (VFunc, VClass)) for d in dvals):
            continue
        d = Dispatch()
        out: set[Value] = set()
        for dv in dvals:
            if isinstance(dv, (VFunc, VClass)):
                out |= ev.calls.call_value(dv, CallArgs([value]), dec, scope, d, set())
        for t in d.returning:
            target = ev.p.functions.get(t.fn)
            if target is not None:
                out |= ev.returns(target, t.ctx)
        made = frozenset(v for v in out if isinstance(v, (VFunc, VInst, VPartial)))
        if made:
            tags.add(RULE.name)
            value = made
    return value


RULE = Decorator()


def applications(node: ast.AST) -> list[ast.Call]:
    """The calls a nested def's decorators make when the def runs, innermost first: `@a @b def f`
    is `b(f)`, then `a(b(f))`, each a synthetic call placed at its decorator; none for a
    decorator Python applies without a call edge here (`NON_CALLING`), nor for any other node."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return []
    out: list[ast.Call] = []
    fn_value: ast.expr = ast.Name(id=node.name, ctx=ast.Load())
    for dec in reversed(node.decorator_list):
        if decorator_name(dec) in NON_CALLING:
            continue
        call = ast.Call(func=dec, args=[fn_value], keywords=[])
        out.append(ast.copy_location(call, dec))
        fn_value = call
    return out
