"""`constructor`: calling a class makes an instance and runs its `__init__` and `__new__`.

A class whose `__init__` is generated runs its `__post_init__` too: a `@dataclass` (or a class
an in-tree decorator marked `@dataclass_transform` makes, PEP 681: vLLM's `@config`) whose body
defines no `__init__` (its generated one replaces a base's, unless `init=False`), or one with no
`__init__` in the tree along its MRO whose MRO has a dataclass or an outside base (msgspec,
pydantic); a dataclass's generated `__init__` also calls its fields' default factories. Before,
a target reached from a config's `__post_init__` was a false "unreachable".

A class whose metaclass (`class A(metaclass=M)`, or a base's) is an in-tree class defining
`__call__` runs that `M.__call__(cls, ...)` first (a singleton's or a registry's metaclass), as
an edge beside the `__init__` the default `type.__call__` runs: what the metaclass's
`__call__` returns instead of a new instance is not read."""
from __future__ import annotations

import ast
import weakref
from typing import FrozenSet

from ..index.decorator_names import decorator_name
from ..index.scopes import FuncInfo
from ..values import Value, VClass, VConst, VFunc, VInst, VPartial, VSeq
from . import abstract_class, descriptors, external
from .binding import bind
from .protocol import Scope
from .container_subclass import held_at_construction
from .rule import Call, CallArgs, Outcome, Rule


class Constructor(Rule):
    """`Class(...)` runs `Class.__init__` (own or inherited) and `__new__`, and `__post_init__`
    and the fields' default factories where the `__init__` is generated (a dataclass's, or one a
    `@dataclass_transform` decorator makes), and an in-tree metaclass's `__call__`;
    `raise E` constructs `E`.
    An instance remembers the in-tree objects its `__init__` was given (one level of object
    sensitivity), so `self.model = model` in a wrapper is the model passed at that construction"""

    name = "constructor"
    where = ("semantics/constructor.py",)
    kinds = (VClass,)

    def apply(self, call: Call) -> Outcome:
        return construct(call.calls, call.value.qual, call.args, call.dispatch, self.name)


def _dataclass(cm, qual: str) -> bool:
    """Whether `qual` itself is decorated `@dataclass` / `@dataclasses.dataclass(...)` (not
    `init=False`), or by an in-tree decorator marked `@dataclass_transform` (PEP 681: vLLM's
    `@config`, which makes a pydantic dataclass): its `__init__` is generated, over any a base
    defines. Memoised per class."""
    info = cm.info(qual)
    if info is None:
        return False
    found = _DATACLASS.get(info)
    if found is None:
        found = _DATACLASS[info] = _decorated_dataclass(cm, info)
    return found


def _decorated_dataclass(cm, info) -> bool:
    for dec in info.node.decorator_list:
        node = dec.func if isinstance(dec, ast.Call) else dec
        name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
        if name == "dataclass":
            return not (isinstance(dec, ast.Call) and any(
                k.arg == "init" and isinstance(k.value, ast.Constant) and k.value.value is False for k in dec.keywords))
        if _transforms(cm, node, info):
            return True
    return False


def _transforms(cm, node: ast.AST, info) -> bool:
    """Whether the decorator `node` names an in-tree function marked `@dataclass_transform`
    (`typing` / `typing_extensions`; on the implementation or an `@overload` of it)."""
    if not isinstance(node, (ast.Name, ast.Attribute)):
        return False
    for v in cm.ev.eval(node, Scope(info.module), set()):
        fn = cm.ev.p.functions.get(v.qual) if v.__class__ is VFunc else None
        if fn is not None and any(d.rpartition(".")[2] == "dataclass_transform" for d in fn.decorators):
            return True
    return False


_DATACLASS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
# The calls that specify a field, by their last name (`dataclasses.field`, msgspec's, pydantic's
# `Field`): their `default_factory` runs at construction (`factories`).
FIELD_SPECIFIERS = frozenset({"field", "Field"})


def raised(node: ast.AST) -> list[ast.Call]:
    """`raise E` / `raise mod.E` constructs `E`: the synthetic call `E()` placed at `E`; none
    for `raise E(...)` (a call of its own), a bare `raise` or any other node."""
    if isinstance(node, ast.Raise) and isinstance(node.exc, (ast.Name, ast.Attribute)):
        return [ast.copy_location(ast.Call(func=node.exc, args=[], keywords=[]), node.exc)]
    return []


