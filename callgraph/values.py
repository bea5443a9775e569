"""Abstract values: what an expression may evaluate to, as far as calls are concerned.

An expression evaluates to a frozenset of these. They are small, hashable and compared by value,
so value sets can key memo tables and calling contexts.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import FrozenSet, Optional, Tuple

from .fixpoint import MAX_ROUNDS, MISSING, Solver


class Value:
    __slots__ = ()


# Stands in for None in the hashes below. Before Python 3.12, hash(None) is None's address,
# which address-space randomisation moves from run to run: a value holding None would hash
# differently in every process, and so would the order of every set holding it.
_NONE_HASH = 0x4E6F6E65


def _keys_hash(keys) -> tuple:
    return tuple((_NONE_HASH if k is None else k, v) for k, v in keys)


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

    def __hash__(self) -> int:
        return hash((self.qual, _NONE_HASH if self.self_val is None else self.self_val,
                     _NONE_HASH if self.closure is None else self.closure))


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

    def __hash__(self) -> int:
        return hash((self.elems, self.kind, _NONE_HASH if self.items is None else self.items,
                     _NONE_HASH if self.keys is None else _keys_hash(self.keys)))


@dataclass(frozen=True, slots=True)
class VSeqMethod(Value):
    """A container's own method, bound (`layers.values`, `mapping.get`): calls give elements."""

    seq: VSeq
    attr: str


@dataclass(frozen=True, slots=True)
class VMixin(Value):
    """A `collections.abc.Mapping` mixin method bound to an instance of an in-tree subclass
    (`interface.get`): calling it runs the class's own `__getitem__` (semantics/mapping_mixin.py)."""

    inst: Value
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
class Lit:
    """The `value` of a `VConst` that is a literal other than None, known by its type only:
    `int`, `float`, `bool`, `bytes`, `complex`, `ellipsis`, `str` (a string whose text is not
    known), or `""` (a literal of a type not known, a string included; never None). Literals
    of one type collapse, so contexts stay few; None stays apart, so `x is None` can be
    decided (`semantics/none_narrowing.py`)."""

    type: str = ""

    def types(self) -> tuple[str, ...]:
        """The builtin types' names it may be an instance of."""
        return (self.type,) if self.type else LITERAL_TYPES


# What a `Lit("")` may be an instance of.
LITERAL_TYPES = ("int", "float", "bool", "bytes", "complex", "str", "ellipsis")


@dataclass(frozen=True, slots=True)
class VConst(Value):
    """A literal. `None` is None itself; a string is kept (getattr/setattr names); any other
    literal is a `Lit` (its type), a dict's literal key may be the key itself (`1`)."""

    value: object = None

    def __hash__(self) -> int:
        return hash((_NONE_HASH if self.value is None else self.value,))


@dataclass(frozen=True, slots=True)
class VUnknown(Value):
    """Not inferable by the index; `why` says what is missing."""

    why: str


class Ctx:
    """A calling context: a function and the values its parameters are bound to at one call.

    Immutable and compared by value, like the values above, but written out: contexts key
    every memo table, so the hash is computed once (a dataclass would rehash the bindings at
    each lookup)."""

    __slots__ = ("fn", "binds", "closure", "_hash")
    FIELDS = ("fn", "binds", "closure")

    def __init__(self, fn: str, binds: Tuple[Tuple[str, FrozenSet[Value]], ...] = (),
                 closure: Optional["Ctx"] = None):
        self.fn = fn
        self.binds = binds
        self.closure = closure
        self._hash = hash((fn, binds, _NONE_HASH if closure is None else closure))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other) -> bool:
        if self is other:
            return True
        if other.__class__ is not Ctx:
            return NotImplemented
        return (self._hash == other._hash and self.fn == other.fn and self.binds == other.binds
                and self.closure == other.closure)

    def __repr__(self) -> str:
        return f"Ctx(fn={self.fn!r}, binds={self.binds!r}, closure={self.closure!r})"

    def __reduce__(self):  # the hash is the process's own (string hashes vary between runs)
        return (Ctx, (self.fn, self.binds, self.closure))

    def get(self, name: str) -> Optional[FrozenSet[Value]]:
        for k, v in self.binds:
            if k == name:
                return v
        return None


