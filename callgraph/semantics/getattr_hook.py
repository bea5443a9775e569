"""`getattr-hook`: a read that an object's class does not answer runs the class's in-tree
`__getattr__`; every read runs an in-tree `__getattribute__`.

`obj.name`, where no class of `obj`'s MRO defines `name` and no method assigns `self.name`,
calls `type(obj).__getattr__(obj, "name")` (a wrapper delegating to what it wraps: SGLang's
`KTEPWrapperMethod`, vLLM's `PPMissingLayer`, transformers' `BatchFeature`); what it returns is
the read's value, beside what the read gave before (the stores of the scope may have set the
attribute, and then the hook does not run). Every read of an instance whose class defines
`__getattribute__` calls that first. Before, the hook's body was no edge and its value was not
read: a target reached inside it was a false "unreachable", and a call of what it returns was
unknown.

The exploration asks about each attribute read, whatever its receiver (`x.attr`,
`self.a.attr`, `f().attr`, `xs[0].attr`: before, only reads off names were, and a target behind
the hook of a call's result was a false "unreachable"), and each `getattr(obj, name[, default])` / `hasattr(obj, name)` (the builtin
reads `obj.name`; a name that is not a constant string may be any, so `__getattr__` may run,
its name unbound: `builtin_reads`), where some file of the scope defines `__getattr__` or
`__getattribute__` (`Project.dunder_names`). Before, the builtin was a leaf: a target behind the
hook read that way was a false "unreachable". An instance known only by its base type (an annotation, `self` in an
inherited method) may be one of the base's in-tree subclasses: the hooks of those whose hooks
differ from the base's run too, each bound to that subclass (`ClassModel.hooked_subclasses`).
A module's own `__getattr__` (PEP 562) is `module_getattr.py`'s: explore.py asks both rules
about the same synthetic read.
"""
from __future__ import annotations

import ast
import weakref
from typing import FrozenSet

from ..values import Ctx, Value, VConst, VInst
from .binding import bind
from .rule import CallArgs, Rule

HOOK = "__getattr__"
EVERY_READ = "__getattribute__"
# The builtins that read an attribute by a name given as their second argument.
READING_BUILTINS = frozenset({"getattr", "hasattr"})
# A builtin read's synthetic attribute where the name is not a constant: any name.
ANY_NAME = "*"
# FuncInfo -> its builtin reads' synthetic calls (builtin_reads).
_BUILTIN_READS: "weakref.WeakKeyDictionary[object, list]" = weakref.WeakKeyDictionary()
DUNDERS = (EVERY_READ, HOOK)  # the order of ClassModel.hooks
HOOKS = frozenset(DUNDERS)


class GetattrHook(Rule):
    """a read of an attribute an instance's class does not define or assign runs the class's
    in-tree `__getattr__` with the name (its return is the read's value too); every read runs an
    in-tree `__getattribute__`; `getattr(obj, name)` and `hasattr` read as `obj.name` does (a
    name not known may be any); an instance known only by its base type runs the hooks of the
    base's in-tree subclasses too"""

    name = "getattr-hook"
    where = ("semantics/getattr_hook.py", "infer/classes.py", "explore.py")


RULE = GetattrHook()


def hooked(cm, qual: str, attr: str) -> list:
    """The in-tree hook methods a read of `attr` on an exact instance of `qual` runs:
    `__getattribute__` for any name, `__getattr__` where no class of the MRO defines the name
    and no method of one assigns `self.<name>` (always, for `ANY_NAME`)."""
    every, hook = cm.hooks(qual)
    out = [every] if every is not None else []
    if hook is not None and (attr == ANY_NAME or not defined(cm, qual, attr)):
        out.append(hook)
    return out


def defined(cm, qual: str, attr: str) -> bool:
    """Whether a class of `qual`'s MRO defines `attr` (a method, a class attribute) or a method of
    one assigns `self.<attr>`: a read that finds it never reaches `__getattr__`."""
    for k in cm.mro(qual):
        info = cm.info(k)
        if info is not None and (attr in info.methods or attr in info.attrs or attr in info.self_attrs()):
            return True
    return False


