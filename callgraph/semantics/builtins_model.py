"""Python builtins that pass values through: `getattr(obj, "name")`, `super()`, `type(x)`,
`list/tuple/sorted/iter/next(...)`, `dict(...)`, `copy.copy/deepcopy`, `object.__new__(cls)`,
`typing.cast`, and a container's own methods (`.values()`, `.items()`, `.get()`). The iterators
(`enumerate`, `zip`, `reversed`, `itertools`) are their own rule (`iterators.py`).

Without these, `for name, layer in self.layers.items(): layer(x)` or
`getattr(self, "language_model")(x)` would lose the module being called.
"""
from __future__ import annotations

from typing import FrozenSet

from ..values import EMPTY, LITERAL_OR_NONE, NONE, Lit, Value, VClass, VConst, VExt, VInst, VSeq, VUnknown
from . import class_of, computed_getattr, super_call
from .binding import OR_DEFAULT
from .rule import Call, Outcome, Rule

PASS_FIRST = {"builtins.list", "builtins.tuple", "builtins.set", "builtins.frozenset", "builtins.sorted",
              "builtins.iter", "builtins.filter"}
IDENTITY = {"copy.copy", "copy.deepcopy", "builtins.id", "torch.compile", "torch.jit.script", "torch.jit.trace",
            "torch.nn.DataParallel", "torch.nn.parallel.DistributedDataParallel",
            "torch.nn.parallel.DataParallel"}
# torch's function markers: given a function they return it (`allow_in_graph`, `jit.ignore`,
# `jit.unused` set a flag on it and return it) or a wrapper that calls it (`compiler.disable`);
# given a non-callable (`jit.ignore(True)`, `disable(recursive=False)`) they return a decorator,
# which stays an outside function's result (`_call` checks)
FN_MARKERS = {"torch.compiler.allow_in_graph", "torch._dynamo.allow_in_graph", "torch.compiler.disable",
              "torch._dynamo.disable", "torch.jit.ignore", "torch.jit.unused"}
IDENTITY |= FN_MARKERS
# Container values whose methods are those of a builtin type (`builtins.dict.items`).
BUILTIN_KINDS = {"list", "dict", "tuple", "set"}
_BUILTIN_TYPES = {t.__name__: t for t in (list, dict, tuple, set, frozenset, str, bytes, int, float, complex, bool,
                                          type(None))}


def builtin_lacks(type_name: str, attr: str) -> bool:
    """Whether a value of builtin type `type_name` has no attribute `attr` (Python would raise
    AttributeError, so the attribute stands for no value and no call): `None.view` on the
    `self.x = None` path of an attribute, `list.float`. The running interpreter's own builtins
    answer; a type not listed here is taken to have every attribute."""
    t = _BUILTIN_TYPES.get(type_name)
    return t is not None and not hasattr(t, attr)
# Calls whose result depends on strings computed at run time: never "external", always unknown.
DYNAMIC = {"importlib.import_module": "a module imported by a computed name (importlib.import_module)",
           "builtins.__import__": "a module imported by a computed name (__import__)",
           "builtins.eval": "eval() of a string", "builtins.globals": "globals() lookup",
           "builtins.locals": "locals() lookup", "builtins.vars": "vars() lookup"}


def handles(name: str) -> bool:
    return name in PASS_FIRST or name in IDENTITY or name in DYNAMIC or name in {
        "builtins.getattr", "builtins.super", "builtins.type", "builtins.next",
        "builtins.dict", "collections.OrderedDict", "builtins.min", "builtins.max", "typing.cast",
        "builtins.object.__new__"}


class Builtins(Rule):
    """Builtins that pass values through: `getattr(obj, "name")`, `type(x)`,
    `list/tuple/sorted/iter/next`, `dict`, `copy.copy/deepcopy`, `object.__new__(cls)` (an
    instance of cls: `super().__new__(cls)` where no class after defines `__new__`),
    `typing.cast`, `torch.compile`, torch's function markers (`torch.compiler.allow_in_graph(f)`,
    `disable(f)`, `torch.jit.ignore(f)`/`unused(f)` return `f` or a wrapper calling it); dynamic imports, `eval` and `globals()` give unknown"""

    name = "builtins"
    where = ("semantics/builtins_model.py",)
    kinds = (VExt,)
    on_edges = False  # they make values; the hop is named by the rule that calls the value

    def applies(self, call: Call) -> bool:
        return handles(call.value.name)

    def apply(self, call: Call) -> Outcome:
        return _call(call.ev, call.value, call.args, call.scope, call.tags)