EMPTY: FrozenSet[Value] = frozenset()
NONE = VConst(None)
SOME_LITERAL = VConst(Lit())     # a literal, not None, of a type not known (a string included)
BOOL = VConst(Lit("bool"))       # what `is`, `in`, `==` of builtins ... give
# A key of a dict whose keys are not known, as far as literals go: None may be one
LITERAL_OR_NONE: FrozenSet["Value"] = frozenset({NONE, SOME_LITERAL})


_IN_PROGRESS = (frozenset(), frozenset())

# Distinct containers one value set keeps; past it, those of one kind merge into one (their
# elements, keys and positions unioned). Each path through conditional stores makes its own
# dict (`d["a"] = x` on one branch, not on the other), so without a bound the containers of one
# name grow with the paths: 127k dicts for transformers' `config_dict` in
# `PreTrainedConfig._get_config_dict`, 4 GB and minutes for one call site.
MAX_CONTAINER_VALUES = 16


def widen_containers(values: FrozenSet[Value]) -> FrozenSet[Value]:
    """`values`, with its containers merged by kind when there are more than
    MAX_CONTAINER_VALUES. The merge holds every element each one held (under each key, at each
    position where all agree on the length), so what a call on an element may run only grows."""
    if len(values) <= MAX_CONTAINER_VALUES:
        return values
    seqs = [v for v in values if v.__class__ is VSeq]
    if len(seqs) <= MAX_CONTAINER_VALUES:
        return values
    by_kind: dict[str, list[VSeq]] = {}
    for v in seqs:
        by_kind.setdefault(v.kind, []).append(v)
    out = set(values).difference(seqs)
    for kind, group in by_kind.items():
        out.add(_merged(kind, group))
    return frozenset(out)


def _merged(kind: str, group: list["VSeq"]) -> "VSeq":
    elems = frozenset().union(*(v.elems for v in group))
    items = keys = None
    lengths = {len(v.items) if v.items is not None else -1 for v in group}
    if len(lengths) == 1 and -1 not in lengths:
        items = tuple(frozenset().union(*column) for column in zip(*(v.items for v in group)))
    if all(v.keys is not None for v in group):
        table: dict = {}
        for v in group:
            for k, kv in v.keys:
                table[k] = table.get(k, EMPTY) | kv
        keys = tuple(sorted(table.items(), key=lambda kv: repr(kv[0])))
    return VSeq(elems, kind, items, keys)


# What a cycle's value may grow by, round after round, without end: `x = x.to()` in a loop
# names `torch.nn.Module.to().to()...`, `config = getattr(config, name)` over four names every
# path through them, `x = (x, y)` nests tuples. Past WIDEN_AFTER rounds (fixpoint.py) a cycle's
# value is widened: an outside value's name keeps one of each run of repeated parts, and past
# MAX_NAME_PARTS parts only its first and last two (the dropped middle marked `<widened>`, with
# `()` where it held a call); containers nested deeper than MAX_CYCLE_NESTING are unknown; the
# containers of one kind in one set (at any depth) are one, holding what each held
# (`_merged`); the instances of one class made with the same keywords are one, holding every
# argument. Nothing the names decide gets less cautious: a name's last parts are kept, and one
# that read as a method of an outside result (a leaf, `open_values.opaque_call`) may read as a
# function's result (open), never the other way round.
# The bounds are small so that a cycle settles well within MAX_ROUNDS: a name grows by one part
# a round, so a bound of 8 parts was met after the last round (transformers' cache layers,
# `self.conv_states[i] = self.conv_states[i].index_select(...).to(...)`, alternate two methods:
# no run repeats, and each round named new chains); containers nested in a new combination
# each round (`rope_parameters`, dicts of dicts) never settled while kept apart.
MAX_NAME_PARTS = 4
MAX_CYCLE_NESTING = 3


def widen_cycle(values: FrozenSet[Value]) -> FrozenSet[Value]:
    """`values` with names and nesting bounded (see above), so that a cycle settles. `values`
    itself when nothing needs widening: a cycle's stand-in is widened every round, and most of
    it is widened already (rebuilding every container each round was 2% of a query)."""
    return _widened_set(values, 0)


