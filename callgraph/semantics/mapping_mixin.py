"""`mapping-mixin`: the methods `collections.abc.Mapping` / `MutableMapping` give an in-tree
subclass (`get`, `__contains__`, `pop`, `setdefault`) run the class's own `__getitem__`.

transformers' `AttentionInterface(GeneralInterface)` is a `MutableMapping` with its own
`__getitem__` (a local mapping, then the class-wide one); `get_interface` ends with
`super().get(attn_implementation, default)`, the abc mixin, which does `try: return self[key]
except KeyError: return default`. Without this model the result was an outside function's, and
every attention layer's `attention_interface(...)` a blocker.

`obj.get(key, default)` / `super().get(...)` on an instance of an in-tree class whose outside
bases are only these abcs, with an in-tree `__getitem__` and no method of that name of its own,
is a bound mixin method (`values.VMixin`); calling it runs `__getitem__(key)` (an edge of this
rule: what it calls is explored) and gives what that returns, or the default (`get`: None when
none is given). `pop` also runs `__delitem__`, `setdefault` `__setitem__(key, default)`;
`__contains__` gives a bool. The other mixins (`keys`, `items`, `values`, `__eq__`) are not
modelled: they stay outside attributes, unknown when their result is called.
"""
from __future__ import annotations

from ..values import BOOL, NONE, VInst, VMixin
from .rule import Call, CallArgs, Outcome, Rule

MAPPING_ABCS = frozenset({"collections.abc.Mapping", "collections.abc.MutableMapping", "typing.Mapping",
                          "typing.MutableMapping"})
# mixin -> the in-tree methods it runs besides __getitem__ (whose value it gives)
MIXINS = {"get": (), "__contains__": (), "pop": ("__delitem__",), "setdefault": ("__setitem__",)}


class MappingMixin(Rule):
    """`collections.abc.Mapping` / `MutableMapping` mixins on an in-tree subclass with its own
    `__getitem__`: `obj.get(key, default)` / `super().get(...)` runs `__getitem__(key)` and gives
    what it returns or the default; `pop` / `setdefault` / `__contains__` likewise (transformers'
    `ALL_ATTENTION_FUNCTIONS.get_interface(...)`, an `AttentionInterface`, is `super().get`)"""

    name = "mapping-mixin"
    where = ("semantics/mapping_mixin.py", "infer/classes.py", "semantics/super_call.py")
    kinds = (VMixin,)

    def apply(self, call: Call) -> Outcome:
        v, args, d = call.value, call.args, call.dispatch
        cm = call.ev.classes
        key = args.pos[0] if args.pos else args.kw.get("key")
        if key is None or args.has_star or args.has_kw_star:
            return None  # not read: the call stays what an outside method's is
        default = args.pos[1] if len(args.pos) > 1 else args.kw.get("default")
        call.tags.add(self.name)
        found = cm.method(v.inst.qual, "__getitem__")
        call.calls.invoke(found[0], v.inst, CallArgs([key]), None, self.name, d, returning=v.attr != "__contains__")
        for extra in MIXINS[v.attr]:
            more = cm.method(v.inst.qual, extra)
            if more is not None:
                extra_args = [key] + ([default if default is not None else frozenset({NONE})]
                                      if extra == "__setitem__" else [])
                call.calls.invoke(more[0], v.inst, CallArgs(extra_args), None, self.name, d, returning=False)
        if v.attr == "__contains__":
            return frozenset({BOOL})
        if default is not None:
            return default
        return frozenset({NONE}) if v.attr == "get" else frozenset()


RULE = MappingMixin()


def mixin(cm, inst, attr: str):
    """The bound mixin `inst.attr`, or None where the rule does not apply: `inst` an instance of
    exactly an in-tree class whose outside bases are only the mapping abcs (nothing else adds methods),
    with an in-tree `__getitem__` and no `attr` of its own along the MRO."""
    if attr not in MIXINS or inst.__class__ is not VInst or not inst.exact:
        return None  # known only by a base type: a subclass may override the method
    ext = set(cm.external_bases(inst.qual))
    if not ext or not ext <= MAPPING_ABCS or cm.unknown_bases(inst.qual):
        return None
    if cm.method(inst.qual, attr) is not None or cm.method(inst.qual, "__getitem__") is None:
        return None
    return VMixin(inst, attr)