def _call(ev, v, args, scope, tags):
    name = v.name
    if name == "builtins.getattr" and len(args.pos) >= 2:
        return computed_getattr.read(ev, args, tags)  # constant names (no pattern: that rule's)
    if name in DYNAMIC:
        return frozenset({VUnknown(DYNAMIC[name])})
    if name == "builtins.object.__new__" and args.pos:  # `super().__new__(cls)`: an instance of cls
        return frozenset(VInst(c.qual) if isinstance(c, VClass) else VUnknown("object.__new__ of a class not inferred")
                         for c in args.pos[0])
    if name == "builtins.super":
        return super_call.made(ev, args, scope)
    if name == "builtins.type" and len(args.pos) == 1:
        out = set()
        for m in args.pos[0]:
            if isinstance(m, VInst):
                out |= class_of.classes(ev, m, tags)  # its class, or any of its cone's
            else:  # a literal's, a function's, an outside object's: a class from outside; unknown stays so
                out.add(m if isinstance(m, VUnknown) else VExt("builtins.type()"))
        return frozenset(out)
    if name in PASS_FIRST:
        if not args.pos:
            return frozenset({VSeq(EMPTY, "list")})
        src = args.pos[-1] if name == "builtins.filter" else args.pos[0]
        return frozenset({VSeq(ev.iterate(src, tags), "list")})
    if name == "builtins.next" and args.pos:  # `next(it, None)`: the default when it is exhausted
        return ev.iterate(args.pos[0], tags) | (args.pos[1] if len(args.pos) > 1 else EMPTY)
    if name in ("builtins.dict", "collections.OrderedDict"):
        keys = tuple(sorted(args.kw.items()))
        elems = frozenset().union(*args.kw.values()) if args.kw else EMPTY
        for a in args.pos[:1]:
            for m in a:
                if isinstance(m, VSeq) and m.kind == "dict":
                    elems |= m.elems
                else:  # dict([(k, v), ...]) / OrderedDict of pairs: the values
                    for pair in ev.iterate(frozenset({m}), tags):
                        if isinstance(pair, VSeq) and pair.items and len(pair.items) == 2:
                            elems |= pair.items[1]
                        elif isinstance(pair, VSeq):
                            elems |= pair.elems
            keys = None
        return frozenset({VSeq(elems, "dict", None, keys)})
    if name in ("builtins.min", "builtins.max") and len(args.pos) == 1:  # `default=` when it is empty
        return ev.iterate(args.pos[0], tags) | args.kw.get("default", EMPTY)
    if name in FN_MARKERS and (not args.pos or any(isinstance(a, VConst) for a in args.pos[0])):
        return None  # a flag, not a function: the result is a decorator (an outside function's)
    if name in IDENTITY and args.pos:
        return args.pos[0] if name != "builtins.id" else frozenset({VConst(Lit("int"))})
    if name == "typing.cast":  # cast(typ, val): the value, whatever the type says
        if len(args.pos) == 2:
            return args.pos[1]
        if "val" in args.kw:
            return args.kw["val"]
    return None


def present(vals: FrozenSet[Value], default: FrozenSet[Value]) -> FrozenSet[Value]:
    """A dict's values for a key that a `**` spread may have left out (binding.OR_DEFAULT among
    them: `f(**kwargs)` of a TypedDict's keys, any of which may be missing): the key's values,
    or, where it is missing, what the lookup gives then (`get`'s default, nothing for `d[k]`,
    which raises). The marker itself is no value of the dict: read as one, it was an unknown
    ("the argument may be missing here") blocking `kwargs.pop("cache", None)`."""
    if OR_DEFAULT not in vals:
        return vals
    return (vals - {OR_DEFAULT}) | default


def seq_method(ev, seq: VSeq, attr: str, args, tags):
    """A container's own method called: `.values()`, `.items()`, `.get(k)`, `.pop()`..."""
    tags.add("container")
    if attr in ("values", "copy", "__iter__"):
        return frozenset({VSeq(seq.elems, "list")}) if attr == "values" else frozenset({seq})
    if attr == "items":
        keyset = LITERAL_OR_NONE  # the keys are not followed: any literal, None included
        return frozenset({VSeq(frozenset({VSeq(seq.elems, "tuple", (keyset, seq.elems))}), "list")})
    if attr in ("get", "pop", "setdefault", "__getitem__"):
        # what a missing key gives: the default (None for `get`/`setdefault` without one); a
        # key of the table may be missing too (a `pop` or `del` before is not followed)
        default = args.pos[1] if len(args.pos) > 1 else (frozenset({NONE}) if attr in ("get", "setdefault") else EMPTY)
        if seq.keys is not None and args.pos and args.pos[0]:
            table = dict(seq.keys)
            if all(isinstance(k, VConst) and k.value in table for k in args.pos[0]):  # every key one of its literals
                found = frozenset().union(*(table[k.value] for k in args.pos[0]))
                return present(found, default) | default
        return present(seq.elems, default) | default
    if attr == "keys":
        return frozenset({VSeq(LITERAL_OR_NONE, "list")})
    if builtin_lacks(seq.kind, attr):
        return EMPTY
    return frozenset({VExt(f"builtins.{seq.kind}.{attr}()")})


RULE = Builtins()
