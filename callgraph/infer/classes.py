"""Classes: bases, MRO, attribute lookup on instances, classes and super().

Models Python's attribute lookup for in-tree classes: the class dict along the C3 MRO (methods,
class attributes, properties), then instance attributes set by `self.x = ...` /
`setattr(self, "x", ...)` in any method of any class in the MRO (so an attribute assigned in
`__init__`, conditionally, or first to None, is the union of all its assignments). Attributes
not found on a class with an external base (torch.nn.Module, say) are the base's: external.
"""
from __future__ import annotations

from typing import FrozenSet

from ..index.scopes import ClassInfo, FuncInfo
from ..semantics import absent_attribute, attribute_store, class_hierarchy, class_of, container_subclass, decorators, descriptors, enum_members, getattr_hook, init_attribute, mapping_mixin, mro, open_values, properties, super_call
from ..semantics.protocol import Inference, Scope
from ..values import UNSETTLED, Value, VClass, VExt, VFunc, VInst, VSuper, VUnknown, memoised, ordered, unknown

# Bases by which a class is a torch module (its instances called run forward).
MODULE_BASES = open_values.MODULE_BASES
CONTAINER_BASES = {"builtins.dict", "builtins.list", "builtins.tuple", "builtins.set", "collections.OrderedDict",
                   "collections.defaultdict", "collections.UserDict", "collections.UserList", "typing.Dict", "typing.List"}
# External bases that add no instance attributes or methods of their own.
MARKER_BASES = {"builtins.object", "abc.ABC", "typing.Generic", "typing.Protocol", "typing_extensions.Protocol"}
PROTOCOL_BASES = {"typing.Protocol", "typing_extensions.Protocol"}


def _joined_tuple(a: tuple, b: tuple) -> tuple:
    """Both, in order, once each: a class's bases or MRO over a cycle's rounds."""
    return tuple(dict.fromkeys(a + b))


def _unsettled_bases(bases: tuple) -> tuple:
    return bases + (VUnknown(UNSETTLED),)


