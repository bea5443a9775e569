"""`class-hierarchy`: a receiver known only by a base type may be any in-tree subclass.

An instance read off an annotation (`encoder: PreTrainedModel`), or one Jedi names from one, is
at run time an instance of that class or of any subclass, so a method call or a module call on
it may run every override the tree defines. Such a value is not `exact` (`values.VInst`); for
it the lookup adds, to what the base class itself gives, each in-tree subclass (transitively,
found by `Project.subclass_candidates`' name search, then confirmed by the MRO) that defines
the attribute itself or takes it from a base beside it (`class Mixed(Other, Base)`); each runs
with `self` an instance of that subclass or of any below it. Its attributes are, beside what
the base's own code gives, what each subclass's code assigns (`TargetBlock.__init__` setting
`self.proj = Target()` changes what the inherited `Block.forward` calls; reading the base's
assignments alone was a false "unreachable") and what a base's `__init__` that runs on the
subclass only assigns (chained to past an override that skips it): `assigned_below`, read with
`self` an instance of the subclass; the base's own stores are read once, on the value itself.
An exact instance (one the tree constructs) runs its own class's only. A `type[X]` annotation
names the class `X` or any in-tree subclass of it: calling it constructs one of them
(transformers' `self.layer_class_to_replicate()`, a `type[CacheLayerMixin |
LinearAttentionCacheLayerMixin]`).
"""
from __future__ import annotations

from typing import FrozenSet

from ..values import Value, VClass, VInst, VUnknown
from . import init_attribute
from .protocol import Scope
from .rule import Rule


class ClassHierarchy(Rule):
    """a receiver known only by a base type (an annotation) dispatches to every override in the tree,
    and to a method a subclass takes from a base beside it (`class Mixed(Other, Base)`); an
    override runs with `self` any instance of its class or below, so what it calls on `self`
    dispatches to their overrides too; its attributes hold what each subclass's own code assigns
    them (`self.proj = ...` in a subclass's `__init__`, a class attribute it redefines) beside what
    the base gives; a `type[X]` annotation is the class `X` or any in-tree subclass of it
    (calling it constructs one); `x.__call__` read on it is also each `nn.Module` subclass's
    `forward` (one with no in-tree `__call__` takes torch's, which runs it: a mixin's
    `self.__call__`)"""

    name = "class-hierarchy"
    where = ("semantics/class_hierarchy.py", "infer/classes.py", "semantics/module_call.py", "semantics/oracle.py")


RULE = ClassHierarchy()


def overriders(ev, qual: str, names: tuple[str, ...]) -> list[str]:
    """In-tree subclasses of `qual` (transitively) on which one of `names` is not what `qual`
    itself gives: defined by the subclass, or taken from a base outside `qual`'s hierarchy
    (`class Mixed(Other, Base)` runs `Other.update` on a value typed `Base`) (`ClassModel.overriders`
    memoises this). A subclass inheriting the method from another subclass is not listed: that
    one is, and it runs with `self` known only by its type (`receiver`), so the overrides below
    it of what it calls on `self` count too."""
    p, classes = ev.p, ev.classes
    out = []
    for path in p.subclass_candidates(qual.rsplit(".", 1)[-1], names):
        mod = p.module_of_path(path)
        if mod is None:
            continue
        for info in p.classes_in(mod):
            q = info.qual
            if q != qual and qual in classes.mro(q) and (
                    any(n in info.methods for n in names) or any(_from_sibling(classes, qual, q, n) for n in names)):
                out.append(q)
    return out


def cone_methods(ev, owners: FrozenSet[Value], name: str, keep=None) -> list:
    """(method, owner) for the in-tree method `name` (those `keep(method, name)` accepts) that an implicit call
    runs on each instance among `owners`: its class's, and for one known by its base type each
    in-tree subclass's override, bound to an instance of that subclass or below."""
    cm = ev.classes
    out = []
    for v in owners:
        if v.__class__ is not VInst:
            continue
        found = cm.method(v.qual, name)
        if found is not None and (keep is None or keep(found[0], name)):
            out.append((found[0], v))
        if not v.exact:
            for sub in cm.overriders(v.qual, (name,)):
                below = cm.method(sub, name)
                if below is not None and (keep is None or keep(below[0], name)):
                    out.append((below[0], VInst(sub, exact=False)))
    return out


