"""`class-hierarchy`: a receiver known only by a base type may be any in-tree subclass.

An instance read off an annotation (`encoder: PreTrainedModel`), or one Jedi names from one, is
at run time an instance of that class or of any subclass, so a method call or a module call on
it may run every override the tree defines. Such a value is not `exact` (`values.VInst`); for
it the lookup adds, to what the base class itself gives, each in-tree subclass (transitively,
found by `Project.subclass_candidates`' name search, then confirmed by the MRO) that defines
the attribute itself. An exact instance (one the tree constructs) runs its own class's only.
"""
from __future__ import annotations

from typing import FrozenSet

from ..values import Value, VInst
from .rule import Rule


class ClassHierarchy(Rule):
    """a receiver known only by a base type (an annotation) dispatches to every override in the tree"""

    name = "class-hierarchy"
    where = ("semantics/class_hierarchy.py", "infer/classes.py", "semantics/module_call.py", "semantics/oracle.py")


RULE = ClassHierarchy()


def overriders(ev, qual: str, names: tuple[str, ...]) -> list[str]:
    """In-tree subclasses of `qual` (transitively) that define one of `names` themselves
    (`ClassModel.overriders` memoises this)."""
    p, classes = ev.p, ev.classes
    out = []
    for path in p.subclass_candidates(qual.rsplit(".", 1)[-1], names):
        mod = p.module_of_path(path)
        if mod is None:
            continue
        for info in p.classes_in(mod):
            q = info.qual
            if q != qual and any(n in info.methods for n in names) and qual in classes.mro(q):
                out.append(q)
    return out


def receivers(classes, v: VInst, names: tuple[str, ...]) -> list[str]:
    """The classes whose `names` a call on `v` may run: its own, then, when `v` is known only
    by its base type, each subclass that overrides one of them."""
    return [v.qual] + ([] if v.exact else classes.overriders(v.qual, names))


def attribute(classes, v: VInst, attr: str, tags: set[str]) -> FrozenSet[Value]:
    """`v.attr` for `v` known by its base type: each override's method, bound to an exact
    instance of the subclass that defines it."""
    out: set[Value] = set()
    if v.exact:
        return frozenset()
    for sub in classes.overriders(v.qual, (attr,)):
        found = classes.method(sub, attr)
        if found is not None and found[1] == sub:
            tags.add(RULE.name)
            out |= classes.bind_method(found[0], VInst(sub, exact=True), sub, tags)
    return frozenset(out)
