"""torch containers: `nn.ModuleList`, `nn.Sequential`, `nn.ModuleDict` (and their Parameter twins).

At run time these hold the modules given to their constructor; iterating, indexing or slicing
them gives those modules back, and calling a `Sequential` calls each of them in turn. We model
them as a container value holding the constructor's elements.

Values put in later are stores (`x[k] = v`, `x.append(v)`, `x.extend(vs)`, `x.update(m)`,
nested `x["a"]["b"] = v`), applied to the container values of `x` in the order given
(`apply_stores`). A *strong* store (one that certainly ran after the value was made, see
`index/flow.py`) with a constant key replaces that key of a dict (or that position of a list),
as Python does: `d = {"a": f1}; d["a"] = f2; d["a"]()` calls `f2` only. A weak store
(conditional, from another function, or of unknown order) adds to what was there. Stores into
names a function does not bind itself go to the enclosing function's or the module's name
(`remote_stores`): `def f(k): table[k] = g` fills the global `table`. Which bindings reach a
read, in which order and how strongly, is the index's (`index/flow.py`) and the evaluator's
(`Evaluator.bindings`) business; what a store does to a value is this rule's.

A list or dict value may be one of torch's containers (`nn.ModuleList`, `nn.ModuleDict`: the
same kinds here), and a `Sequential` is one: an attribute a builtin list or dict lacks is then
nn.Module's (`layers.apply(init)`, `layers.register_forward_hook(h)`: outside methods, whose
function arguments are callbacks; `layers.to(dev)`, `.apply`, `.train()` give the container
back), and on a Sequential any other is one set on it (unknown, with that reason). Before,
such a call on a list value gave nothing, and `nn.ModuleList(...).apply(f)` a false
"unreachable". An attribute set on a ModuleList or ModuleDict (`layers.fn = f`) is not
followed: a list value also stands for what only stores into a name were seen to put there. A
tuple or a set is always Python's own: an attribute it lacks is no value (`x.q` on the tuple
path of an operand that may be a tuple or a wrapper raises AttributeError there).
"""
from __future__ import annotations

import ast
from functools import lru_cache
from typing import FrozenSet, Iterator

from ..index.children import child_nodes
from ..index.scopes import ADDING_METHODS, ANY_KEY, Binding, FuncInfo, ModuleInfo, spans_any
from ..values import EMPTY, LITERAL_OR_NONE, Value, VConst, VExt, VSeq, VSeqMethod, VUnknown, cap, widen_containers
from . import callbacks, external, submodules
from .open_values import NN_MODULE_API
from .builtins_model import BUILTIN_KINDS, builtin_lacks, present, seq_method
from .protocol import Inference
from .rule import Call, CallArgs, Outcome, Rule

_PREFIXES = ("torch.nn.", "torch.nn.modules.container.", "nn.")
KINDS = {"ModuleList": "list", "Sequential": "Sequential", "ModuleDict": "dict", "ParameterList": "list", "ParameterDict": "dict"}
# Kinds that only ever stand for Python's own containers (no torch container is one).
PLAIN_KINDS = frozenset({"tuple", "set"})
# nn.Module methods that return the module itself.
RETURNS_SELF = frozenset({"to", "cuda", "cpu", "xpu", "ipu", "mtia", "float", "double", "half", "bfloat16", "type",
                          "to_empty", "train", "eval", "requires_grad_", "apply", "share_memory"})
# A Sequential's own list-like methods, which the container model answers (the rest are nn.Module's).
_SEQUENTIAL_OWN = frozenset({"pop", "__getitem__", "__iter__", "__len__", "append", "extend", "insert"})


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
    where = ("semantics/containers.py", "infer/sequences.py", "index/flow.py")
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
            if module_attribute(v.seq, v.attr):
                return _module_method(call, v.seq, v.attr)
            # `d.items()`: a method of a builtin container runs. The methods that put values in
            # (`append`, `update`...) are modelled as stores into the container, not as calls.
            if v.seq.kind in BUILTIN_KINDS and v.attr not in ADDING_METHODS and not builtin_lacks(v.seq.kind, v.attr):
                external.builtin_method(call.dispatch, v.seq.kind, v.attr)
            return seq_method(call.ev, v.seq, v.attr, call.args, call.tags)
        call.tags.add(self.name)  # a Sequential called calls each of its layers
        out: set = set()
        for elem in v.elems:
            out |= call.calls.call_value(elem, call.args, call.node, call.scope, call.dispatch, call.tags)
        return frozenset(out)


def attribute(v: VSeq, attr: str) -> FrozenSet[Value]:
    """`v.attr` of a container value: its own method, bound (`VSeqMethod`); nothing for an
    attribute a tuple or a set lacks (reading it raises AttributeError)."""
    if v.kind in PLAIN_KINDS and builtin_lacks(v.kind, attr):
        return EMPTY
    return frozenset({VSeqMethod(v, attr)})