def module_calls(classes, v: VInst, tags: set[str]) -> FrozenSet[Value]:
    """`v.__call__` for `v` known by its base type: each in-tree subclass that is an
    `nn.Module` and has no in-tree `__call__` takes torch's, which runs the subclass's
    `forward`: that `forward`, bound to an instance of the subclass or below (`receiver`). A
    mixin that is no module itself (transformers' `GenerationMixin.get_compiled_call` returns
    `self.__call__`, which `_sample` and `_prefill` call) read only its own and the in-tree
    `__call__` overrides: "has no attribute '__call__'", or a few overrides' edges where every
    model's `forward` runs. (A subclass with an in-tree `__call__` is `attribute`'s.)"""
    if v.exact:
        return frozenset()
    own = set(classes.mro(v.qual))
    out: set[Value] = set()
    for sub in classes.overriders(v.qual, ("forward",)):
        if classes.method(sub, "__call__") is not None or not classes.is_module(sub):
            continue
        fwd = classes.method(sub, "forward")
        if fwd is not None and fwd[1] not in own:
            tags.add(RULE.name)
            out |= classes.bind_method(fwd[0], receiver(sub), sub, tags)
    return frozenset(out)


def assigned_below(classes, v: VInst, attr: str, tags: set[str]) -> FrozenSet[Value]:
    """`v.attr` for `v` known by its base type: what the code of each in-tree subclass gives it
    that the base's own code does not (`self.attr = ...` in a method of the subclass, of a base
    beside it, or of a base chained to past an override, a class attribute it defines), read on
    an instance of that subclass or of any below it. `Base.forward` calling `self.proj(x)` on an
    instance of `Sub(Base)` whose `__init__` sets `self.proj = Other()` calls `Other`; reading
    only `Base`'s assignments was a false "unreachable". Methods a subclass defines are
    `attribute`'s (overrides)."""
    if v.exact:
        return frozenset()
    own = set(classes.mro(v.qual))
    read = classes.effective_methods(v.qual)  # the methods whose stores the caller reads on `v`
    out: set[Value] = set()
    for sub in classes.givers(v.qual).get(attr, ()):
        tags.add(RULE.name)
        below = receiver(sub)
        ca = classes.class_attr(sub, attr)
        if ca is not None and ca[0].qual not in own and attr not in ca[0].methods:
            out |= classes.ev.bindings(ca[1], Scope(ca[0].module, cls=ca[0]), tags, ("clsattr", ca[0].qual, attr))
        # the methods that run on `v`'s own class are not read again with `self` an instance
        # of `sub`: the caller reads them on `v`, whose cone holds every instance of `sub`,
        # and with no other parameter bound (`init_chain.contexts_on`) the two contexts differ
        # in `self` alone. Read again they were the same stores once per subclass
        # (`PreTrainedModel.__init__` in ~3,800 contexts on transformers).
        out |= init_attribute.assigned(classes.ev, below, attr, set(), tags, read=read)
    return frozenset(out)


def givers(classes, qual: str) -> dict[str, list[str]]:
    """For each attribute, the in-tree subclasses of `qual` (in `subclasses` order) whose code
    gives it to their instances and not to one of `qual`'s own class (`_given`), read once per
    class for every attribute: asked per attribute, each read on a value typed by a base with
    thousands of subclasses (`PreTrainedModel`) walked them all again (`ClassModel.givers`
    memoises this)."""
    own = set(classes.mro(qual))
    read = classes.effective_methods(qual)  # the methods whose stores the caller reads on `v`
    out: dict[str, list[str]] = {}
    for sub in classes.subclasses(qual):
        for attr in _given(classes, sub, own, read):
            out.setdefault(attr, []).append(sub)
    return out


