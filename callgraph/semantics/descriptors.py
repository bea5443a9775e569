"""`descriptor`: an attribute a class body binds to an object whose class defines `__get__`,
`__set__` or `__delete__` runs those on a read, a store or a deletion through an instance.

`class Holder: d = Desc()` makes `h.d` call `Desc.__get__(descr, h, Holder)` and `Holder.d`
call `Desc.__get__(descr, None, Holder)`; the read's value is what `__get__` returns. `h.d = v`
calls `Desc.__set__(descr, h, v)` and `del h.d` `Desc.__delete__(descr, h)`. The same holds for
a method whose in-tree decorator is such a class (transformers' `@classproperty`, a subclass of
`property` whose `__get__` runs `self.fget(owner_cls)`): its value is read by
`decorators.bound_wrappers`, its `__get__` is an edge here. Before, the object itself was the
read's value and none of its methods an edge: a target reached inside `__get__` or `__set__` was
a false "unreachable".

The exploration asks about the reads and stores whose name is one a class body may bind to such
an object (`Project.descriptor_names`: `x = Desc(...)`, `@Desc def x`, for the classes of the
scope that define one of the three, and their subclasses by name; empty where the scope defines
none, as on most trees). For a receiver known by its base type, each in-tree subclass that binds
the name in its own body counts too. The value stored is not bound (`__set__`'s parameter reads
as not given). Not followed: a descriptor made by a function that returns one (only the
classes are matched by name) and a descriptor set on the class after its body ran.
"""
from __future__ import annotations

from typing import FrozenSet

from ..values import NONE, Ctx, Value, VClass, VInst, VUnknown
from .binding import bind
from .protocol import Scope
from .rule import CallArgs, Rule

PROPERTY_BASE = "builtins.property"
PROPERTY_PARTS = ("fget", "fset", "fdel")
# implicit call kind (explore.py) -> the descriptor method it runs
KINDS = {"get": "__get__", "set": "__set__", "delete": "__delete__"}


class Descriptor(Rule):
    """an attribute bound in a class body to an instance of an in-tree class defining
    `__get__` / `__set__` / `__delete__` (or a method decorated by such a class): reading it runs
    `__get__` (whose return is the read's value), storing into it `__set__`, deleting it
    `__delete__`"""

    name = "descriptor"
    where = ("semantics/descriptors.py", "infer/classes.py", "semantics/decorators.py", "explore.py")


RULE = Descriptor()


def values(ev, found: FrozenSet[Value], owner: Value | None, cls_qual: str, tags: set[str]) -> FrozenSet[Value]:
    """The class-body values `found` of an attribute read on `owner` (an instance; None for a
    read on the class `cls_qual`): each descriptor replaced by what its `__get__` returns."""
    if not any(v.__class__ is VInst for v in found):
        return found
    out: set[Value] = set()
    for v in found:
        get = ev.classes.method(v.qual, "__get__") if v.__class__ is VInst else None
        if get is None:
            out.add(v)
            continue
        tags.add(RULE.name)
        out |= ev.returns(get[0], _context(get[0], v, owner, cls_qual, "__get__"))
    return frozenset(out)


def runs(ev, owners: FrozenSet[Value], attr: str, kind: str) -> list[tuple[str, Ctx]]:
    """The in-tree `__get__` (kind "get"), `__set__` ("set") or `__delete__` ("delete") that
    reading, storing into or deleting `attr` on each of `owners` runs, each in its context."""
    dunder = KINDS[kind]
    cm = ev.classes
    out: list[tuple[str, Ctx]] = []
    for v in owners:
        if v.__class__ is VInst:
            owner: Value | None = v
            classes = [v.qual] if v.exact else [v.qual] + [s for s in cm.subclasses(v.qual) if _binds(cm, s, attr)]
        elif v.__class__ is VClass and kind == "get":  # a store on the class replaces the attribute
            owner, classes = None, [v.qual]
        else:
            continue
        for qual in classes:
            on = owner if qual == v.qual else VInst(qual, exact=False)  # a subclass's: its instances
            for d in _held(ev, qual, attr):
                fn = cm.method(d.qual, dunder)
                if fn is not None:
                    out.append((fn[0].qual, _context(fn[0], d, on, qual, dunder)))
    return out


def property_parts(cm, qual: str, args: CallArgs) -> tuple:
    """The `VInst.init` entry for `qual(args)` where `qual` subclasses `property` and keeps its
    `__init__` (transformers' `classproperty`): the functions given as `fget`, `fset`, `fdel`;
    () for any other class."""
    if PROPERTY_BASE not in cm.external_bases(qual) or args.has_star or args.has_kw_star:
        return ()
    given = dict(zip(PROPERTY_PARTS, args.pos))
    given.update((k, v) for k, v in args.kw.items() if k in PROPERTY_PARTS)
    return tuple((k, given.get(k, frozenset({NONE}))) for k in PROPERTY_PARTS)


def property_attribute(cm, v: VInst, attr: str) -> FrozenSet[Value] | None:
    """`v.fget` (`fset`, `fdel`) of an instance of an in-tree subclass of `property`: the
    function it was made with; unknown where that was not seen (an `__init__` of its own, an
    instance known by its base type); None for another attribute or class. Read as the outside
    `property.fget`, calling it was a leaf, and the getter a `__get__` runs was never followed."""
    if attr not in PROPERTY_PARTS or PROPERTY_BASE not in cm.external_bases(v.qual):
        return None
    held = dict(v.init) if v.exact else {}
    if attr in held:
        return held[attr]
    return frozenset({VUnknown(f"'{attr}' of a {v.qual.rsplit('.', 1)[-1]} (a property) not known")})


def _binds(cm, qual: str, attr: str) -> bool:
    info = cm.info(qual)
    return info is not None and (attr in info.attrs or attr in info.methods)


def _held(ev, qual: str, attr: str) -> list[VInst]:
    """The descriptors the class body of `qual` (or of its MRO) binds to `attr`: the objects an
    assignment gives it, or the decorators' products of a method of that name."""
    cm = ev.classes
    found = cm.method(qual, attr)
    if found is not None:
        made = cm.wrappers(found[0], set())
    else:
        ca = cm.class_attr(qual, attr)
        if ca is None:
            return []
        made = ev.bindings(ca[1], Scope(ca[0].module, cls=ca[0]), set(), ("clsattr", ca[0].qual, attr))
    return [d for d in made if d.__class__ is VInst]


def _context(fn, descr: VInst, owner: Value | None, cls_qual: str, dunder: str) -> Ctx:
    """`fn` (the descriptor's `dunder`) run with `self` the descriptor and the instance (None on
    the class) and its class bound; the value stored by `__set__` is not bound."""
    obj = frozenset({owner}) if owner is not None else frozenset({NONE})
    args = [obj, frozenset({VClass(cls_qual)})] if dunder == "__get__" else [obj]
    return bind(fn, descr, CallArgs(args), None)
