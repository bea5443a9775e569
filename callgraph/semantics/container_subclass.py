"""`container-subclass`: an instance of an in-tree subclass of `dict` / `OrderedDict` / `list`
holds what it was constructed with, and `obj[key]` runs the class's own `__getitem__`.

transformers' activations are `ACT2FN = ClassInstantier(ACT2CLS)`, an `OrderedDict` subclass
whose `__getitem__` does `content = super().__getitem__(key)` and instantiates the class stored
under the key; every MLP does `self.act_fn = ACT2FN[config.hidden_act]` then `self.act_fn(x)`.
Without this model the item was unknown and every MLP's activation call a blocker.

At construction (`Cls(mapping)`, `Cls(iterable)`, `Cls(k=v)`) of such a class with no
`__init__` of its own, the instance remembers the container its base's constructor was given
(kept with the instance's `__init__` arguments, under `HELD`). `obj[key]` binds `key` to the
subscript's value and runs an in-tree `__getitem__` (the `return-type` of that call); inside
it, `super().__getitem__(key)`, `super().get(...)` and the like read the held container: the
value under a constant key where the keys are literal, every value otherwise. Without an
in-tree `__getitem__`, indexing, iterating and the mapping methods read the held container
directly. A subclass with its own `__init__` or `__missing__`, or a `defaultdict`, keeps nothing (its items stay
unknown, as before), and so does a store into the instance after construction
(`ACT2FN["x"] = Cls` is read as a plain container's item, not through `__getitem__`).
"""
from __future__ import annotations

from typing import FrozenSet

from ..values import EMPTY, Value, VClass, VExt, VFunc, VInst, VSeq, VSeqMethod
from .rule import Rule

HELD = "<held items>"  # the VInst.init entry naming what the base container was given
DICT_BASES = frozenset({"builtins.dict", "collections.OrderedDict", "collections.UserDict", "typing.Dict"})
LIST_BASES = frozenset({"builtins.list", "collections.UserList", "typing.List", "builtins.tuple", "builtins.set"})
# a container's own methods that read its items (what `seq_method` models)
READING = frozenset({"__getitem__", "get", "pop", "setdefault", "values", "items", "keys", "copy", "__iter__"})


class ContainerSubclass(Rule):
    """an instance of an in-tree `dict` / `OrderedDict` / `list` subclass (no `__init__` of its
    own) holds what it was constructed with; `obj[key]` runs the class's own `__getitem__` with
    the key, and `super().__getitem__(key)` in it reads the held items: by key where constant,
    every value otherwise (transformers' `ACT2FN[config.hidden_act]` instantiates each
    activation class `ClassInstantier(ACT2CLS)` holds); unpacking a function, an in-tree class
    with no metaclass, or a torch.nn module class (`nn.ReLU`: metaclass `type`) raises, so
    `cls, kw = content if isinstance(content, tuple) else (content, {})` gives no value there"""

    name = "container-subclass"
    where = ("semantics/container_subclass.py", "semantics/constructor.py", "infer/calls.py",
             "infer/classes.py", "infer/sequences.py", "semantics/super_call.py")


RULE = ContainerSubclass()


def base_kind(cm, qual: str) -> str | None:
    """"dict" or "list" for an in-tree class whose outside base is one of those containers
    (and nothing else that could add behaviour), None otherwise."""
    ext = set(cm.external_bases(qual))
    if not ext or cm.unknown_bases(qual):
        return None
    if ext <= DICT_BASES:
        return "dict"
    if ext <= LIST_BASES:
        return "list"
    return None


def held_at_construction(ev, qual: str, args) -> tuple:
    """The `VInst.init` entry for `qual(args)`: what the base container's constructor was
    given, or () when the class does not qualify (it keeps nothing: items stay unknown)."""
    kind = base_kind(ev.classes, qual)
    if kind is None or ev.classes.method(qual, "__missing__") is not None or args.has_star or args.has_kw_star or len(args.pos) > 1:
        return ()
    if kind == "list":
        if args.kw:
            return ()
        elems = ev.iterate(args.pos[0], set()) if args.pos else EMPTY
        return ((HELD, frozenset({VSeq(elems, "list")})),)
    seqs: set[Value] = set()
    for m in (args.pos[0] if args.pos else frozenset({VSeq(EMPTY, "dict", None, ())})):
        if isinstance(m, VSeq) and m.kind == "dict":
            seqs.add(m)
        else:  # pairs, or anything else: its values, no keys
            vals: set[Value] = set()
            for pair in ev.iterate(frozenset({m}), set()):
                vals |= pair.items[1] if isinstance(pair, VSeq) and pair.items and len(pair.items) == 2 else (
                    pair.elems if isinstance(pair, VSeq) else {pair})
            seqs.add(VSeq(frozenset(vals), "dict"))
    if args.kw:
        kw = tuple(sorted(args.kw.items()))
        seqs = {VSeq(s.elems | frozenset().union(*args.kw.values()), "dict", None,
                     (tuple(dict(s.keys + kw).items()) if s.keys is not None else None)) for s in seqs}
    return ((HELD, frozenset(seqs)),)


def held(v: Value) -> FrozenSet[VSeq]:
    """The containers an instance was constructed with (empty: not known)."""
    if v.__class__ is not VInst:
        return EMPTY
    for name, vals in v.init:
        if name == HELD:
            return vals
    return EMPTY


def item_methods(v: Value, attr: str) -> FrozenSet[Value]:
    """`super().attr` / `obj.attr` for a method of the base container reading the held items
    (bound: calling it reads them, `semantics/containers.py`); empty when nothing is held."""
    if attr not in READING:
        return EMPTY
    return frozenset(VSeqMethod(s, attr) for s in held(v))


# torch.nn's classes whose metaclass is not `type` (tensor metaclasses): left out of
# `outside_plain_class`, though none of them is iterable either (checked on torch 2.13)
TORCH_NN_META = frozenset({"Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer"})


def outside_plain_class(name: str) -> bool:
    """Whether the outside value `name` is a torch.nn module class (`torch.nn.ReLU`, as
    transformers' ACT2CLS holds it): every CapWords name of `torch.nn` itself is a subclass of
    `torch.nn.Module`, whose metaclass is plain `type` (no `__iter__`), but for the tensor
    classes above (read off torch 2.13: `type(getattr(torch.nn, n)) is type` for every other
    CapWords `n`). A name with a call (`torch.nn.ReLU()`, an instance) or deeper
    (`torch.nn.modules.x.Y`) is not one."""
    head, dot, last = name.rpartition(".")
    return head == "torch.nn" and last[:1].isupper() and "(" not in last and last not in TORCH_NN_META


def not_iterable(cm, v: Value) -> bool:
    """Whether unpacking `v` raises (so it gives no value): a function, an in-tree class
    whose metaclass cannot be iterable (no `metaclass=` along its MRO, outside bases only
    `torch.nn.Module`-like or markers), or a torch.nn module class (`outside_plain_class`).
    `cls, kw = content if isinstance(content, tuple) else (content, {})` then reads only the
    tuple branch's class."""
    if v.__class__ is VFunc:
        return True
    if v.__class__ is VExt:
        return outside_plain_class(v.name)
    if v.__class__ is not VClass or cm.unknown_bases(v.qual):
        return False
    for k in cm.mro(v.qual):
        info = cm.info(k)
        if info is None or any(kw.arg == "metaclass" for kw in info.node.keywords):
            return False
    return all(b.startswith(("torch.nn.", "nn.")) for b in cm.external_bases(v.qual))
