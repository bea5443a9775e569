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
from ..values import EMPTY, Value, VClass, VFunc, VInst, VPartial
from .protocol import Inference, Scope
from . import descriptors
from .rule import CallArgs, Dispatch, Rule


class Decorator(Rule):
    """the callee is decorated: external decorators (`@torch.no_grad()` and the like) keep the
    function itself; an in-tree decorator's return value is what the name binds (`@dec def f` is
    `f = dec(f)`), a method's too (the wrapper runs beside the method: `method_wrappers`); the
    application `dec(f)` is itself an edge"""

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


def method_wrappers(ev: Inference, fn: FuncInfo, tags: set[str]) -> FrozenSet[Value]:
    """What the in-tree decorators of method `fn` bind its name to in the class body, other
    than `fn` itself: a wrapper (`@can_return_tuple`, `@traced`), a callable object, a partial.
    A call of the method runs that, which runs what the wrapper calls before and after the
    method. Before, a method's decorators were not applied at all (a function's were): a
    target reached inside a wrapper was a false "unreachable". Empty for a method with no
    decorator but Python's own (`NON_CALLING`), and for static and class methods and
    properties."""
    if fn.cls is None or fn.kind != "method" or all(d in NON_CALLING for d in fn.decorators):
        return EMPTY
    plain = VFunc(fn.qual)
    made = decorated(ev, fn, frozenset({plain}), Scope(fn.cls.module, cls=fn.cls), tags)
    return frozenset(v for v in made if v != plain)


def bound_wrappers(ev: Inference, wrappers: FrozenSet[Value], owner: Value, tags: set[str]) -> FrozenSet[Value]:
    """`method_wrappers` read on the instance `owner`: a plain function bound to it (a
    method); an object whose class has an in-tree `__get__` (a descriptor) what that returns,
    given `owner` and its class (SGLang's `eager_on_graph`: a callable binding the instance;
    `descriptors.values`); any other callable object, or a partial, as it is (called without
    the instance)."""
    out: set[Value] = set()
    rest: set[Value] = set()
    for w in wrappers:
        if isinstance(w, VFunc) and w.self_val is None:
            out.add(VFunc(w.qual, owner, w.closure))
        else:
            rest.add(w)
    if rest:
        cls_qual = owner.qual if isinstance(owner, (VInst, VClass)) else ""
        out |= descriptors.values(ev, frozenset(rest), owner, cls_qual, tags)
    return frozenset(out)


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
