"""Argument → parameter binding at one call site.

Models Python's own rules: positionals fill positional parameters in order (after `self` for
a bound method), keywords fill by name, leftovers go to `*args` / `**kwargs`, and a `**kw`
whose keys are known is spread over the named parameters (the pass-through of
`general_mm_embed_routine(**kwargs) -> language_model(**kwargs)`). Parameters left unbound
fall back to their defaults and annotations when read.
"""
from __future__ import annotations

from typing import FrozenSet

from ..index.scopes import FuncInfo
from ..values import EMPTY, NONE, SOME_LITERAL, Ctx, Value, VConst, VExt, VSeq, VUnknown, ordered
from .external import callee_name
from .computed_getattr import StrPattern
from .rule import CallArgs, Rule

# Value sets larger than this are kept, but contexts stop distinguishing call sites by them:
# the parameter is bound to the union seen so far (bounds the number of contexts per function).
MAX_BOUND_VALUES = 24

# In a parameter's bound set: the argument may be missing, so the parameter may hold its default
# too (`f(*args)` / `f(**kw)` that may not fill it; `f(**D[k])` over dicts of different keys).
# Reading the parameter (Evaluator.lookup) replaces it by the default and annotation; anything
# else that reads a bound set sees an unknown, never nothing.
OR_DEFAULT = VUnknown("the argument may be missing here: the parameter may hold its default")


class ParamBinding(Rule):
    """a parameter typed from the argument bound at the caller's call site: keywords,
    positionals, defaults, `*args`/`**kwargs` pass-through; `f(**D[k])` over several dicts binds
    each key to what any of them gives, and a parameter that a `*`/`**` argument may not fill
    also holds its default. Contexts are per call site, so a shared helper never mixes the
    models of two callers"""

    name = "param-binding"
    where = ("semantics/binding.py", "infer/evaluator.py")


def param_names(fn: FuncInfo) -> list[str]:
    a = fn.node.args
    names = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]
    if a.vararg:
        names.append(a.vararg.arg)
    if a.kwarg:
        names.append(a.kwarg.arg)
    return names


def self_context(fn: FuncInfo, self_val: Value) -> Ctx:
    """The context of a method entered with `self` bound and nothing else (an entry, a Jedi
    answer, a whole-tree start); a function or static method gets no binding."""
    a = fn.node.args
    if fn.cls is not None and fn.kind not in ("staticmethod", "classmethod") and (a.posonlyargs or a.args):
        return Ctx(fn.qual, (((a.posonlyargs + a.args)[0].arg, frozenset({self_val})),))
    return Ctx(fn.qual)


def bind(fn: FuncInfo, self_val: Value | None, args: CallArgs, closure: Ctx | None) -> Ctx:
    a = fn.node.args
    positional, kwonly = fn.signature()
    binds: dict[str, FrozenSet[Value]] = {}
    if self_val is not None and positional and fn.kind != "staticmethod":
        binds[positional[0]] = frozenset({self_val})
        positional = positional[1:]
    pos = list(args.pos)
    defaulted = fn.defaults()
    for i, name in enumerate(positional):
        if i < len(pos):
            binds[name] = pos[i]
        elif args.has_star and args.star:   # `*xs` may be too short to reach it
            binds[name] = args.star | ({OR_DEFAULT} if name in defaulted else EMPTY)
    extra = pos[len(positional):]
    if a.vararg:
        elems = frozenset().union(*extra) if extra else EMPTY
        if args.has_star:
            elems |= args.star
        binds[a.vararg.arg] = frozenset({VSeq(elems, "tuple", tuple(extra) if not args.has_star else None)})
    leftover: dict[str, FrozenSet[Value]] = {}
    for key, val in args.kw.items():
        if key in positional or key in kwonly:   # no default: a missing one raises, no call
            binds[key] = val if key in defaulted or OR_DEFAULT not in val else val - {OR_DEFAULT}
        else:
            leftover[key] = val
    if args.has_kw_star and args.kw_star:   # `**m` of unknown keys may or may not name it
        for name in positional + kwonly:
            if name not in binds:
                binds[name] = args.kw_star | ({OR_DEFAULT} if name in defaulted else EMPTY)
    if args.complete and not args.has_star:  # a call that gives none of them: their defaults, exactly
        for name in positional[len(pos):] + kwonly:
            if name not in binds and name in defaulted:
                binds[name] = frozenset({OR_DEFAULT})
    if a.kwarg:
        items = tuple(sorted(leftover.items()))
        elems = frozenset().union(*leftover.values()) if leftover else EMPTY
        binds[a.kwarg.arg] = frozenset({VSeq(elems | args.kw_star, "dict", None, items if not args.has_kw_star else None)})
    for name, vals in list(binds.items()):
        binds[name] = _bounded(vals)
    return Ctx(fn.qual, tuple(sorted(binds.items(), key=lambda kv: kv[0])), closure)


