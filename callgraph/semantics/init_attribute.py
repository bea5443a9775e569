"""`init-attribute`: `self.x` is what the methods that run on the instance assign to it.

Python looks an instance attribute up in the instance's `__dict__`, filled by every
`self.x = ...` (and `setattr(self, "x", ...)`) that ran. Which ran is not known statically, so
`self.x` is the union of every such assignment in every method that can run on an instance of
the class: conditional ones and `x = None` placeholders included, stores into a container
(`self.layers.append(...)`) applied to it. A method overridden along the MRO runs only if the
override chains to it (`super().__init__(...)`, `Base.__init__(self, ...)`): EAGLE3 drafters
call `nn.Module.__init__` directly, so their base's `__init__` assigns nothing to them.
"""
from __future__ import annotations

import ast

from ..index.scopes import first_param
from ..values import Value, VClass, VInst
from . import init_chain
from .protocol import Inference, Scope
from .rule import Rule


class InitAttribute(Rule):
    """`self.x` typed from every `self.x = ...` / `setattr(self, "x", ...)` in the methods that
    run on the instance (conditional and `None` assignments included; a base's `__init__` counts
    only if chained to with `super().__init__` or `Base.__init__(self)`); `x: T` class
    annotations (dataclass fields)"""

    name = "init-attribute"
    where = ("semantics/init_attribute.py", "infer/classes.py")


def live_methods(ev: Inference, qual: str) -> frozenset[str]:
    """Methods that can run on an instance of `qual`: the MRO's choice for each name, plus
    those it chains to with `super().name(...)` or `Base.name(self, ...)`."""
    cm = ev.classes
    names: set[str] = set()
    for k in cm.mro(qual):
        info = cm.info(k)
        if info is not None:
            names.update(info.methods)
    live: set[str] = set()
    for name in names:
        todo = [cm.method(qual, name)]
        while todo:
            found = todo.pop()
            if found is None or found[0].qual in live:
                continue
            fn, owner = found
            live.add(fn.qual)
            for call in fn.calls():
                f = call.func
                if not isinstance(f, ast.Attribute):
                    continue
                if isinstance(f.value, ast.Call) and isinstance(f.value.func, ast.Name) and f.value.func.id == "super":
                    todo.append(cm.method(qual, f.attr, after=owner))
                elif call.args and isinstance(call.args[0], ast.Name) and call.args[0].id == first_param(fn):
                    for base in ev.eval(f.value, Scope(fn.module), set()):
                        if isinstance(base, VClass) and base.qual in cm.mro(qual):
                            todo.append(cm.method(base.qual, f.attr))
    return frozenset(live)


def assigned(ev: Inference, v: VInst, attr: str, out: set[Value], tags: set[str],
             read: frozenset[str] = frozenset()) -> set[Value]:
    """`out` (what the class itself gives `v.attr`) with what the live methods assign to it.
    Each assignment is read in the context of its method with `self` bound to `v` (and, for the
    `__init__` that made `v`, the constructor's arguments, `v.init`; for a base's `__init__`,
    those its subclass passes up: `init_chain.py`). The methods in `read` are left out: the
    caller has their assignments already, read on a value that covers `v`."""
    cm = ev.classes
    live = cm.effective_methods(v.qual)
    init = cm.method(v.qual, "__init__")  # the instance's own __init__, given v.init
    items = []
    for k in cm.mro(v.qual):
        info = cm.info(k)
        if info is None:
            continue
        for fn, binding in info.self_attrs().get(attr, ()):
            if fn.qual not in live:
                continue  # overridden and never chained to: it does not run on this class
            if fn.qual in read:
                continue  # the caller read it on a value that covers `v`
            tags.add(RULE.name)
            for ctx in init_chain.contexts_on(ev, v, fn, init, tags):
                if binding.kind == "item":
                    items.append((binding, Scope(fn.module, fn, ctx)))
                else:
                    out |= ev.binding_value(binding, Scope(fn.module, fn, ctx), tags)
    if items:
        out = ev.fill(out, items, tags)
    return out


RULE = InitAttribute()
