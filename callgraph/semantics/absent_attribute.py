"""`absent-attribute`: an attribute no code can give an exact instance of a plain in-tree class is absent.

Reading it raises AttributeError, so a call of it runs nothing. transformers' `Cache.update`
calls `self.layers[layer_idx].update(...)` where a layer may be an exact `LinearAttentionLayer`
(made by `self.layer_class_to_replicate()`), which has no `update`: at run time that call
raises; before, the read was unknown ("has no attribute") and a blocker of every negative
through a cache.

An instance known only by its class as a base type (`x: "Tensor | QuantizedActivation"`, vLLM's
activation a fused kernel hands to a linear layer; `exact=False`) may be of that class or of any
in-tree subclass: the attribute is absent on it when it is absent on every one of them (a
subclass that defines it is class-hierarchy's, read before this).

The attribute is absent only when all of this holds, else the read stays unknown as before:
- the instance is of exactly that class (made by name), or known by it as a base type and each
  in-tree subclass of it meets every condition below too (subclasses defined outside the
  analysed roots are not seen, as for class-hierarchy's dispatch), one of them at least
  concrete: where every class of the cone is abstract (`abstract-class`), no in-tree class can
  be there, so the instance is of a class from outside, which may set it;
- no class of its MRO has a base from outside the tree (but the markers `object`, `abc.ABC`,
  `typing.Generic`) or a base not resolved: an outside base can have the attribute, set it, or
  answer `__getattr__`; nor defines `__getattr__` / `__getattribute__`;
- no class of its MRO defines or assigns the name (class body, methods' `self.x = v`: the
  class model looked first for the class itself), and no store of the scope can set it on such
  an instance (attribute-store: `obj.x = v`, `setattr(obj, "x", v)`, computed names that can
  spell it, writes into `__dict__`, store functions used as values, unreadable files; for an
  instance known by its base type, a store into any method's `self`);
- no code of the scope stores `__class__` (an object's class changed after it was made);
- no class of its MRO has a class decorator, but `dataclasses.dataclass` for a name that is not
  a dunder (it adds `__init__`, `__eq__`, ... and `__match_args__`, nothing else).
Stores made by code outside the analysed roots are not seen, as for every store the analysis reads.
"""
from __future__ import annotations

from typing import FrozenSet

from ..values import Value, VExt, VInst
from . import abstract_class, attribute_store
from .computed_getattr import answers_any_name
from .protocol import Scope
from .rule import Rule

INERT_DECORATORS = frozenset({"dataclasses.dataclass"})


class AbsentAttribute(Rule):
    """an attribute that no class of its MRO defines and no store of the scope can set, read
    on an exact instance of an in-tree class with nothing from outside in its MRO (no
    `__getattr__`), or on one known by it as a base type whose in-tree subclasses all lack it
    too, raises AttributeError: the read has no value and a call of it runs nothing
    (transformers' `LinearAttentionLayer` has no `update`, vLLM's `QuantizedActivation` no `view`)"""

    name = "absent-attribute"
    where = ("semantics/absent_attribute.py", "infer/classes.py", "semantics/attribute_store.py")
    on_edges = False


RULE = AbsentAttribute()


def values(ev, v: VInst, attr: str, tags: set[str]) -> FrozenSet[Value] | None:
    """What `attr` of `v` is when the class model found nothing: nothing (absent), what the
    scope's stores put there, or None when neither can be told (the caller keeps its unknown).
    The caller has checked that no class of the MRO defines or assigns it."""
    cm = ev.classes
    if not _closed(ev, v.qual, attr):
        return None
    if not v.exact:  # any in-tree subclass may be there: each must lack it as well
        own = set(cm.mro(v.qual))
        subs = cm.subclasses(v.qual)
        for sub in subs:
            if not _closed(ev, sub, attr) or _gives(cm, sub, own, attr):
                return None
        if all(abstract_class.abstract(ev, k) for k in (v.qual, *subs)):
            return None  # no in-tree class of it can be made: what is there comes from outside
    if ev.p.attribute_stored("__class__"):
        return None
    stored = attribute_store.values(ev, v, attr, tags)
    if stored is not None:
        return stored  # the stores' values, or an unknown naming the store that opens it
    tags.add(RULE.name)
    return frozenset()


def _closed(ev, qual: str, attr: str) -> bool:
    """Whether nothing from outside the tree can give an instance of `qual` the attribute: no
    base from outside or not resolved, no `__getattr__`, no class decorator that may add it."""
    cm = ev.classes
    if cm.external_bases(qual) or cm.unknown_bases(qual):
        return False
    infos = [cm.info(k) for k in cm.mro(qual)]
    if any(info is None for info in infos) or answers_any_name(cm, qual):
        return False
    return not any(info.node.decorator_list and not _inert(ev, info, attr) for info in infos)


def _gives(cm, sub: str, own: set, attr: str) -> bool:
    """Whether a class of `sub`'s MRO outside `own` (the base's MRO, which the caller read)
    defines or assigns `attr`: in its body, as a method, or as `self.attr = ...` in a method."""
    for k in cm.mro(sub):
        info = cm.info(k)
        if k not in own and (attr in info.methods or attr in info.attrs or attr in info.self_attrs()):
            return True
    return False


def _inert(ev, info, attr: str) -> bool:
    """Whether every class decorator of `info` adds no attribute called `attr`."""
    if attr.startswith("__"):
        return False
    scope = Scope(info.module)
    for dec in info.node.decorator_list:
        node = dec.func if dec.__class__.__name__ == "Call" else dec  # `@dataclass(frozen=True)`
        found = ev.eval(node, scope, set())
        if not found or not all(isinstance(v, VExt) and v.name in INERT_DECORATORS for v in found):
            return False
    return True