def construct(calls, qual: str, args: CallArgs, d, rule: str, key: str = "") -> FrozenSet[Value]:
    """An instance of in-tree class `qual`, its `__init__` (and `__new__`) targets of `d` with
    `rule` (`constructor`, `bound` for a class named by --bind, `registry` for one a registry
    chose by `key`)."""
    cm = calls.ev.classes
    if abstract_class.abstract(calls.ev, qual):
        return frozenset()  # ABCMeta raises TypeError: no instance, no __init__
    meta = metaclass_call(calls.ev, qual)
    if meta is not None:
        calls.add_target(meta.qual, bind(meta, VClass(qual), args, None), rule, d)
    new = cm.method(qual, "__new__")
    init = cm.method(qual, "__init__")
    inst = VInst(qual)
    # a dataclass generates __init__ unless its body defines one (or init=False): over a base's
    generated = init is None or (init[1] != qual and _dataclass(cm, qual))
    if not generated:
        inst = VInst(qual, True, init_bindings(init[0], args))
        calls.invoke(init[0], inst, args, None, rule, d, returning=False, key=key)
    else:
        # a dict/list subclass's items, a property subclass's getter (setter, deleter)
        inst = VInst(qual, True, held_at_construction(calls.ev, qual, args) or descriptors.property_parts(cm, qual, args))
        if init is None:
            external.base_init(d, cm.external_bases(qual))  # no __init__ in the tree: the base's runs
        dataclass = any(_dataclass(cm, k) for k in cm.mro(qual))
        if dataclass:  # a generated __init__ calls the fields' default factories
            _default_factories(calls, qual, d)
        post = cm.method(qual, "__post_init__")
        if post is not None and (cm.external_bases(qual) or dataclass):
            # a generated __init__ calls it (a dataclass's, or an outside base's: msgspec, pydantic);
            # object.__init__ does not
            calls.invoke(post[0], inst, CallArgs(), None, rule, d, returning=False, key=key)
    if new is not None:
        ctx = bind(new[0], VClass(qual), args, None)
        calls.add_target(new[0].qual, ctx, "constructor", d)
        made = calls.ev.returns(new[0], ctx)
        if any(isinstance(m, VInst) and m.qual != qual for m in made):
            return made
    return frozenset({inst})


def _default_factories(calls, qual: str, d) -> None:
    """A dataclass's generated `__init__` calls each field's `default_factory` (`x: Cfg =
    field(default_factory=Cfg)`, a lambda) for a field not given: each runs, as a call with
    nothing, its targets those of the construction (which fields are given is not followed: all
    run). Before, a factory building an in-tree config was no edge: vLLM's `VllmConfig` makes
    its sub-configs this way."""
    cm = calls.ev.classes
    for k in cm.mro(qual):
        info = cm.info(k)
        if info is None or not _dataclass(cm, k):
            continue
        scope = Scope(info.module, cls=info)
        for made in factories(info):
            for v in calls.ev.eval(made.func, scope, set()):
                calls.call_value(v, CallArgs(complete=True), made, scope, d, set())


def factories(info) -> list[ast.Call]:
    """Synthetic calls `factory()` of the default factories a class body gives its fields
    (`field(default_factory=f)`, `dataclasses.field`, pydantic's `Field`), placed at each;
    memoised per class."""
    found = _FACTORIES.get(info)
    if found is None:
        found = _FACTORIES[info] = []
        for stmt in info.node.body:
            value = stmt.value if isinstance(stmt, (ast.AnnAssign, ast.Assign)) else None
            if not isinstance(value, ast.Call):
                continue
            if decorator_name(value.func).rpartition(".")[2] not in FIELD_SPECIFIERS:
                continue
            for kw in value.keywords:
                if kw.arg == "default_factory":
                    found.append(ast.copy_location(ast.Call(func=kw.value, args=[], keywords=[]), kw.value))
    return found


_FACTORIES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def metaclass_call(ev, qual: str) -> FuncInfo | None:
    """The in-tree `__call__` of the metaclass of class `qual`: the first `metaclass=` keyword
    along its MRO whose value is an in-tree class defining (or inheriting from the tree) a
    `__call__`; None for `type`'s and any outside metaclass's."""
    cm = ev.classes
    for k in cm.mro(qual):
        info = cm.info(k)
        meta = next((kw.value for kw in info.node.keywords if kw.arg == "metaclass"), None) if info else None
        if meta is None:
            continue
        for m in ev.eval(meta, Scope(info.module), set()):
            if isinstance(m, VClass):
                found = cm.method(m.qual, "__call__")
                if found is not None:
                    return found[0]
        return None
    return None


def init_bindings(init: FuncInfo, args: CallArgs) -> tuple:
    """The in-tree objects an __init__ call binds to its parameters (not `self`): what an
    instance remembers of its construction. Only objects that calls can dispatch on are kept
    (modules, functions, classes, containers of them), one level deep, so instances built
    with different tensors or configs stay one value."""
    ctx = bind(init, _PLACEHOLDER, args, None)
    selfname = (init.node.args.posonlyargs + init.node.args.args)[0].arg if (init.node.args.posonlyargs + init.node.args.args) else None
    out = []
    for name, vals in ctx.binds:
        if name == selfname:
            continue
        kept = frozenset(_shallow(v) for v in vals if isinstance(v, (VInst, VFunc, VClass, VPartial)) or
                         (isinstance(v, VSeq) and any(isinstance(e, (VInst, VFunc, VClass)) for e in v.elems)))
        if kept:
            out.append((name, kept))
    return tuple(out)


def _shallow(v: Value) -> Value:
    if isinstance(v, VInst) and v.init:
        return VInst(v.qual, v.exact)
    if isinstance(v, VSeq):
        return VSeq(frozenset(_shallow(e) for e in v.elems), v.kind)
    return v


_PLACEHOLDER = VConst("<self>")

RULE = Constructor()