class ClassModel:
    def __init__(self, ev: Inference):
        self.ev = ev
        self._bases: dict[str, tuple] = {}
        self._mro: dict[str, tuple] = {}
        self._attr: dict = {}
        self._overriders: dict = {}
        self._effective: dict[str, frozenset[str]] = {}
        self._subclasses: dict[str, list[str]] = {}
        self._givers: dict[str, dict[str, list[str]]] = {}
        self._wrapped: dict = {}
        self._hooks: dict[str, tuple] = {}
        self._hooked_subclasses: dict[str, tuple] = {}

    def info(self, qual: str) -> ClassInfo | None:
        return self.ev.p.classes.get(qual)

    def bases(self, qual: str) -> tuple[Value, ...]:
        # in progress (a base worked out from the class itself), no bases yet; the solver keeps
        # what a cycle gave once it has settled (fixpoint.py)
        return self.ev.solver.solve(self._bases, qual, lambda: self._bases_of(qual), (), _joined_tuple,
                                    unsettled=_unsettled_bases)

    def _bases_of(self, qual: str) -> tuple[Value, ...]:
        info = self.info(qual)
        out: list[Value] = []
        if info is not None:
            scope = Scope(info.module)
            for b in info.node.bases:
                node = b.value if b.__class__.__name__ == "Subscript" else b
                for v in ordered(self.ev.eval(node, scope, set())):
                    if isinstance(v, (VClass, VExt, VUnknown)):
                        out.append(v)
        return tuple(out)

    def mro(self, qual: str) -> tuple[str, ...]:
        """In-tree classes of the C3 linearisation (external bases left out)."""
        return self.ev.solver.solve(self._mro, qual, lambda: self._mro_of(qual), (qual,), _joined_tuple)

    def _mro_of(self, qual: str) -> tuple[str, ...]:
        parents = [b.qual for b in self.bases(qual) if isinstance(b, VClass) and b.qual != qual]
        return mro.linearise(qual, parents, self.mro)

    def external_bases(self, qual: str) -> list[str]:
        """Bases from outside the tree that give instances attributes or behaviour: not
        `object`, nor markers such as `abc.ABC` (an attribute the tree does not define on an
        ABC subclass is unknown, not `abc.ABC.attr`)."""
        out = []
        for k in self.mro(qual):
            out.extend(b.name for b in self.bases(k) if isinstance(b, VExt) and b.name not in MARKER_BASES)
        return out

    def unknown_bases(self, qual: str) -> list[str]:
        return [b.why for k in self.mro(qual) for b in self.bases(k) if isinstance(b, VUnknown)]

    def is_container(self, qual: str) -> bool:
        """A subclass of dict/list/...: what it holds is not tracked (its items are unknown)."""
        return any(b in CONTAINER_BASES for b in self.external_bases(qual))

    def is_protocol(self, qual: str) -> bool:
        """A typing.Protocol (listed among its own bases): matched by structure, not by
        inheritance, so its in-tree subclasses are not all the classes it may stand for."""
        return any(isinstance(b, VExt) and b.name in PROTOCOL_BASES for b in self.bases(qual))

    def is_module(self, qual: str) -> bool:
        return any(_is_module_base(n) for n in self.external_bases(qual))

    def method(self, qual: str, name: str, after: str | None = None) -> tuple[FuncInfo, str] | None:
        """The first definition of `name` along the MRO (after class `after`, for super())."""
        order = self.mro(qual)
        if after is not None:
            order = order[order.index(after) + 1:] if after in order else ()
        for k in order:
            info = self.info(k)
            if info is not None and name in info.methods:
                return info.methods[name], k
        return None

    def class_attr(self, qual: str, name: str) -> tuple[ClassInfo, list] | None:
        for k in self.mro(qual):
            info = self.info(k)
            if info is not None and name in info.attrs:
                return info, info.attrs[name]
        return None

    def overriders(self, qual: str, names: tuple[str, ...]) -> list[str]:
        """In-tree subclasses of `qual` (transitively) that define one of `names` themselves:
        the receivers a call on an instance known only by its base type may dispatch to."""
        key = (qual, names)
        if key in self._overriders:
            return self._overriders[key]
        self._overriders[key] = []
        out = class_hierarchy.overriders(self.ev, qual, names)
        self._overriders[key] = out
        return out

    def subclasses(self, qual: str) -> list[str]:
        """Every in-tree subclass of `qual`, transitively (`class_hierarchy.subclasses`), memoised."""
        found = self._subclasses.get(qual)
        if found is None:
            self._subclasses[qual] = []  # a cycle of bases reads as none while in progress
            found = self._subclasses[qual] = class_hierarchy.subclasses(self.ev, qual)
        return found

    def givers(self, qual: str) -> dict[str, list[str]]:
        """Per attribute, the subclasses of `qual` whose own code gives it
        (`class_hierarchy.givers`), memoised."""
        found = self._givers.get(qual)
        if found is None:
            found = self._givers[qual] = class_hierarchy.givers(self, qual)
        return found

    def effective_methods(self, qual: str) -> frozenset[str]:
        """Methods that can run on an instance of `qual` (`init_attribute.live_methods`), memoised."""
        found = self._effective.get(qual)
        if found is None:
            found = self._effective[qual] = init_attribute.live_methods(self.ev, qual)
        return found

    # -- attribute lookup ------------------------------------------------------------------
    def attribute(self, v: Value, attr: str, tags: set[str]) -> FrozenSet[Value]:
        def compute(atags: set[str]) -> FrozenSet[Value]:
            if isinstance(v, VSuper):
                return super_call.attribute(self.ev, v, attr, atags)
            if isinstance(v, VClass):
                return self._class_attr(v, attr, atags)
            return self._instance_attr(v, attr, atags)

        return memoised(self.ev.solver, self._attr, (v, attr), tags, compute, self.ev.shared)  # kept for the run

    def bind_method(self, fn: FuncInfo, owner: Value, cls_qual: str, tags: set[str],
                    name: str | None = None) -> FrozenSet[Value]:
        """`fn`, found on a class of `cls_qual`'s MRO as `name`, read on `owner`: a bound method,
        the function itself (static), bound to the class (classmethod), or a property's value."""
        if properties.is_property(fn, name):
            return properties.read(self.ev, fn, owner, tags)
        if fn.kind == "staticmethod":
            return frozenset({VFunc(fn.qual)})
        if fn.kind == "classmethod":
            if isinstance(owner, VInst):  # `cls` is the instance's class (class-of)
                return frozenset(VFunc(fn.qual, c) for c in class_of.classes(self.ev, owner, tags))
            return frozenset({VFunc(fn.qual, VClass(cls_qual))})
        method = frozenset({VFunc(fn.qual, owner)})
        if not fn.decorators:
            return method
        return method | decorators.bound_wrappers(self.ev, self.wrappers(fn, tags), owner, tags)

    def wrappers(self, fn: FuncInfo, tags: set[str]) -> FrozenSet[Value]:
        """What the in-tree decorators of method `fn` make of it (`decorators.method_wrappers`),
        memoised for the run."""
        if not fn.decorators:
            return frozenset()
        return memoised(self.ev.solver, self._wrapped, fn.qual, tags,
                        lambda wtags: decorators.method_wrappers(self.ev, fn, wtags), self.ev.shared)

    def hooks(self, qual: str) -> tuple:
        """(`__getattribute__`, `__getattr__`) that instances of `qual` run on reads, each the
        in-tree method the MRO finds or None (`getattr_hook.py`), memoised."""
        found = self._hooks.get(qual)
        if found is None:
            found = self._hooks[qual] = tuple(
                (m[0] if (m := self.method(qual, name)) is not None else None) for name in getattr_hook.DUNDERS)
        return found

    def hooked_subclasses(self, qual: str) -> tuple[str, ...]:
        """The in-tree subclasses of `qual` whose read hooks differ from `qual`'s (a
        `__getattr__` of their own or a mixin's), memoised: an instance known only by its base
        type may be one of them (`getattr_hook.py`). Empty where no file of the scope defines a
        hook."""
        found = self._hooked_subclasses.get(qual)
        if found is None:
            found = ()
            if not getattr_hook.HOOKS.isdisjoint(self.ev.p.dunder_names()):
                mine = self.hooks(qual)
                found = tuple(s for s in self.subclasses(qual) if self.hooks(s) != mine)
            self._hooked_subclasses[qual] = found
        return found

    def _instance_attr(self, v: VInst, attr: str, tags: set[str]) -> FrozenSet[Value]:
        if attr == "__class__":
            return class_of.classes(self.ev, v, tags)
        # known by its base type: what a subclass's own code gives it may be there too (beside,
        # never instead of, what the base itself gives: its stores from outside, its AttributeError)
        below = class_hierarchy.assigned_below(self, v, attr, tags)
        return self._own_instance_attr(v, attr, tags) | below

    def _own_instance_attr(self, v: VInst, attr: str, tags: set[str]) -> FrozenSet[Value]:
        out: set[Value] = set()
        found = self.method(v.qual, attr)
        if found is not None:
            fn, owner = found
            mro.inherited(owner, v.qual, tags)
            out |= self.bind_method(fn, v, v.qual, tags, attr)
        else:
            ca = self.class_attr(v.qual, attr)
            if ca is not None:
                out |= descriptors.values(self.ev, self._class_body_value(ca, attr, tags), v, v.qual, tags)
            else:
                out |= enum_members.attribute(self, v, attr, tags) or frozenset()  # `member.value`, `.name`
        out = init_attribute.assigned(self.ev, v, attr, out, tags)
        given = bool(out)  # by the class itself (not by an override below it)
        if not v.exact:  # known by its base type: every override may run
            out |= class_hierarchy.attribute(self, v, attr, tags)
        if not given and attr == "__call__" and self.is_module(v.qual):
            # `layer.__call__` (handed to a checkpointing helper, or called) of a module with no
            # __call__ of its own is nn.Module.__call__, which runs forward (whether or not a
            # subclass below overrides __call__: the class's own instances run this one)
            fwd = self.method(v.qual, "forward")
            if fwd is not None:
                tags.add("module-call")
                out |= self.bind_method(fwd[0], v, v.qual, tags)
        if attr == "__call__" and not v.exact:  # ... and so does each module subclass's
            out |= class_hierarchy.module_calls(self, v, tags)
        if not out:
            out |= container_subclass.item_methods(v, attr)  # `obj.get(k)` of a dict subclass
        if not out:
            found_mixin = mapping_mixin.mixin(self, v, attr)  # `obj.get(k)` of a Mapping subclass
            if found_mixin is not None:
                out.add(found_mixin)
        if not out:
            ext = self.external_bases(v.qual)
            unk = self.unknown_bases(v.qual)
            if unk:
                out.add(VUnknown(f"{_short(v.qual)}.{attr}: base not resolved ({unk[0]})"))
            elif ext and all(b in MODULE_BASES for b in ext) and open_values.module_attribute(v.qual, attr):
                # not torch.nn.Module's own, and never assigned by the class's code: what the
                # tree's stores by name put there (register_parameter, setattr, obj.x = v)
                stored = attribute_store.values(self.ev, v, attr, tags)
                out |= stored if stored is not None else {open_values.module_attribute(v.qual, attr)}
            elif ext:
                made = descriptors.property_attribute(self, v, attr)  # a property subclass's `fget`
                out |= made if made is not None else {VExt(f"{ext[0]}.{attr}")}
            else:
                absent = absent_attribute.values(self.ev, v, attr, tags)  # AttributeError: nothing
                out |= absent if absent is not None else {VUnknown(f"{_short(v.qual)} has no attribute '{attr}'")}
        out |= getattr_hook.values(self.ev, v, attr, tags)  # a read the class does not answer: __getattr__
        return frozenset(out)

    def _class_body_value(self, ca: tuple, attr: str, tags: set[str]) -> FrozenSet[Value]:
        """What a class body binds to `attr` (`ca`: the class and its bindings), read on the class
        or an instance: an enum's member (`enum-member`), else the values assigned."""
        found = enum_members.member(self, ca[0], attr, tags)
        if found is not None:
            return found
        return self.ev.bindings(ca[1], Scope(ca[0].module, cls=ca[0]), tags, ("clsattr", ca[0].qual, attr))

    def _class_attr(self, v: VClass, attr: str, tags: set[str]) -> FrozenSet[Value]:
        found = self.method(v.qual, attr)
        if found is not None:
            fn, owner = found
            mro.inherited(owner, v.qual, tags)
            if fn.kind == "classmethod":
                return frozenset({VFunc(fn.qual, v)})
            if properties.is_property(fn, attr):
                return properties.ON_CLASS
            # a decorator's product read on the class: a plain function as it is, a descriptor's `__get__`
            return frozenset({VFunc(fn.qual)}) | descriptors.values(self.ev, self.wrappers(fn, tags), None, v.qual, tags)
        ca = self.class_attr(v.qual, attr)
        if ca is not None:
            return descriptors.values(self.ev, self._class_body_value(ca, attr, tags), None, v.qual, tags)
        named = class_of.class_attribute(attr)  # `cls.__name__`
        if named is not None:
            return named
        ext = self.external_bases(v.qual)
        if ext:
            return frozenset({VExt(f"{ext[0]}.{attr}")})
        return unknown(f"class {_short(v.qual)} has no attribute '{attr}'")


def _is_module_base(name: str) -> bool:
    return name in MODULE_BASES or name.endswith(".nn.Module") or name.startswith("torch.nn.")


def _short(qual: str) -> str:
    return qual.rsplit(".", 1)[-1]
