"""`property`: reading an attribute that a class defines with `@property` runs its getter.

`obj.x` where `x` is a property of `obj`'s class calls the getter with `self` bound to `obj`,
and the read's value is what the getter returns (`functools.cached_property` the same, on the
first read). Read on the class itself, `C.x` is the property object, not a call.
"""
from __future__ import annotations

from typing import FrozenSet

from ..index import decorator_names
from ..index.scopes import FuncInfo, first_param
from ..values import Ctx, Value, VExt
from .protocol import Inference
from .rule import Rule

DECORATORS = decorator_names.PROPERTY


class Property(Rule):
    """`@property` / `@cached_property` getters run on attribute access"""

    name = "property"
    where = ("semantics/properties.py", "infer/classes.py")


def is_property(fn: FuncInfo) -> bool:
    return any(d in DECORATORS for d in fn.decorators)


def read(ev: Inference, fn: FuncInfo, owner: Value, tags: set[str]) -> FrozenSet[Value]:
    """`owner.x` for the getter `fn`: what it returns with `self` bound to `owner`."""
    tags.add(RULE.name)
    return ev.returns(fn, Ctx(fn.qual, ((first_param(fn) or "self", frozenset({owner})),)))


ON_CLASS: FrozenSet[Value] = frozenset({VExt("builtins.property")})  # `C.x`: the property object


RULE = Property()
