"""`super`: `super()` / `super(C, self)` and the attributes read through it.

`super()` in a method of class `C` is a proxy for `self` that looks attributes up along
`type(self).__mro__` *after* `C`; `super(C, obj)` names both explicitly. A method found there
is bound to `self` (so `super().__init__(...)` runs the next `__init__` of the instance's MRO).
What no in-tree class after `C` defines falls to the external bases (`nn.Module.__init__`);
`super().__call__` of a module with no `__call__` of its own is `nn.Module.__call__`, which runs
`forward`.
"""
from __future__ import annotations

from typing import FrozenSet

from ..index.scopes import first_param
from ..values import EMPTY, Value, VClass, VExt, VFunc, VInst, VSuper, VUnknown, unknown
from . import container_subclass, mapping_mixin, module_call
from .protocol import Inference, Scope
from .rule import CallArgs, Rule

# What a dict/list subclass calls on super() to read its own items (transformers' ClassInstantier).
OBJECT_NEW = "builtins.object.__new__"
CONTAINER_ACCESS = {"__getitem__", "get", "pop", "values", "items", "__iter__", "setdefault"}
# `object`'s methods that run no code of the instance's class when called through super() (its
# `__str__` calls `__repr__`, `__format__` `__str__`, `__reduce_ex__` `__getstate__`...): what a
# read or store runs besides (a property's getter or setter, `__getattr__`) is placed at the
# read or store itself (properties.py, getattr_hook.py)
OBJECT_PLAIN = frozenset({"__getattribute__", "__setattr__", "__delattr__", "__init__", "__init_subclass__"})


class Super(Rule):
    """`super().m(...)` and `super(C, self).m(...)`; a mixin's `super().__getattribute__` /
    `__setattr__` / `__delattr__` / `__init__` / `__init_subclass__` is `object`'s where only `object` follows the mixin
    in the MRO of every class the instance may have (its in-tree subclasses included)"""

    name = "super"
    where = ("semantics/super_call.py", "semantics/builtins_model.py")


def made(ev: Inference, args: CallArgs, scope: Scope) -> FrozenSet[Value]:
    """The proxies a call of the builtin `super` gives: `super(C, obj)`, or `super()` in a
    method (the enclosing method's class and first parameter)."""
    if len(args.pos) == 2:
        out = set()
        for c in args.pos[0]:
            for s in args.pos[1]:
                if isinstance(c, VClass):
                    out.add(VSuper(c.qual, s))
        return frozenset(out) or frozenset({VUnknown("super() with arguments not resolved")})
    fn = scope.fn
    while fn is not None and fn.cls is None:
        fn = fn.parent
    if fn is None or fn.cls is None:
        return frozenset({VUnknown("super() outside a method")})
    self_vals = ev.lookup(first_param(fn), scope, set()) if first_param(fn) else EMPTY
    return frozenset(VSuper(fn.cls.qual, s) for s in self_vals) or frozenset({VSuper(fn.cls.qual, VInst(fn.cls.qual, False))})


def attribute(ev: Inference, v: VSuper, attr: str, tags: set[str]) -> FrozenSet[Value]:
    """`super().attr` for the proxy `v`."""
    cm = ev.classes
    tags.add(RULE.name)
    self_cls = v.self_val.qual if isinstance(v.self_val, (VInst, VClass)) else v.cls
    found = cm.method(self_cls, attr, after=v.cls)
    if found is None and self_cls != v.cls:
        found = cm.method(v.cls, attr, after=v.cls)
    if found is not None:
        fn, _ = found
        return cm.bind_method(fn, v.self_val, self_cls, tags, attr)
    held_methods = container_subclass.item_methods(v.self_val, attr)
    if held_methods:  # a dict/list subclass reading the items it was constructed with
        tags.add(container_subclass.RULE.name)
        return held_methods
    found_mixin = mapping_mixin.mixin(cm, v.self_val, attr)
    if found_mixin is not None:  # super().get(key, default) of a Mapping subclass: its __getitem__
        return frozenset({found_mixin})
    if attr in CONTAINER_ACCESS and cm.is_container(v.cls):
        # a dict/list subclass reading its own items that it does not hold (container_subclass.py
        # says when it does): unknown, never "external"
        return frozenset({VUnknown(f"item of a {_short(v.cls)} container")})
    if attr == "__call__" and cm.is_module(self_cls):
        # super().__call__(...) from an overriding __call__ runs nn.Module.__call__: forward
        fwd = cm.method(self_cls, "forward")
        if fwd is not None:
            tags.add(module_call.RULE.name)
            return frozenset({VFunc(fwd[0].qual, v.self_val)})
    ext = cm.external_bases(v.cls)
    if ext:
        return frozenset({VExt(f"{ext[0]}.{attr}")})
    if attr == "__new__" and not cm.unknown_bases(v.cls):
        # nothing after the class defines __new__ and nothing from outside but `object` and the
        # markers is in its MRO: `super().__new__(cls)` is object.__new__ (builtins_model)
        return frozenset({VExt(OBJECT_NEW)})
    if attr in OBJECT_PLAIN and _only_object_after(cm, v, attr):
        # a mixin whose only base is `object`, in the MRO of every class `self` may be:
        # transformers' HeterogeneousConfigMixin.__getattribute__ under PreTrainedConfig
        return frozenset({VExt(f"builtins.object.{attr}")})
    if attr in OBJECT_PLAIN:
        return unknown(f"super() of {_short(v.cls)}: a class of the instance's MRO after it may define '{attr}'")
    return unknown(f"super() of {_short(v.cls)} has no attribute '{attr}'")


def _only_object_after(cm, v: VSuper, attr: str) -> bool:
    """Whether nothing but `object` follows `v.cls` in the MRO of every class the proxy's `self`
    may be an instance of: its class, and its in-tree subclasses unless it is exact (`class
    Odd(Config, Late)` puts `Late` after a mixin of `Config`). A base from outside the tree, or
    one not resolved, anywhere in one of those MROs may sit after `v.cls`: then not."""
    s = v.self_val
    base, exact = (s.qual, s.exact) if isinstance(s, VInst) else (s.qual if isinstance(s, VClass) else v.cls, False)
    for k in [base] if exact else [base, *cm.subclasses(base)]:
        order = cm.mro(k)
        if v.cls not in order or cm.external_bases(k) or cm.unknown_bases(k):
            return False
        for t in order[order.index(v.cls) + 1:]:
            info = cm.info(t)
            if info is None or attr in info.methods or attr in info.attrs:
                return False
    return True


def _short(qual: str) -> str:
    return qual.rsplit(".", 1)[-1]


RULE = Super()