def _widened_set(values: FrozenSet[Value], depth: int) -> FrozenSet[Value]:
    widened = [_widened(v, depth) for v in values]
    if depth == 0:
        merged = _merged_instances(widened)
        if merged is not None:
            widened = list(merged)
    kinds = [w.kind for w in widened if w.__class__ is VSeq]
    if len(kinds) != len(set(kinds)):
        return _merged_containers(widened)
    if len(widened) != len(values):
        return frozenset(widened)
    for w, v in zip(widened, values):  # a value is rebuilt only where its widened form differs
        if w is not v:
            return frozenset(widened)
    return values


def _merged_containers(values: list) -> FrozenSet[Value]:
    """`values` with the containers of each kind merged into one holding what each held."""
    by_kind: dict[str, list] = {}
    out = set()
    for v in values:
        if v.__class__ is VSeq:
            by_kind.setdefault(v.kind, []).append(v)
        else:
            out.add(v)
    for kind, group in by_kind.items():
        out.add(group[0] if len(group) == 1 else _merged(kind, group))
    return frozenset(out)


def _merged_instances(values: list) -> FrozenSet[Value] | None:
    """`values` with the instances of one class made with the same keywords merged into one
    that holds every argument each was made with (None: no two to merge). A cycle's value may
    hold a new one each round: the arguments a call binds are the first MAX_BOUND_VALUES of
    a set that grows, so each round keeps another subset (`RagConfig.question_encoder`, which
    never settled)."""
    groups: dict = {}
    for v in values:
        if v.__class__ is VInst and v.init:
            groups.setdefault((v.qual, v.exact, tuple(k for k, _ in v.init)), []).append(v)
    if all(len(g) < 2 for g in groups.values()):
        return None
    out = set(values)
    for (qual, exact, keys), group in groups.items():
        if len(group) > 1:
            out.difference_update(group)
            out.add(VInst(qual, exact, tuple((k, frozenset().union(*(g.init[i][1] for g in group)))
                                             for i, k in enumerate(keys))))
    return frozenset(out)


def _widened(v: Value, depth: int) -> Value:
    cls = v.__class__
    if cls is VExt:
        name = _short_name(v.name)
        return v if name == v.name else VExt(name)
    if cls is VSeq:
        if depth >= MAX_CYCLE_NESTING:
            return VUnknown(f"a {v.kind} nested more than {MAX_CYCLE_NESTING} deep in a recursive value")
        inner = depth + 1
        elems = _widened_set(v.elems, inner)
        items = None if v.items is None else tuple(_widened_set(i, inner) for i in v.items)
        keys = None if v.keys is None else tuple((k, _widened_set(kv, inner)) for k, kv in v.keys)
        if elems is v.elems and (items is None or all(a is b for a, b in zip(items, v.items))) \
                and (keys is None or all(a[1] is b[1] for a, b in zip(keys, v.keys))):
            return v
        return VSeq(elems, v.kind, items, keys)
    return v


_SHORT_NAMES: dict[str, str] = {}  # a name and its widened form: names recur round after round


def _short_name(name: str) -> str:
    short = _SHORT_NAMES.get(name)
    if short is None:
        short = _SHORT_NAMES[name] = _shortened(name)
    return short


def _shortened(name: str) -> str:
    parts = name.split(".")
    kept = [parts[0]]
    for part in parts[1:]:
        if part != kept[-1]:
            kept.append(part)
    if len(kept) > MAX_NAME_PARTS:
        middle = kept[2:-2]
        kept = kept[:2] + ["<widened>()" if any("(" in m for m in middle) else "<widened>"] + kept[-2:]
    return ".".join(kept)


def memoised(solver: Solver, table: dict, key, tags: set, compute, share: "Shared | None" = None) -> FrozenSet[Value]:
    """`compute(tags)`'s values and the rules that typed them, memoised in `table`. The table
    doubles as a recursion guard: an entry in progress reads as what was found so far (empty at
    first), and `solver` keeps only what a settled cycle gave (`fixpoint.py`). `share`: the
    table is kept for the whole run, and its values are kept once each (`Shared`)."""
    hit = solver.read(table, key)
    if hit is MISSING:
        def entry() -> tuple:
            found: set = set()
            result = widen_containers(frozenset(compute(found)))
            if share is not None:
                result = share(result)
            return (result, tag_set(found))

        hit = solver.compute(table, key, entry, _IN_PROGRESS, _join_entries, same=_covered_entry,
                             unsettled=_unsettled_entry, widen=_widen_entry)
    if hit[1]:
        tags |= hit[1]
    return hit[0]


