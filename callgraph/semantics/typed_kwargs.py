"""`typed-kwargs`: `**kwargs: Unpack[TD]`, TD an in-tree TypedDict, holds TD's keys, each what its
field's annotation names.

transformers' layers take `**kwargs: Unpack[TransformersKwargs]` (`cu_seq_lens_q:
torch.LongTensor | None`, `max_length_q: int | None`, ...) and hand them on to the attention
functions (`attention_interface(self, q, k, v, mask, **kwargs)`). Where no call site binds the
parameter (an entry's, a widened context's), `**kwargs` was a dict of unknown values, and every
value read from it or spread from it was unknown: each parameter of the attention functions not
named otherwise, so `key.transpose(...)`, `position_ids.min()`, `s_aux.to(...)` were blockers of
every negative whose entry is a transformers layer.

The reading: two dicts, one holding every field of TD (its TypedDict bases' too) under its
key, with what the field's annotation names (read as a parameter's annotation is:
infer/annotations.py, `NotRequired[X]` as X), and one with no keys, since any key may be
missing (`total=False`, `NotRequired`, or a caller that leaves it out: a spread then fills a
parameter with its default too). Keys TD does not declare are taken to be absent: the trust the
analysis gives every annotation (a parameter annotated `torch.Tensor` is a tensor; an in-tree
subclass's overrides are not followed through it, open_values.LEAF_TYPES), and a caller that
passes an undeclared key breaks TD as one that passes a non-tensor breaks that annotation.
Where TD is not read this way, the dict of unknown values stands: a base from outside other
than TypedDict, a field that is not a plain annotation (`x: T` in the class body), more fields
than MAX_FIELDS.
"""
from __future__ import annotations

import ast
from typing import FrozenSet

from ..values import EMPTY, Value, VClass, VExt, VSeq
from .protocol import Scope
from .rule import Rule

UNPACK = frozenset({"typing.Unpack", "typing_extensions.Unpack"})
TYPED_DICT = frozenset({"typing.TypedDict", "typing_extensions.TypedDict"})
GENERIC = frozenset({"typing.Generic"})
MAX_FIELDS = 64


class TypedKwargs(Rule):
    """`**kwargs: Unpack[TD]` of an in-tree TypedDict TD, where no call site binds it: a dict
    of TD's keys (its TypedDict bases' too), each holding what its field's annotation names,
    any of them possibly missing; keys TD does not declare are absent, as an annotation says
    (transformers' `**kwargs: Unpack[TransformersKwargs]` handed to the attention functions)"""

    name = "typed-kwargs"
    where = ("semantics/typed_kwargs.py", "infer/annotations.py")


RULE = TypedKwargs()


def values(ev, ann: ast.AST | None, scope: Scope, tags: set[str]) -> FrozenSet[Value] | None:
    """What `**kwargs: ann` holds, or None where the annotation is not `Unpack[TD]` of a
    TypedDict TD whose fields are all read."""
    if not isinstance(ann, ast.Subscript):
        return None
    head = ev.eval(ann.value, scope, set())
    if not head or not all(isinstance(v, VExt) and v.name in UNPACK for v in head):
        return None
    classes = ev.eval(ann.slice, scope, set())
    if len(classes) != 1:
        return None
    (td,) = classes
    if not isinstance(td, VClass):
        return None
    fields = _fields(ev, td.qual, tags, set())
    if fields is None:
        return None
    tags.add(RULE.name)
    keys = tuple(sorted(fields.items()))
    elems = frozenset().union(*fields.values()) if fields else EMPTY
    return frozenset({VSeq(elems, "dict", None, keys), VSeq(EMPTY, "dict", None, ())})


def _fields(ev, qual: str, tags: set[str], seen: set[str]) -> dict[str, FrozenSet[Value]] | None:
    """Field name -> what its annotation names, bases first (a subclass's field of the same
    name replaces its base's); None where `qual` is not a TypedDict read whole."""
    if qual in seen:
        return None
    seen.add(qual)
    info = ev.p.classes.get(qual)
    if info is None:
        return None
    out: dict[str, FrozenSet[Value]] = {}
    typed = False
    for base in ev.classes.bases(qual):
        if isinstance(base, VExt) and base.name in TYPED_DICT:
            typed = True
        elif isinstance(base, VExt) and base.name in GENERIC:
            continue
        elif isinstance(base, VClass):
            inherited = _fields(ev, base.qual, tags, seen)
            if inherited is None:
                return None
            out.update(inherited)
            typed = True
        else:
            return None  # an outside base other than TypedDict, or one not resolved
    if not typed:
        return None
    scope = Scope(info.module, cls=info)
    for stmt in info.node.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
            out[stmt.target.id] = ev.annotation(stmt.annotation, scope, tags)
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue  # the docstring
        elif isinstance(stmt, ast.Pass):
            continue
        else:
            return None  # a method, an assignment: not a TypedDict body read here
    return out if len(out) <= MAX_FIELDS else None
