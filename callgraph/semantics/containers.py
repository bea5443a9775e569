"""torch containers: `nn.ModuleList`, `nn.Sequential`, `nn.ModuleDict` (and their Parameter twins).

At run time these hold the modules given to their constructor; iterating, indexing or slicing
them gives those modules back, and calling a `Sequential` calls each of them in turn. We model
them as a container value holding the constructor's elements.
"""
from __future__ import annotations

import ast
from functools import lru_cache
from typing import FrozenSet

from ..index.scopes import ADDING_METHODS
from ..values import EMPTY, Value, VConst, VExt, VSeq, VSeqMethod
from .builtins_model import BUILTIN_KINDS, builtin_lacks, seq_method
from .rule import Call, Outcome, Rule

_PREFIXES = ("torch.nn.", "torch.nn.modules.container.", "nn.")
KINDS = {"ModuleList": "list", "Sequential": "Sequential", "ModuleDict": "dict", "ParameterList": "list", "ParameterDict": "dict"}


@lru_cache(maxsize=4096)
def container_kind(name: str) -> str | None:
    for prefix in _PREFIXES:
        if name.startswith(prefix) and name[len(prefix):] in KINDS:
            return KINDS[name[len(prefix):]]
    return None


class Containers(Rule):
    """`nn.ModuleList` / `nn.Sequential` / `nn.ModuleDict` / lists, tuples and dicts of layers:
    iteration, indexing (literal keys of any type: `1` and `"1"` differ), slicing (literal
    bounds keep positions), `.values()`/`.items()`; values put in later
    (`layers.append(Layer(i))`, `extend`, `d[k] = v`, `d["a"]["b"] = v`, `update`) are
    elements too. Within the body that binds the container, stores count in statement order:
    one that certainly ran replaces its literal key (`d = {"a": f1}; d["a"] = f2` then `d["a"]`
    is `f2`), one under a condition adds to it; stores made in other functions
    (`REGISTRY[name] = cls` in a `register` helper) count at every read of that global. A plain
    rebinding in straight-line code hides the earlier value from the reads after it. Calling a
    `Sequential` calls each layer"""

    name = "container"
    where = ("semantics/containers.py", "infer/sequences.py", "infer/stores.py", "index/flow.py")
    kinds = (VExt, VSeq, VSeqMethod)

    def applies(self, call: Call) -> bool:
        v = call.value
        if v.__class__ is VExt:
            return container_kind(v.name) is not None
        return v.__class__ is VSeqMethod or v.kind == "Sequential"

    def apply(self, call: Call) -> Outcome:
        v = call.value
        if v.__class__ is VExt:
            return _made(call, container_kind(v.name))
        if v.__class__ is VSeqMethod:
            # `d.items()`: a method of a builtin container runs. The methods that put values in
            # (`append`, `update`...) are modelled as stores into the container, not as calls.
            if v.seq.kind in BUILTIN_KINDS and v.attr not in ADDING_METHODS and not builtin_lacks(v.seq.kind, v.attr):
                call.dispatch.externals.append(f"builtins.{v.seq.kind}.{v.attr}")
            return seq_method(call.ev, v.seq, v.attr, call.args, call.tags)
        call.tags.add(self.name)  # a Sequential called calls each of its layers
        out: set = set()
        for elem in v.elems:
            out |= call.calls.call_value(elem, call.args, call.node, call.scope, call.dispatch, call.tags)
        return frozenset(out)


def _made(call: Call, kind: str) -> Outcome:
    """A container constructed: the modules given to it are its elements."""
    ev, args, tags = call.ev, call.args, call.tags
    elems = set()
    if kind == "Sequential":
        for a in args.pos:
            for m in a:
                # Sequential(OrderedDict(...)) and Sequential(*layers) both end up here
                elems |= ev.iterate(frozenset({m}), tags) if isinstance(m, VSeq) else {m}
        elems |= args.star
    else:
        for a in args.pos[:1]:
            for m in a:
                if isinstance(m, VSeq):
                    elems |= m.elems
                else:
                    elems |= ev.iterate(frozenset({m}), tags)
    return frozenset({VSeq(frozenset(elems) or EMPTY, kind)})


# -- reading a container value: iteration, unpacking, subscripts -------------------------------
def elements(v: VSeq, tags: set[str]) -> FrozenSet[Value]:
    """`for x in v`: its elements; a dict's keys where they are known."""
    tags.add(RULE.name)
    return v.elems if v.kind != "dict" or v.keys is None else frozenset({VConst(k) for k, _ in v.keys})


def unpacked(v: VSeq, step, tags: set[str]) -> FrozenSet[Value]:
    """One step of a target list (`a, b = v`: position `step`; `*rest`: a list of the rest)."""
    tags.add(RULE.name)
    if step != "*" and v.items is not None and step < len(v.items):
        return v.items[step]
    if step == "*":
        return frozenset({VSeq(v.elems, "list")})
    return v.elems


def item(v: VSeq, index: ast.AST, tags: set[str]) -> FrozenSet[Value]:
    """`v[index]`: the value at a literal key or position where they are kept, a slice keeping
    positions under literal bounds, any element otherwise."""
    tags.add(RULE.name)
    if isinstance(index, ast.Slice):
        return frozenset({_sliced(v, index)})
    if v.keys is not None and isinstance(index, ast.Constant):
        return dict(v.keys).get(index.value, v.elems)
    if v.items is not None and isinstance(index, ast.Constant) and type(index.value) is int:
        i = index.value
        return v.items[i] if -len(v.items) <= i < len(v.items) else v.elems
    return v.elems


def _sliced(v: VSeq, s: ast.Slice) -> VSeq:
    """`xs[1:3]`: with literal bounds (or none) and known positions, the positions kept."""
    kind = v.kind if v.kind != "tuple" else "list"
    bounds = [None if b is None else b.value if isinstance(b, ast.Constant) else ... for b in (s.lower, s.upper, s.step)]
    known = all(b is None or type(b) is int for b in bounds) and (bounds[2] or 1) != 0
    if v.items is None or not known:
        return VSeq(v.elems, kind)
    items = v.items[slice(*bounds)]
    return VSeq(frozenset().union(*items) if items else EMPTY, kind, items)


RULE = Containers()