def _given(classes, sub: str, own: set[str], read: frozenset[str]) -> set[str]:
    """The attributes code that runs on an instance of `sub`, and not on one of `v`'s own
    class, gives it: a class attribute of a class outside `v`'s MRO, or a store in a method
    that runs on `sub` and not on `v` (the subclass's own, or a base's `__init__` it chains to
    past an override that does not: `Base.__init__(self)`)."""
    out: set[str] = set()
    stores: dict[str, list[str]] = {}
    for k in classes.mro(sub):
        info = classes.info(k)
        if info is None:
            continue
        if k not in own:
            out.update(a for a in info.attrs if a not in info.methods)
        for attr, found in info.self_attrs().items():
            stores.setdefault(attr, []).extend(fn.qual for fn, _ in found if fn.qual not in read)
    stores = {a: qs for a, qs in stores.items() if qs and a not in out}
    if stores:
        live = classes.effective_methods(sub)
        out.update(a for a, qs in stores.items() if any(q in live for q in qs))
    return out


def subclasses(ev, qual: str) -> list[str]:
    """Every in-tree subclass of `qual`, transitively (found by the class headers' names, then
    confirmed by the MRO): the classes a `type[qual]` annotation may name (`ClassModel.subclasses`
    memoises this)."""
    p, classes = ev.p, ev.classes
    out = []
    for path in p.subclass_candidates(qual.rsplit(".", 1)[-1], None):
        mod = p.module_of_path(path)
        if mod is None:
            continue
        out.extend(info.qual for info in p.classes_in(mod) if info.qual != qual and qual in classes.mro(info.qual))
    return sorted(set(out))


def type_annotation(ev, values, tags: set[str] | None = None) -> FrozenSet[Value]:
    """What `type[X]` names, given the instances the annotation `X` describes: the class of each
    in-tree `X` and of every in-tree subclass of it (calling one constructs exactly that class,
    its own `__init__` run); anything else (an outside class, a Protocol, what is not read) may
    be any class, the tree's own included: unknown."""
    out: set[Value] = set()
    for v in values:
        if v.__class__ is VInst:
            out.add(VClass(v.qual))
            subs = [] if v.exact else ev.classes.subclasses(v.qual)
            out.update(VClass(q) for q in subs)
            if subs and tags is not None:
                tags.add(RULE.name)
        elif isinstance(v, VUnknown):
            out.add(v)
        else:
            out.add(VUnknown("type[...] of a class from outside the tree: any subclass may be there, "
                             "the tree's own included"))
    return frozenset(out) or frozenset({VUnknown("type[...] known only by an annotation: not read")})


def _from_sibling(classes, qual: str, sub: str, name: str) -> bool:
    """Whether `sub` (a subclass of `qual`) takes `name` from a class that is neither in
    `qual`'s own MRO nor a subclass of `qual`: a base beside it in a multiple inheritance."""
    found = classes.method(sub, name)
    return found is not None and found[1] not in classes.mro(qual) and qual not in classes.mro(found[1])


def receiver(sub: str) -> VInst:
    """`self` of a subclass's method run on a value known only by a base type: an instance of
    `sub` or of any subclass of it (not exact), so what the method calls on `self` dispatches
    to the overrides below `sub` too."""
    return VInst(sub, exact=False)


def receivers(classes, v: VInst, names: tuple[str, ...]) -> list[str]:
    """The classes whose `names` a call on `v` may run: its own, then, when `v` is known only
    by its base type, each subclass that overrides one of them."""
    return [v.qual] + ([] if v.exact else classes.overriders(v.qual, names))


def attribute(classes, v: VInst, attr: str, tags: set[str]) -> FrozenSet[Value]:
    """`v.attr` for `v` known by its base type: each override's method, bound to an instance
    of the subclass that gives it (`receiver`)."""
    out: set[Value] = set()
    if v.exact:
        return frozenset()
    for sub in classes.overriders(v.qual, (attr,)):
        found = classes.method(sub, attr)
        if found is not None and found[1] not in classes.mro(v.qual):
            tags.add(RULE.name)
            out |= classes.bind_method(found[0], receiver(sub), sub, tags, attr)
    return frozenset(out)