# One call's argument sets are bound once per target: a call dispatched over a class hierarchy
# binds the same sets to 2,500 overrides (transformers' `self.model(**inputs)`). Large sets are
# normalised once (and their order read once), the answer kept for the next target.
_MEMO_FROM = 8
_MEMO_ENTRIES = 4_096
_BOUNDED: dict[FrozenSet[Value], FrozenSet[Value]] = {}


def _bounded(vals: FrozenSet[Value]) -> FrozenSet[Value]:
    """`vals` as a context keeps them: normalised (`_normal`), the first MAX_BOUND_VALUES and
    an unknown for the others (dropping them would drop callees: a false "unreachable")."""
    if len(vals) < _MEMO_FROM:
        return _normal(vals)
    found = _BOUNDED.get(vals)
    if found is None:
        found = _normal(vals)
        if len(found) > MAX_BOUND_VALUES:   # the rest may be anything: say so, never drop them
            found = frozenset(ordered(found)[:MAX_BOUND_VALUES]) | {_TRUNCATED}
        if len(_BOUNDED) >= _MEMO_ENTRIES:
            _BOUNDED.clear()
        _BOUNDED[vals] = found
    return found


_OPAQUE_UNKNOWN = VUnknown("argument not inferred at the call site")
OPAQUE_UNKNOWN = _OPAQUE_UNKNOWN  # what a parameter read sees (semantics/leaf_annotation.py)
# what stands for the values cut from a bound parameter's set (calls on it stay unresolved)
_TRUNCATED = VUnknown(f"more than {MAX_BOUND_VALUES} values bound to one parameter; the rest "
                      f"not followed")
_OPAQUE_EXT = VExt("<external value>")


def _external_method(name: str) -> bool:
    """`ext.Cls().fun`: a method of an external instance keeps its name (`external.callee_name`)."""
    return "(" in name and callee_name(name) is not None


def _external_instance(name: str) -> bool:
    """`torch.nn.Linear()`: an instance of an outside class made by name keeps its name, since
    calling it runs that class's code only, where `<external value>` may be anything."""
    head = name[:-2] if name.endswith("()") else ""
    return bool(head) and "(" not in head and not head.startswith("<") and head.rsplit(".", 1)[-1][:1].isupper()


def _normal(vals: FrozenSet[Value]) -> FrozenSet[Value]:
    """Forget what cannot change a call's resolution, so callers that pass different tensors,
    flags or literals share one context: which literal a literal other than a string or None
    is (None stays apart: `x is None` is decided by it), the reasons of unknown
    values, and which external object an external value is (`torch.cat()` or `x.float()`:
    calls on either are external alike). External classes and functions keep their names,
    since containers and builtins are modelled by name, and so do methods of instances of
    external classes (`a.fun` of `a = ext.Cls()`), since a call of one is recorded by name."""
    for v in vals:
        if isinstance(v, (VUnknown, VConst, VExt)):
            break
    else:
        return vals  # nothing to forget (the common case: instances, functions, classes)
    out = set()
    for v in vals:
        if v == OR_DEFAULT:
            out.add(OR_DEFAULT)
        elif isinstance(v, VUnknown):
            out.add(_OPAQUE_UNKNOWN)
        elif isinstance(v, VConst) and not isinstance(v.value, (str, StrPattern)):  # names kept (getattr)
            out.add(NONE if v.value is None else SOME_LITERAL)  # None apart: `x is None` is decided
        elif isinstance(v, VExt) and ("(" in v.name or v.name.startswith("<")) and not _external_method(v.name) \
                and not _external_instance(v.name):
            out.add(_OPAQUE_EXT)
        else:
            out.add(v)
    return frozenset(out)


RULE = ParamBinding()