def join_values(a: FrozenSet[Value], b: FrozenSet[Value]) -> FrozenSet[Value]:
    """Both value sets, containers merged as a memo entry's are: a cycle's next stand-in."""
    return widen_containers(a | b)


def covered(grown: FrozenSet[Value], old: FrozenSet[Value]) -> bool:
    """Whether `old` holds all `grown` holds: each value is in `old`, or is a container that one
    of `old`'s holds (same kind and shape, each element there too). A cycle's round that only
    adds containers its stand-in's merged ones hold has settled: joined, containers merge past
    MAX_CONTAINER_VALUES, and the round after a merge added the unmerged ones again, so such a
    stand-in went back and forth between the two until MAX_ROUNDS (CLIP configs' `text_config`)."""
    if grown is old:
        return True
    seqs = None
    for v in grown:
        if v in old:
            continue
        if v.__class__ is not VSeq:
            return False
        if seqs is None:
            seqs = [m for m in old if m.__class__ is VSeq]
        if not any(_holds(m, v) for m in seqs):
            return False
    return True


def _holds(m: "VSeq", v: "VSeq") -> bool:
    if m.kind != v.kind or not v.elems <= m.elems:
        return False
    if (m.items is None) != (v.items is None) or (m.keys is None) != (v.keys is None):
        return False
    if v.items is not None and (len(v.items) != len(m.items) or not all(a <= b for a, b in zip(v.items, m.items))):
        return False
    if v.keys is not None:
        mk = dict(m.keys)
        if len(mk) != len(v.keys) or not all(k in mk and kv <= mk[k] for k, kv in v.keys):
            return False
    return True


def _covered_entry(grown: tuple, old: tuple) -> bool:
    return grown[1] <= old[1] and covered(grown[0], old[0])


def _join_entries(a: tuple, b: tuple) -> tuple:
    return (join_values(a[0], b[0]), tag_set(a[1] | b[1]))


def _widen_entry(e: tuple) -> tuple:
    return (widen_cycle(e[0]), e[1])


def unsettled_values(vals: FrozenSet[Value]) -> FrozenSet[Value]:
    """`vals` given up after MAX_ROUNDS (fixpoint.py): what is not settled is unknown."""
    return vals | unknown(UNSETTLED)


def _unsettled_entry(e: tuple) -> tuple:
    return (unsettled_values(e[0]), e[1])


UNSETTLED = f"recursive inference did not settle in {MAX_ROUNDS} rounds"


# Distinct sets of rule names a memo entry records: a few hundred, but one frozenset (216 bytes
# at least) per entry without sharing, half a million entries on transformers' export.
_TAG_SETS: dict = {frozenset(): EMPTY}


def tag_set(tags: set) -> frozenset:
    """`frozenset(tags)`, one shared object per distinct set."""
    fs = frozenset(tags)
    found = _TAG_SETS.get(fs)
    if found is None:
        if len(_TAG_SETS) > 10_000:
            _TAG_SETS.clear()
        found = _TAG_SETS[fs] = fs
    return found


def ordered(vals) -> list:
    """`vals` in one order, the same in every run: by a cheap key (kind and name), ties broken
    by `stable_key`. (`repr` is no order to rely on: a frozenset's repr follows string hashes,
    which change from process to process, and it is slow on nested values.)"""
    if len(vals) < 2:
        return list(vals)
    keys = {v: _cheap_key(v) for v in vals}
    out = sorted(vals, key=keys.__getitem__)
    if len(set(keys.values())) < len(keys):
        out.sort(key=lambda v: (keys[v], stable_key(v)))
    return out


def _cheap_key(v) -> tuple:
    return (type(v).__name__, _name(v))


def _name(v) -> str:
    name = _NAME_OF.get(type(v))
    return name(v) if name is not None else ""


