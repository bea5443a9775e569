"""`class-of`: `obj.__class__` and `type(obj)` are the class the instance was made from.

SGLang, vLLM and transformers read an instance's class back to call a classmethod or build a
sibling (`type(self)(config)`, `self.__class__._from_pickle(...)`). Before, `self.__class__`
was read like any attribute: absent on a class with no base from outside (no class of the tree
defines `__class__`: `object` gives it), `torch.nn.Module.__class__` (an external, nothing run)
on a module; `type(x)` of an instance known by its base type was that base class alone. Each
answered a false "unreachable" where the subclass's classmethod reaches the target.

The class of an instance is:
- made by name (`exact`): that class;
- known by a base type (an annotation, an unbound `self`): that class or any in-tree subclass
  of it (subclasses defined outside the analysed roots are not seen, as for class-hierarchy's
  dispatch); past `MAX_CLASSES` of them, the base class and an unknown naming the base and
  the count (each class would be its own value in every set the read flows into);
- and, where some code of the scope stores `__class__` (`obj.__class__ = Other`, vLLM and SGLang
  swap a module's class), what those stores put there too (attribute-store; an unknown naming
  the store where it cannot tell).
A classmethod read on an instance is bound to each of these classes, so `cls` inside it is the
instance's class, not the class that defines the method.

`__class__` is taken to be `object`'s on every in-tree class, outside bases included (`nn.Module`
does not redefine it; a base that does, as `unittest.mock` does, is not read). `__name__`,
`__qualname__` and `__module__` of an in-tree class are strings (`Lit("str")`: one value, not
one per class).
"""
from __future__ import annotations

from typing import FrozenSet

from ..values import Lit, Value, VClass, VConst, VInst, VUnknown
from . import attribute_store
from .rule import Rule

# Beyond this many classes (the base and its in-tree subclasses), the class of an instance
# known by its base type is unknown.
MAX_CLASSES = 16

# Attributes of every class that hold its names, read as strings whose text is not kept.
NAME_ATTRIBUTES = frozenset({"__name__", "__qualname__", "__module__"})
STR = VConst(Lit("str"))


class ClassOf(Rule):
    """`obj.__class__` and `type(obj)` are the class the instance was made from: the class
    itself for an instance made by name, that class or any in-tree subclass of it for one known
    by its base type (an annotation, an unbound `self`), and what the scope's `__class__` stores
    put there; a classmethod read on an instance gets `cls` that class (`type(self).make()`,
    `self.__class__(config)`, `b.make()` on `b: Base` running a subclass's `cls.build`)"""

    name = "class-of"
    where = ("semantics/class_of.py", "semantics/builtins_model.py", "infer/classes.py")
    on_edges = False  # it makes values; the hop is named by the rule that calls the value


RULE = ClassOf()


def classes(ev, v: VInst, tags: set[str]) -> FrozenSet[Value]:
    """The classes `v` can be an instance of, as values (`VClass`), or an unknown saying why not."""
    tags.add(RULE.name)
    if v.exact:
        out: set[Value] = {VClass(v.qual)}
    else:
        subs = ev.classes.subclasses(v.qual)
        if len(subs) + 1 > MAX_CLASSES:
            short = v.qual.rsplit(".", 1)[-1]
            out = {VClass(v.qual), VUnknown(f"the class of a {short} known by its base type: it or any "
                                            f"of its {len(subs)} in-tree subclasses")}
        else:
            out = {VClass(v.qual), *(VClass(q) for q in subs)}
    if ev.p.attribute_stored("__class__"):
        stored = attribute_store.values(ev, v, "__class__", tags)
        if stored is not None:
            out |= stored
    return frozenset(out)


def class_attribute(attr: str) -> FrozenSet[Value] | None:
    """What `attr` of an in-tree class is when the class itself does not define it: a string
    for the attributes holding its names, else None (the caller's lookup holds)."""
    return frozenset({STR}) if attr in NAME_ATTRIBUTES else None