def module_attribute(seq: VSeq, attr: str) -> bool:
    """Whether `seq.attr` may be an attribute of a torch container that the container model does
    not answer: nn.Module's own, on a list or dict value lacking it (an nn.ModuleList /
    nn.ModuleDict may be there); any, on a Sequential. (A list value is also what a name holds
    when only stores into it are seen, `x.update(...)` on an object of the tree: an attribute
    set on a ModuleList, `layers.fn = f`, is not followed, or every such name would be unknown.)"""
    if seq.kind == "Sequential":
        return attr not in _SEQUENTIAL_OWN
    return (seq.kind == "list" or seq.kind == "dict") and attr in NN_MODULE_API and builtin_lacks(seq.kind, attr)


def _module_method(call: Call, seq: VSeq, attr: str) -> Outcome:
    """nn.Module's own method of a torch container (a plain list or dict would raise: no value
    there), called as the outside method it is, so functions handed to it are callbacks; those
    returning the module give the container back. Any other attribute was set on it: unknown."""
    call.tags.add(RULE.name)
    if attr in NN_MODULE_API:  # no external edge: a list literal's `.float()` is no call of torch's
        callbacks.hand_over(call.calls, callbacks.handed(call.args), CallArgs(), call.dispatch, callbacks.RULE.name,
                            instances=False)
        if attr in submodules.METHODS:  # `layers.modules()`: any module below
            return submodules.given(attr)
        return frozenset({seq}) if attr in RETURNS_SELF else frozenset({VExt(f"torch.nn.Module.{attr}()")})
    why = (f"'.{attr}' of a container that may be a torch nn.ModuleList / ModuleDict / Sequential: "
           "an attribute set on it is not followed")
    call.dispatch.unresolved.append(why)
    return frozenset({VUnknown(why)})


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
    """`for x in v`: its elements; a dict's keys where they are known, else its values and any
    literal or None (the keys are not followed: never a value set that rules None out)."""
    tags.add(RULE.name)
    if v.kind != "dict":
        return v.elems
    return v.elems | LITERAL_OR_NONE if v.keys is None else frozenset({VConst(k) for k, _ in v.keys})


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
        return present(dict(v.keys).get(index.value, v.elems), EMPTY)  # a missing key raises
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


# -- stores: values put into a container after it was made ------------------------------
def apply_stores(ev: Inference, values: set[Value], items: list, tags: set[str]) -> set[Value]:
    """`values` with the stores `items` ((Binding, Scope) or (Binding, Scope, strong)) applied
    in order. A name holding no container yet gets a list of what was put in."""
    out = set(values)
    if not any(isinstance(v, VSeq) for v in out):
        out.add(VSeq(EMPTY, "list"))
    steps = []
    for item in items:
        b, scope = item[0], item[1]
        strong = item[2] if len(item) > 2 else False
        vals = ev.eval(b.expr, scope, tags)
        if b.path == ("*",):
            vals, pairs = ev.iterate(vals, tags), None
        elif b.path == ("**",):
            vals, pairs = _mapping_items(ev, vals, tags)
        else:
            pairs = None
        steps.append((b, cap(vals), pairs, strong))
    return {_put_all(v, steps) if isinstance(v, VSeq) else v for v in out}


def _put_all(v: VSeq, steps: list) -> VSeq:
    """v after the stores `steps` in order. A run of stores at literal keys of a dict whose keys
    are known (a table filled key by key, `x.update({...})`) changes one table in place, sorted
    and united once at the end: the same value as `_put` store after store, which copies,
    re-sorts and re-unites the table at each (quadratic in a table's size)."""
    table = None
    for b, vals, pairs, strong in steps:
        if table is None and v.keys is None:
            v = _put(v, b, vals, pairs, strong, 0)
            continue
        if b.path == ("=",) and len(b.keys) == 1 and b.keys[0] is not ANY_KEY:
            news = ((b.keys[0], vals),)
        elif b.path != ("=",) and not b.keys and pairs is not None and all(k is not ANY_KEY for k, _ in pairs):
            news = pairs
        else:
            if table is not None:
                v, table = _keyed(v, table), None
            v = _put(v, b, vals, pairs, strong, 0)
            continue
        if not news:
            continue  # `x.update({})`: nothing changes (not even the order of v's keys)
        if table is None:
            table = dict(v.keys)
        for k, kv in news:  # as `_at`: a strong store replaces a key there, a weak one adds to it
            table[k] = (kv if strong else table[k] | kv) if k in table else kv
    return v if table is None else _keyed(v, table)


def _keyed(v: VSeq, table: dict) -> VSeq:
    """v's dict with the entries `table`, sorted by key as `_at` sorts them."""
    keys = tuple(sorted(table.items(), key=lambda kv: repr(kv[0])))
    return VSeq(_union(kv for _, kv in keys), v.kind, None, keys)


def _mapping_items(ev, vals: FrozenSet[Value], tags) -> tuple[FrozenSet[Value], list | None]:
    """`x.update(m)`: m's values, and its (key, values) pairs where every key is known."""
    elems: set[Value] = set()
    pairs: list | None = []
    for m in vals:
        if isinstance(m, VSeq) and m.kind == "dict":
            elems |= m.elems
            if m.keys is not None and pairs is not None:
                pairs.extend(m.keys)
            else:
                pairs = None
        else:  # an iterable of (key, value) pairs
            pairs = None
            for pair in ev.iterate(frozenset({m}), tags):
                if isinstance(pair, VSeq) and pair.items and len(pair.items) == 2:
                    elems |= pair.items[1]
                elif isinstance(pair, VSeq):
                    elems |= pair.elems
    return frozenset(elems), pairs