# what tells values of one kind apart, as far as it is cheap to read
_NAME_OF = {VModule: lambda v: v.name, VClass: lambda v: v.qual,
            VInst: lambda v: f"{v.qual} {v.exact} {len(v.init)}",
            VFunc: lambda v: f"{v.qual} {_name(v.self_val)} {v.closure.fn if v.closure is not None else ''}",
            VSeq: lambda v: f"{v.kind} {len(v.elems)}", VSeqMethod: lambda v: f"{v.attr} {_name(v.seq)}",
            VMixin: lambda v: f"{v.attr} {_name(v.inst)}", VSuper: lambda v: v.cls, VExt: lambda v: v.name, VUnknown: lambda v: v.why,
            VConst: lambda v: v.value if isinstance(v.value, str) else ""}

_STABLE: dict = {}  # value -> stable_key (values recur: a VInst's arguments are met again and again)


def stable_key(x) -> tuple:
    """A total order on values that depends on nothing but their contents."""
    if isinstance(x, (Value, Ctx)):
        key = _STABLE.get(x)
        if key is None:
            if len(_STABLE) > 100_000:
                _STABLE.clear()
            fields = Ctx.FIELDS if x.__class__ is Ctx else x.__slots__
            key = _STABLE[x] = (type(x).__name__, tuple(stable_key(getattr(x, f)) for f in fields))
        return key
    if isinstance(x, frozenset):
        return ("frozenset", tuple(sorted(stable_key(e) for e in x)))
    if isinstance(x, tuple):
        return ("tuple", tuple(stable_key(e) for e in x))
    return (type(x).__name__, repr(x))


def forget_orders() -> None:
    """Drop stable_key's memo (Evaluator.close: it holds values)."""
    _STABLE.clear()


# Nesting depth of containers kept (a list of lists of layers is still precise).
MAX_SEQ_DEPTH = 3


_TOO_DEEP = VUnknown(f"container nested deeper than {MAX_SEQ_DEPTH}; its elements not followed")


def cap(values: FrozenSet[Value], depth: int = 0) -> FrozenSet[Value]:
    """Bound container nesting so contexts stay finite (lists of lists of ... of layers); the
    positions and keys of the containers kept are kept too (`d["a"]["b"]`)."""
    out = set()
    for v in values:
        if isinstance(v, VSeq):
            if depth >= MAX_SEQ_DEPTH:   # its elements are not followed: unknown, never none
                out.add(VSeq(frozenset({_TOO_DEEP}), v.kind))
            else:
                items = tuple(cap(i, depth + 1) for i in v.items) if v.items is not None else None
                keys = tuple((k, cap(kv, depth + 1)) for k, kv in v.keys) if v.keys is not None else None
                out.add(VSeq(cap(v.elems, depth + 1), v.kind, items, keys))
        else:
            out.add(v)
    return widen_containers(frozenset(out))


def same_layout(a, b) -> bool:
    """Whether `a` and `b` are equal and iterate alike at every level: each set in the same
    order, so that either may stand for the other where a loop's order could show (the first
    value met, a value cut at a bound). Parts they share are not walked again."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if x is y:
            continue
        cls = x.__class__
        if cls is not y.__class__:
            return False
        if cls is frozenset or cls is tuple:
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y))
        elif cls is Ctx:
            stack.extend(((x.fn, y.fn), (x.binds, y.binds), (x.closure, y.closure)))
        elif isinstance(x, Value):
            stack.extend((getattr(x, f), getattr(y, f)) for f in x.__slots__)
        elif x != y:
            return False
    return True


class Shared:
    """One object per distinct value set, for the memos kept for a whole run (return values,
    names read without a context, class attributes): contexts that differ in what a value does
    not depend on rebuild equal sets, and each would be kept. A set stands for an equal one only
    where the two iterate alike (`same_layout`), so no loop over either can tell."""

    __slots__ = ("_table",)

    def __init__(self):
        self._table: dict = {}

    def __call__(self, vals: FrozenSet[Value]) -> FrozenSet[Value]:
        found = self._table.get(vals)
        if found is None:
            self._table[vals] = vals
            return vals
        return found if same_layout(found, vals) else vals

    def clear(self) -> None:
        self._table.clear()


def unknown(why: str) -> FrozenSet[Value]:
    return frozenset({VUnknown(why)})
