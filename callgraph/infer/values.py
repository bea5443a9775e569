"""Abstract values: what an expression may evaluate to, as far as calls are concerned.

An expression evaluates to a frozenset of these. They are small, hashable and compared by value,
so value sets can key memo tables and calling contexts.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import FrozenSet, Optional, Tuple


class Value:
    __slots__ = ()


@dataclass(frozen=True, slots=True)
class VModule(Value):
    name: str


@dataclass(frozen=True, slots=True)
class VClass(Value):
    qual: str


@dataclass(frozen=True, slots=True)
class VInst(Value):
    """An instance of an in-tree class. `exact=False` when only a base type is known (an
    annotation): method calls then dispatch to every override (class-hierarchy rule)."""

    qual: str
    exact: bool = True
    # The arguments its __init__ was called with (object sensitivity, one level): what
    # `self.model = model` in __init__ stores, for `Wrapper(model=DeepseekV2Model(...))`.
    init: Tuple[Tuple[str, FrozenSet["Value"]], ...] = ()


@dataclass(frozen=True, slots=True)
class VFunc(Value):
    """A function, method or lambda; `self_val` is set for a bound method, `closure` is the
    context of the enclosing function for nested defs and lambdas."""

    qual: str
    self_val: Optional[Value] = None
    closure: Optional["Ctx"] = None


@dataclass(frozen=True, slots=True)
class VPartial(Value):
    """functools.partial(func, *args, **kw): calling it calls func with the stored args first."""

    func: FrozenSet[Value]
    args: Tuple[FrozenSet[Value], ...] = ()
    kwargs: Tuple[Tuple[str, FrozenSet[Value]], ...] = ()


@dataclass(frozen=True, slots=True)
class VSeq(Value):
    """A container of values (list, ModuleList, Sequential, dict values, generator, set).
    `items` keeps positions where they are known (tuple literals, fixed-size returns)."""

    elems: FrozenSet[Value]
    kind: str = "list"
    items: Optional[Tuple[FrozenSet[Value], ...]] = None
    keys: Optional[Tuple[Tuple[str, FrozenSet[Value]], ...]] = None


@dataclass(frozen=True, slots=True)
class VSeqMethod(Value):
    """A container's own method, bound (`layers.values`, `mapping.get`): calls give elements."""

    seq: VSeq
    attr: str


@dataclass(frozen=True, slots=True)
class VSuper(Value):
    cls: str
    self_val: Value


@dataclass(frozen=True, slots=True)
class VExt(Value):
    """Something from outside the analysed roots (torch, builtins, numpy...). Calls on it run
    external code, which cannot reach the target except through callbacks."""

    name: str


@dataclass(frozen=True, slots=True)
class VConst(Value):
    """A literal (str, int, None, ...). Only strings are kept, for getattr/setattr names."""

    value: object = None


@dataclass(frozen=True, slots=True)
class VUnknown(Value):
    """Not inferable by the index; `why` says what is missing."""

    why: str


@dataclass(frozen=True, slots=True)
class Ctx:
    """A calling context: a function and the values its parameters are bound to at one call."""

    fn: str
    binds: Tuple[Tuple[str, FrozenSet[Value]], ...] = ()
    closure: Optional["Ctx"] = None

    def get(self, name: str) -> Optional[FrozenSet[Value]]:
        for k, v in self.binds:
            if k == name:
                return v
        return None


EMPTY: FrozenSet[Value] = frozenset()
NONE = VConst(None)


def memoised(table: dict, key, tags: set, compute) -> FrozenSet[Value]:
    """`compute(tags)`'s values and the rules that typed them, memoised in `table`; an entry in
    progress reads as empty (the recursion guard of the evaluator's memo tables)."""
    if key in table:
        vals, found = table[key]
        tags |= found
        return vals
    table[key] = (EMPTY, frozenset())
    found: set = set()
    result = frozenset(compute(found))
    table[key] = (result, frozenset(found))
    tags |= found
    return result


def unknown(why: str) -> FrozenSet[Value]:
    return frozenset({VUnknown(why)})