def _put(v: VSeq, b: Binding, vals: FrozenSet[Value], pairs, strong: bool, depth: int) -> VSeq:
    """v after the store b, whose subscript chain from v starts at b.keys[depth]."""
    store = b.path == ("=",)
    descend = b.keys[depth:-1] if store else b.keys[depth:]
    if descend:
        k = descend[0]
        change = lambda vs, st: frozenset(  # noqa: E731
            _put(e, b, vals, pairs, st, depth + 1) if isinstance(e, VSeq) else e for e in vs)
        return _at(v, k, change, strong)
    if store:
        return _at(v, b.keys[-1], lambda vs, st: vals if st else vs | vals, strong, new=vals)
    if pairs is not None:
        for k, kv in pairs:
            v = _at(v, k, lambda vs, st, kv=kv: kv if st else vs | kv, strong, new=kv)
        return v
    return VSeq(v.elems | vals, v.kind, None, None)  # appended: the positions from the end moved


def _at(v: VSeq, k, change, strong: bool, new: FrozenSet[Value] = EMPTY) -> VSeq:
    """v with its entry at key (or position) k changed; every entry when k is not known."""
    if k is not ANY_KEY and v.keys is not None:
        table = dict(v.keys)
        table[k] = change(table.get(k, EMPTY), strong) if k in table else change(EMPTY, True) | new
        keys = tuple(sorted(table.items(), key=lambda kv: repr(kv[0])))
        return VSeq(_union(kv for _, kv in keys), v.kind, None, keys)
    if isinstance(k, int) and not isinstance(k, bool) and v.items is not None and -len(v.items) <= k < len(v.items):
        items = list(v.items)
        items[k] = change(items[k], strong)
        return VSeq(_union(items), v.kind, tuple(items), None)
    # unknown key or position: any entry may be the one changed. Each such store keeps the
    # entries as they were and adds them changed, so nested stores double the containers held
    # (`parsed = {k: {} for k in M}`, then `parsed["config"]["x"] = ...` eleven times: 55,296
    # dicts in transformers' `load_gguf_checkpoint`, each store after applied to every one):
    # bounded as any value set is (values.widen_containers), what they hold only grows.
    elems = widen_containers(v.elems | change(v.elems, False) | new)
    return VSeq(elems, v.kind, None, None)


def _union(sets: Iterator[FrozenSet[Value]]) -> FrozenSet[Value]:
    out: set[Value] = set()
    for s in sets:
        out |= s
    return frozenset(out)


def remote_stores(ev: Inference, mod: ModuleInfo) -> dict[str, list[tuple[Binding, FuncInfo]]]:
    """Stores that functions of `mod` make into module globals they do not bind themselves,
    and the bindings a function that declares `global name` makes (`global X; X = B()`
    rebinds the module's X whenever it runs: what it binds is one more value of every read of
    X, and its `X[k] = v` a store into the global). Item stores have kind "item"; the
    evaluator adds the others' values (`Evaluator.bindings`)."""
    cache = ev.stores_memo
    if id(mod) in cache:
        return cache[id(mod)]
    out: dict[str, list[tuple[Binding, FuncInfo]]] = {}
    lines = mod.store_lines
    for fn in _functions(ev, mod.tree.body, mod.name):
        if lines is not None and not spans_any(lines, fn.node):
            continue  # no line of it may store into a container or say `global`: none to scan
        for name, bs in fn.locals().items():
            if any(b.kind == "global" for b in bs):
                out.setdefault(name, []).extend((b, fn) for b in bs if b.kind != "global")
                continue
            if name in fn.param_names() or not all(b.kind == "item" for b in bs):
                continue
            if _bound_above(fn, name):
                continue  # the store is into an enclosing function's name
            out.setdefault(name, []).extend((b, fn) for b in bs)
    cache[id(mod)] = out
    return out


def _bound_above(fn: FuncInfo, name: str) -> bool:
    p = fn.parent
    while p is not None:
        if name in p.param_names() or any(b.kind != "item" for b in p.locals().get(name, ())):
            return True
        p = p.parent
    return False


def _functions(ev, body, scope: str) -> Iterator[FuncInfo]:
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            qual = f"{scope}.{node.name}"
            fn = ev.p.functions.get(qual)
            if fn is not None and fn.node is node:
                yield fn
            yield from _functions(ev, node.body, qual)
        elif isinstance(node, ast.ClassDef):
            yield from _functions(ev, node.body, f"{scope}.{node.name}")
        elif isinstance(node, ast.stmt):
            for child in child_nodes(node):
                if isinstance(child, ast.stmt):
                    yield from _functions(ev, [child], scope)
                elif isinstance(child, ast.ExceptHandler):
                    yield from _functions(ev, child.body, scope)