def values(ev, v: VInst, attr: str, tags: set[str]) -> FrozenSet[Value]:
    """What the in-tree `__getattr__` of `v`'s class (or of a subclass it may be) returns for
    `attr`, where the read does not find it otherwise (empty where there is no such hook)."""
    cm = ev.classes
    out: set = set()
    for qual, inst in _classes(cm, v):
        hook = cm.hooks(qual)[1]
        if hook is None or defined(cm, qual, attr):
            continue
        tags.add(RULE.name)
        out |= ev.returns(hook, _context(hook, inst, attr))
    return frozenset(out)


def runs(ev, owners: FrozenSet[Value], attr: str) -> list[tuple[str, Ctx]]:
    """The hooks reading `attr` on each of `owners` runs (`hooked`), each in its context."""
    out = {}
    for v in owners:
        if v.__class__ is VInst:
            for qual, inst in _classes(ev.classes, v):
                for fn in hooked(ev.classes, qual, attr):
                    # `__getattribute__` runs on every read: its contexts are its instances', the
                    # name left unbound (one per attribute name read was thousands on
                    # transformers' configs); so is a name not known
                    named = fn.name == HOOK and attr != ANY_NAME
                    out[(fn.qual, _context(fn, inst, attr if named else None))] = None
    return list(out)


def _classes(cm, v: VInst) -> list[tuple[str, VInst]]:
    """(class, instance) pairs a read on `v` may find hooks in: its class, and unless `v` is
    exact, the subclasses whose hooks differ, each as an instance of that subclass."""
    if v.exact:
        return [(v.qual, v)]
    return [(v.qual, v)] + [(s, VInst(s, exact=False)) for s in cm.hooked_subclasses(v.qual)]


def read_calls(node: ast.Attribute, defined_dunders: FrozenSet[str]) -> list[tuple[str, ast.Call]]:
    """The hook's synthetic call `obj.attr()` of a read, placed at it, where some file of the
    scope defines a hook: off names (`x.a`, `self.a.b`), a call's result (`f().a`) or an item
    (`xs[0].a`) alike."""
    if HOOK not in defined_dunders and EVERY_READ not in defined_dunders:
        return []
    return [("hook", ast.copy_location(ast.Call(func=node, args=[], keywords=[]), node))]


def builtin_reads(fn, defined_dunders: FrozenSet[str]) -> list[tuple[str, ast.Call]]:
    """("getattr", synthetic read `obj.name()`) for each `getattr(obj, name[, default])` and
    `hasattr(obj, name)` of `fn`'s body, placed at the call, where some file of the scope
    defines a hook (a class's or a module's): the builtin reads the attribute as `obj.name`
    does. A name that is not a constant string is `ANY_NAME`. Memoised."""
    if HOOK not in defined_dunders and EVERY_READ not in defined_dunders:
        return []
    out = _BUILTIN_READS.get(fn)
    if out is not None:
        return out
    out = _BUILTIN_READS[fn] = []
    for call in fn.calls():
        func = call.func
        if isinstance(func, ast.Name) and func.id in READING_BUILTINS and len(call.args) >= 2 and not any(
                isinstance(a, ast.Starred) for a in call.args[:2]):
            name = call.args[1]
            attr = name.value if isinstance(name, ast.Constant) and isinstance(name.value, str) else ANY_NAME
            read = ast.Call(func=ast.Attribute(value=call.args[0], attr=attr, ctx=ast.Load()), args=[], keywords=[])
            out.append(("getattr", ast.copy_location(read, call)))
    return out


def _context(fn, v: VInst, attr: str | None) -> Ctx:
    return bind(fn, v, CallArgs([frozenset({VConst(attr)})] if attr is not None else []), None)
