"""`property`: reading an attribute that a class defines with `@property` runs its getter.

`obj.x` where `x` is a property of `obj`'s class calls the getter with `self` bound to `obj`,
and the read's value is what the getter returns (`functools.cached_property` the same, on the
first read). Read on the class itself, `C.x` is the property object, not a call.

The read is also an edge to the getter (`runs`), so what the getter calls is explored: before,
only its value was read, and a target reached inside a getter was a false "unreachable". The
exploration asks about each attribute read (`x.attr`, `self.a.attr`, `f().attr`, `xs[0].attr`:
`FuncInfo.attribute_reads`) whose name some file defines a property of
(`Project.property_names`); for a receiver known by a base type, each in-tree subclass's own
getter counts too.

A store `obj.x = v` runs the property's setter and `del obj.x` its deleter (`@x.setter`,
indexed as `Cls.x<setter:LINE>`: index/redefinitions.py); `obj.x += v` runs the getter, then
the setter. The exploration asks about the stores whose receiver is read off names and whose
name some file defines a setter or deleter for (`Project.accessor_names`).
"""
from __future__ import annotations

import ast
from typing import FrozenSet

from ..index import decorator_names
from ..index.scopes import FuncInfo, first_param
from ..values import Ctx, Value, VExt
from . import class_hierarchy
from .protocol import Inference
from .rule import Rule

DECORATORS = decorator_names.PROPERTY


class Property(Rule):
    """`@property` / `@cached_property` getters run on attribute access: the read's value is the
    getter's, and the read is an edge to the getter (each in-tree override's, for a receiver
    known by its base type); a store into it (`x.attr = v`) is an edge to its setter, a
    deletion to its deleter"""

    name = "property"
    where = ("semantics/properties.py", "infer/classes.py")


def is_property(fn: FuncInfo, name: str | None = None) -> bool:
    """Whether `fn`, read as the attribute `name`, is a property's getter: decorated as one, or
    the `fget` of `name = property(fget, ...)` in its class body (index/class_aliases.py)."""
    return any(d in DECORATORS for d in fn.decorators) or (
        name is not None and fn.cls is not None and fn.cls.made_properties.get(name) is fn)


def read(ev: Inference, fn: FuncInfo, owner: Value, tags: set[str]) -> FrozenSet[Value]:
    """`owner.x` for the getter `fn`: what it returns with `self` bound to `owner`."""
    tags.add(RULE.name)
    return ev.returns(fn, context(fn, owner))


def context(fn: FuncInfo, owner: Value) -> Ctx:
    """The getter `fn` run with `self` bound to `owner`."""
    return Ctx(fn.qual, ((first_param(fn) or "self", frozenset({owner})),))


def runs(ev: Inference, owners: FrozenSet[Value], attr: str) -> list[tuple[str, Ctx]]:
    """The in-tree getters reading `attr` on each of `owners` runs, each in its context: the
    class's own, and for an instance known by its base type each in-tree subclass's."""
    return [(fn.qual, context(fn, owner))
            for fn, owner in class_hierarchy.cone_methods(ev, owners, attr, keep=is_property)]


def store_calls(node: ast.Attribute) -> list[tuple[str, ast.Call]]:
    """The synthetic call a store `obj.x = v` (a deletion `del obj.x`) makes where `x` is a
    property with a setter (deleter): `obj.x()` placed at the store, of kind "setter"
    ("deleter")."""
    kind = "deleter" if isinstance(node.ctx, ast.Del) else "setter"
    return [(kind, ast.copy_location(ast.Call(func=node, args=[], keywords=[]), node))]


def accessor_runs(ev: Inference, owners: FrozenSet[Value], attr: str, kind: str) -> list[tuple[str, Ctx]]:
    """The in-tree setters (`kind` "setter") or deleters a store into `attr` on each of
    `owners` runs, each with `self` bound: the accessor the property's own class body defines
    beside the getter the MRO finds (a subclass redefining the property without a setter has
    none), and for an instance known by its base type each in-tree subclass's. The value
    stored is not bound (the setter's parameter is read as not given)."""
    out = []
    for getter, owner in class_hierarchy.cone_methods(ev, owners, attr, keep=is_property):
        fn = getter.cls.accessors.get((attr, kind)) if getter.cls is not None else None
        if fn is not None:
            out.append((fn.qual, context(fn, owner)))
    return out


ON_CLASS: FrozenSet[Value] = frozenset({VExt("builtins.property")})  # `C.x`: the property object


RULE = Property()
