"""`attribute-store`: an attribute no class code assigns is what the tree's stores of it put there.

torch sets a module's attributes by name: `layer.register_parameter("weight_scale", p)`,
`register_buffer(name, t)`, `add_module(name, m)`, `register_module(name, m)` (called through
a class, `nn.Module.add_module(layer, name, m)`, the instance comes first; through a name
spelled like a class, which may hold an instance, both readings count), and Python's
`setattr(obj, "x", v)`, `object.__setattr__(obj, "x", v)`, `obj.x = v` do so for any object.
Quantisation methods do it for the layers they are handed (`self.quant_method.create_weights(self,
...)` registers `weight`, `weight_scale`, ... on the linear layer), so `layer.weight_scale` is
assigned by no code of the layer's class. Such an attribute, on an instance of an in-tree
class, is the union of the values every store in the scope that can name it puts there, each
read in its function with nothing bound (an argument stored stays unknown).

What can name it: a store whose name is the literal, a computed name (`setattr(m, name, v)`,
`register_parameter(f"{prefix}_weight", w)`) unless the strings it can spell are known and none
is the attribute (an f-string's constant parts, literals the name evaluates to), and stores
that write the instance's dict wholesale (`obj.__dict__[k] = v`, `vars(obj).update(d)`,
`obj._parameters[k] = p`, `obj._modules.update(...)`). A store into the `self` of a method is a
store into an instance of that method's class: it counts only for a class that inherits the
method's class. The attribute stays open (unknown, naming the store) when any store that can
name it puts there a value not known, a descriptor (`property(...)`), or one the evaluator
cannot read; when no store names it at all; when the class defines `__getattr__` (it answers
a read no store reached); when a store function is used as a value (`put = setattr`,
`getattr(m, "add_module")`: its calls are not read), but torch's `register_parameter` kept to
be called as the original and put back around a replacement installed on `nn.Module`, which
`rebound_store.py` reads (its calls are stores, the replacement's re-made parameter an
instance of the registered one's class); when a scope file could not be read; and when one
of torch's parametrisation or pruning helpers is given its name (`weight_norm(m)`: `weight`,
`weight_g`, `weight_v`).
Stores in files outside the scope are not seen (as for the name bound, relevance.py), nor those
torch makes itself (`load_state_dict(assign=True)`'s tensors, torch.ao's module swaps) but for the
parametrisation and pruning helpers above. A store's receiver rules it out only when it is
known not to be such an instance (`setattr(OtherClass, name, v)`, an instance of an unrelated
class, an outside class's instance made by name, `nn.Linear(...)`); a receiver not inferred may be one.
On SGLang's `srt` and vLLM every such attribute still stays open, though both trees'
rebinding of `nn.Module.register_parameter` (their transformers backends) is read: by stores
of values not known under computed names (SGLang's `record.__dict__.update(bookkeeping)`,
`server_args.py:655`; vLLM's `self.module.__dict__[target] = ...`, `compilation/backends.py:789`).
"""
from __future__ import annotations

import ast
import re
import weakref
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from typing import FrozenSet, Iterator

from ..fixpoint import MISSING
from ..index.scopes import MODULE_CODE, FuncInfo, ModuleInfo, dotted_text, first_param, walk_local
from ..values import Value, VClass, VConst, VExt, VFunc, VInst, VModule, VSeq, VUnknown
from . import rebound_store
from .computed_getattr import StrPattern, answers_any_name
from .open_values import module_only
from .protocol import Inference, Scope
from .rule import Rule

# Methods that set an attribute by the name given first and the value given second.
NAMING_METHODS = {"register_parameter": "param", "register_buffer": "tensor", "add_module": "module",
                  "register_module": "module", "__setattr__": "value"}
# Attributes holding an instance's attribute tables (Python's, and torch.nn.Module's own).
TABLES = frozenset({"__dict__", "_parameters", "_buffers", "_modules"})
# torch helpers that set attributes of the module they are given (first) by the name given
# second or as `name=` (its default, if any, here), and the names they derive from it
# (`weight_norm(m)`: `weight_g`, `weight_v`, `weight`; parametrize adds `parametrizations`).
OUTSIDE_WRITERS = {"register_parametrization": None, "weight_norm": "weight", "spectral_norm": "weight",
                   "remove_parametrizations": None, "remove_weight_norm": "weight", "remove_spectral_norm": "weight",
                   "orthogonal": "weight", "l1_unstructured": None, "random_unstructured": None,
                   "ln_structured": None, "random_structured": None, "custom_from_mask": None}
DERIVED = ("", "_g", "_v", "_u", "_orig", "_mask")
_TORCH_OR_OBJECT = ("torch.", "nn.", "builtins.object", "object")
_ALIAS_TEXT = re.compile(r"\bsetattr\b(?!\s*\()|\.(?:register_parameter|register_buffer|add_module|"
                         r"register_module|__setattr__)\b(?!\s*\()|['\"](?:setattr|register_parameter|register_buffer|"
                         r"add_module|register_module|__setattr__)['\"]")
# A file that may keep torch's register_parameter as a value (rebound_store.py reads it).
_REBIND_TEXT = re.compile(r"\.register_parameter\b(?!\s*\()")
# Calls that turn a string into a method of an object (`getattr(m, "add_module")`).
_LOOKUPS = frozenset({"getattr", "attrgetter", "methodcaller"})
# Names whose every use must be a call this module reads (`f = setattr; f(o, n, v)` is not read).
_CALLED_ONLY = frozenset({"setattr", "register_parameter", "register_buffer", "add_module", "register_module",
                          "__setattr__"})
# What a stored value must not be: a descriptor changes what a read of the attribute gives.
DESCRIPTORS = frozenset({"builtins.property()", "functools.cached_property()", "builtins.classmethod()",
                         "builtins.staticmethod()"})
# Text a file must contain to hold a store by computed name (files without are not parsed).
# Each alternative of _ALIAS_TEXT holds one of these words: a file without any cannot match
# (a substring test is a C scan; the regex, with no literal to skip to, is tried at every position).
_ALIAS_WORDS = ("setattr", "register_parameter", "register_buffer", "add_module", "register_module", "__setattr__")
_COMPUTED_TEXT = re.compile(r"setattr|register_parameter|register_buffer|add_module|register_module|__dict__|"
                            r"_parameters|_buffers|_modules|vars\s*\(|parametriz|weight_norm|spectral_norm|prune")


class AttributeStore(Rule):
    """`obj.x` where no code of obj's class assigns `x`: the values of every store in the scope
    that can name it (`register_parameter("x", p)`, `register_buffer`, `add_module`, `setattr(o,
    "x", v)`, `o.x = v`, and computed names that can spell `x`); unknown when one of them stores
    a value not known, when no store names it, or when the tree sets attributes through torch's
    parametrisation helpers"""

    name = "attribute-store"
    where = ("semantics/attribute_store.py", "infer/classes.py")


RULE = AttributeStore()


@dataclass(frozen=True, slots=True)
class Store:
    """One statement that may set an attribute: its function, its node (for the site), the
    literal name (None: computed, `name_node` says how; no node: any name), the value stored
    (None: not one expression) and, for a store into a method's `self`, that method's class."""

    fn: FuncInfo
    node: ast.AST
    name: str | None
    name_node: ast.AST | None
    value: ast.AST | None
    self_class: str | None
    receiver: ast.AST | None = None  # the object stored into, where the store names it
    recopy: bool = False  # a rebound register_parameter's re-made parameter (rebound_store.py)


@dataclass
class _Table:
    """The scope's stores, found once per project: by literal name from the files whose text
    has `.name =` or the name quoted (on demand, per name), and every computed one."""

    computed: dict = field(default_factory=dict)  # path -> its stores by computed name
    by_name: dict[str, list[Store]] = field(default_factory=dict)
    scanned: set = field(default_factory=set)    # paths whose stores are in the table
    searched: set = field(default_factory=set)   # names whose files were all scanned
    files: list = field(default_factory=list)    # the files that may hold a computed store, in scope order
    unreadable: str = ""         # a scope file that could not be parsed, if any
    aliased: str = ""            # a store method used as a value (`f = setattr`), if any
    rebinding: set = field(default_factory=set)  # paths whose text may rebind register_parameter
    hooked: str = ""             # a scope file that may register a parameter registration hook


_TABLES: "weakref.WeakKeyDictionary[object, _Table]" = weakref.WeakKeyDictionary()


def values(ev: Inference, v: VInst, attr: str, tags: set[str]) -> FrozenSet[Value] | None:
    """What `attr` of the instance `v` of an in-tree class can be, by the stores of the scope,
    or None when they cannot tell (the caller keeps its reason). An instance known by its base
    type (`exact=False`) may be of a subclass: a store into any method's `self` counts then."""
    cls_qual = v.qual
    memo = ev.stores_memo
    key = ("attribute-store", cls_qual, v.exact, attr)
    found = ev.solver.read(memo, key)
    if found is MISSING:  # read in progress: unknown; kept once what it read has settled
        reading = frozenset({VUnknown(f"{_short(cls_qual)}.{attr} is read while its own stores are read")})
        found = ev.solver.compute(memo, key, lambda: _values(ev, cls_qual, v.exact, attr), reading, conservative=True)
    if found is not None:
        tags.add(RULE.name)
    return found


def _values(ev: Inference, cls_qual: str, exact: bool, attr: str) -> FrozenSet[Value] | None:
    table = _table(ev)
    if table.aliased:
        return frozenset({VUnknown(f"'.{attr}' may be set by a store function used as a value ({table.aliased})")})
    cm = ev.classes
    mro = set(cm.mro(cls_qual))
    if answers_any_name(cm, cls_qual):
        return None  # the class's own __getattr__ answers a read the stores do not
    out: set[Value] = set()
    seen = False
    recopy: Store | None = None
    for store in _candidates(ev, table, attr):  # the computed ones first: they open most reads
        if exact and store.self_class is not None and store.self_class not in mro:
            continue  # a store into an instance of an unrelated class
        if store.name is not None and store.name != attr:
            continue
        scope = Scope(store.fn.module, store.fn, None)
        if store.name is None and not _may_name(ev, store, scope, attr):
            continue
        if store.receiver is not None and not _may_be(ev, store.receiver, scope, cls_qual, mro, exact):
            continue  # `setattr(OtherClass, name, v)`, `tensor.attr = v`: never an instance of cls_qual
        if store.recopy:  # re-makes what the other stores naming it put there
            recopy = recopy or store
            continue
        seen = True
        if store.value is None:
            return frozenset({_open(store, attr, "a value not read off one expression")})
        stored = ev.eval(store.value, scope, set())
        for v in stored:
            if isinstance(v, VUnknown) or (isinstance(v, VExt) and v.name in DESCRIPTORS):
                return frozenset({_open(store, attr, "a value not known" if isinstance(v, VUnknown) else "a descriptor")})
        out |= stored
    if table.unreadable:
        return frozenset({VUnknown(f"'.{attr}' may be set in {table.unreadable}, which could not be read")})
    if not seen:
        return None
    if recopy is not None:
        if table.hooked:
            return frozenset({_open(recopy, attr, f"a value a parameter registration hook may give "
                                                  f"({table.hooked})")})
        out |= rebound_store.copies(cm, out)
    return frozenset(out)


def _open(store: Store, attr: str, what: str) -> VUnknown:
    fn = store.fn
    return VUnknown(f"'.{attr}' may be set by {fn.module.display}:{store.node.lineno} "
                    f"({_text(store.node)}) to {what}")


def _may_be(ev: Inference, receiver: ast.AST, scope: Scope, cls_qual: str, mro: set, exact: bool) -> bool:
    """Whether the object a store writes into may be an instance of `cls_qual` (or, for a
    class, one its instances read attributes from): an unknown value may."""
    cm = ev.classes
    for v in ev.eval(receiver, scope, set()):
        if isinstance(v, (VConst, VModule, VFunc, VSeq)):
            continue
        if isinstance(v, VExt) and _made_outside(v.name):
            continue  # an instance of an outside class made by name (`torch.empty(...)` is not one)
        if isinstance(v, VExt) and _outside_class(v.name) and not v.name.startswith(_TORCH_OR_OBJECT) \
                and module_only(cm, mro):
            continue  # `setattr(PreTrainedConfig, name, f)`: not torch.nn.Module, the one outside base
        if isinstance(v, VClass):  # a class attribute, read by its instances and its subclasses
            if v.qual in mro or not exact:  # (a subclass of cls_qual may mix the class in)
                return True
            continue
        if isinstance(v, VInst):
            if exact and (v.qual == cls_qual if v.exact else v.qual in mro):
                return True
            if not exact and (not v.exact or cls_qual in cm.mro(v.qual)):
                return True
            continue
        return True
    return False


def _outside_class(name: str) -> bool:
    return "(" not in name and not name.startswith("<") and name.rsplit(".", 1)[-1][:1].isupper()


def _made_outside(name: str) -> bool:
    head = name[:-2] if name.endswith("()") else ""
    return bool(head) and "(" not in head and not head.startswith("<") and head.rsplit(".", 1)[-1][:1].isupper()


def _may_name(ev: Inference, store: Store, scope: Scope, attr: str) -> bool:
    """Whether a computed name can spell `attr`: only strings and patterns that cannot are ruled out."""
    if store.name_node is None:
        return True
    for v in ev.eval(store.name_node, scope, set()):
        if not isinstance(v, VConst):
            return True
        if isinstance(v.value, str):
            if v.value == attr:
                return True
        elif isinstance(v.value, StrPattern):
            if not v.value.constant() or fnmatchcase(attr, v.value.glob()):
                return True
        else:
            return True
    return False


def _table(ev: Inference) -> _Table:
    """The project's table; on first use, the files that may hold a computed store are listed
    (by their text) and those that may use a store function as a value are read."""
    table = _TABLES.get(ev.p)
    if table is None:
        table = _TABLES[ev.p] = _Table()
        texts = ev.p.texts()
        table.files = [path for path, text in texts if _COMPUTED_TEXT.search(text)]
        table.rebinding = {path for path, text in texts if rebound_store.STORE in text and _REBIND_TEXT.search(text)}
        table.hooked = rebound_store.hooked((ev.p.display(path), text) for path, text in texts)
        for path, text in texts:
            if not table.aliased and any(w in text for w in _ALIAS_WORDS) and _ALIAS_TEXT.search(text):
                _scan(ev, table, path)
        if ev.p.oversized or ev.p.skipped:
            table.unreadable = ev.p.display(sorted(ev.p.oversized or ev.p.skipped)[0])
    return table


def _candidates(ev: Inference, table: _Table, attr: str) -> Iterator[Store]:
    """Every store that may set `attr`: the computed ones (files read as they are reached),
    then those that spell it (the files whose text has `.attr =` or "attr" read on first ask).
    Always in one order (the scope's files, then lines), whatever earlier reads scanned: the
    store an open answer names does not depend on the order queries ran in."""
    for path in table.files:
        if path not in table.scanned:
            _scan(ev, table, path)
        yield from table.computed.get(path, ())
    if attr not in table.searched:
        table.searched.add(attr)
        name = re.escape(attr)  # `.x = v`, `.x += v`, `a.x, b = ...`, `(a.x): T = v`, a quoted "x"
        pattern = re.compile(r"\.[ \t]*" + name + r"\b[ \t]*(?:[-+*/@%&|^]?=(?!=)|[:,)\]\\;]|$)|['\"]" + name + r"['\"]",
                             re.M)
        for path, text in ev.p.texts():  # the name as a substring first: a C scan, and the
            if path not in table.scanned and attr in text and pattern.search(text):  # regex needs it
                _scan(ev, table, path)
    yield from sorted(table.by_name.get(attr, ()), key=_position)


def _position(store: Store) -> tuple:
    return store.fn.module.display, store.node.lineno, store.node.col_offset


def _scan(ev: Inference, table: _Table, path) -> None:
    table.scanned.add(path)
    mod = ev.p.module_of_path(path)
    if mod is None:
        table.unreadable = table.unreadable or ev.p.display(path)
        return
    fns = list(_functions(ev, mod))
    rebinding = rebound_store.read(fns) if path in table.rebinding else rebound_store.NONE
    for fn in fns:
        for store in _stores(fn, rebinding):
            if store.name is None:
                table.computed.setdefault(path, []).append(store)
            else:
                table.by_name.setdefault(store.name, []).append(store)
        if not table.aliased:
            table.aliased = _aliased(fn, rebinding)


def _functions(ev: Inference, mod: ModuleInfo) -> Iterator[FuncInfo]:
    """Every function of `mod` the index registered (module code, defs nested anywhere, lambdas)."""
    code = ev.p.functions.get(f"{mod.name}.{MODULE_CODE}")
    todo: list[tuple[ast.AST, str]] = [(mod.tree, mod.name)]
    if code is not None:
        yield code
    while todo:
        node, scope = todo.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                qual = f"{scope}.{child.name}"
                fn = ev.p.functions.get(qual)
                if fn is not None and fn.node is child:
                    yield fn
                    yield from _lambdas(ev, fn, mod)
                todo.append((child, qual))
            elif isinstance(child, ast.ClassDef):
                todo.append((child, f"{scope}.{child.name}"))
            else:
                todo.append((child, scope))
    if code is not None:
        yield from _lambdas(ev, code, mod)


def _lambdas(ev: Inference, fn: FuncInfo, mod: ModuleInfo) -> Iterator[FuncInfo]:
    for node in walk_local(fn.node):
        if isinstance(node, ast.Lambda):
            yield ev.p.lambda_info(node, fn, mod)


def _stores(fn: FuncInfo, rebinding: rebound_store.Rebinding = rebound_store.NONE) -> Iterator[Store]:
    for node in _own_nodes(fn.node):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if getattr(node, "value", None) is None:
                continue
            recopy = id(node) in rebinding.recopies
            for t in targets:
                plain = not isinstance(t, (ast.Tuple, ast.List)) and not isinstance(node, ast.AugAssign)
                for sub in _flat(t):
                    for store in _target_store(fn, node, sub, node.value if plain else None):
                        yield replace(store, recopy=True) if recopy else store
        elif isinstance(node, ast.Call):
            if id(node) in rebinding.calls:  # `old(m, name, p)`: the original store, m.register_parameter(name, p)
                yield from _original_store(fn, node)
            elif id(node) not in rebinding.triggering:  # (a pure replacement's pass-through adds nothing)
                yield from _call_store(fn, node)


def _through_class(f: ast.Attribute) -> str:
    """Whether `f` (a store method) is read off a class, so that its call passes the instance
    first: "torch" for torch's module class (`nn.Module.add_module`), "class" for a name
    spelled like a class (`MyLayer.add_module`, or an attribute so named holding an instance),
    "" otherwise (`self.add_module`, `layer.register_parameter`)."""
    if f.attr == "__setattr__":
        return ""  # `object.__setattr__(obj, name, v)`: read by its arity (_is_setattr_of)
    text = dotted_text(f.value)
    if text in rebound_store.CLASSES:
        return "torch"
    return "class" if text and text.rsplit(".", 1)[-1][:1].isupper() else ""


def _original_store(fn: FuncInfo, call: ast.Call, value_kw: str = "param") -> Iterator[Store]:
    """A store method called unbound, the instance first: torch's `register_parameter` kept as
    a value (`old(module, name, param)`), `nn.Module.add_module(m, name, sub)`."""
    args = call.args
    if any(isinstance(a, ast.Starred) for a in args) or any(k.arg is None for k in call.keywords) or not args:
        yield Store(fn, call, None, None, None, None, args[0] if args and not isinstance(args[0], ast.Starred) else None)
        return
    kw = {k.arg: k.value for k in call.keywords}
    receiver = args[0]
    name = args[1] if len(args) > 1 else kw.get("name")
    value = args[2] if len(args) > 2 else kw.get(value_kw)
    if name is not None:
        yield _named_store(fn, call, receiver, name, value)


def _aliased(fn: FuncInfo, rebinding: rebound_store.Rebinding = rebound_store.NONE) -> str:
    """The site where `fn` uses a store function as a value (not called, or named by a string
    `getattr` may look up), or "" (a rebound register_parameter read by rebound_store.py is not one)."""
    called = set(rebinding.read)
    for node in _own_nodes(fn.node):
        if isinstance(node, ast.Call):
            called.add(id(node.func))
            if _callee_name(node.func) in _LOOKUPS and any(  # getattr(m, "register_buffer")
                    isinstance(a, ast.Constant) and a.value in _CALLED_ONLY for a in node.args):
                return f"{fn.module.display}:{node.lineno}"
        elif isinstance(node, (ast.Name, ast.Attribute)) and id(node) not in called:
            name = node.id if isinstance(node, ast.Name) else node.attr
            if name in _CALLED_ONLY and isinstance(node.ctx, ast.Load):
                return f"{fn.module.display}:{node.lineno}"
    return ""


def _own_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """The function's own nodes (walk_local), class bodies inside it included."""
    for n in walk_local(node):
        yield n
        if isinstance(n, ast.ClassDef):
            for stmt in n.body:
                if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    yield from walk_local(stmt)


def _flat(t: ast.AST) -> Iterator[ast.AST]:
    if isinstance(t, (ast.Tuple, ast.List)):
        for elt in t.elts:
            yield from _flat(elt.value if isinstance(elt, ast.Starred) else elt)
    else:
        yield t


def _target_store(fn: FuncInfo, node: ast.AST, t: ast.AST, value: ast.AST | None) -> Iterator[Store]:
    if isinstance(t, ast.Attribute):
        yield Store(fn, node, t.attr, None, value, _self_class(fn, t.value), t.value)
    elif isinstance(t, ast.Subscript):
        table = _table_of(t.value)
        if table is not None:  # obj.__dict__[k] = v, vars(obj)[k] = v, obj._parameters[k] = p
            key = t.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                yield Store(fn, node, key.value, None, value, _self_class(fn, table), table)
            else:
                yield Store(fn, node, None, key, value, _self_class(fn, table), table)


def _call_store(fn: FuncInfo, call: ast.Call) -> Iterator[Store]:
    f, args = call.func, call.args
    if _callee_name(f) == "setattr" or _is_setattr_of(f) and len(args) != 2:  # builtins.setattr too
        if any(isinstance(a, ast.Starred) for a in args) or call.keywords:
            yield Store(fn, call, None, None, None, None)
        elif len(args) == 3:
            yield _named_store(fn, call, args[0], args[1], args[2])
        return
    if _callee_name(f) in OUTSIDE_WRITERS:  # torch's parametrize / weight_norm / prune
        kw = {k.arg: k.value for k in call.keywords}
        name = args[1] if len(args) > 1 else kw.get("name", kw.get("tensor_name"))
        if name is None and OUTSIDE_WRITERS[_callee_name(f)] is not None:
            name = ast.Constant(OUTSIDE_WRITERS[_callee_name(f)])
        receiver = args[0] if args else kw.get("module")
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            for suffix in DERIVED:
                yield Store(fn, call, name.value + suffix, None, None, _self_class(fn, receiver))
            yield Store(fn, call, "parametrizations", None, None, _self_class(fn, receiver))
        else:
            yield Store(fn, call, None, name, None, _self_class(fn, receiver))
        return
    if not isinstance(f, ast.Attribute):
        return
    if f.attr in NAMING_METHODS:
        through = _through_class(f)
        if through == "torch" or through and args and not isinstance(args[0], ast.Starred):
            # `nn.Module.register_parameter(m, name, p)`: the method unbound, the instance first
            yield from _original_store(fn, call, NAMING_METHODS[f.attr])
            if through == "torch":
                return  # (a class named like any other may hold an instance: read both ways)
        if any(isinstance(a, ast.Starred) for a in args) or any(k.arg is None for k in call.keywords):
            yield Store(fn, call, None, None, None, _self_class(fn, f.value), f.value)
            return
        kw = {k.arg: k.value for k in call.keywords}
        name = args[0] if args else kw.get("name")
        value = args[1] if len(args) > 1 else kw.get(NAMING_METHODS[f.attr])
        if name is not None:
            yield _named_store(fn, call, f.value, name, value)
    elif f.attr in ("setdefault", "__setitem__") and _table_of(f.value) is not None and len(args) == 2 \
            and not call.keywords:  # obj.__dict__.setdefault(k, v)
        yield _named_store(fn, call, _table_of(f.value), args[0], args[1])
    elif f.attr in ("update", "setdefault", "__setitem__") and _table_of(f.value) is not None:
        owner = _table_of(f.value)
        yield Store(fn, call, None, None, None, _self_class(fn, owner), owner)


def _named_store(fn: FuncInfo, call: ast.Call, receiver: ast.AST, name: ast.AST, value: ast.AST | None) -> Store:
    self_class = _self_class(fn, receiver)
    if isinstance(name, ast.Constant) and isinstance(name.value, str):
        return Store(fn, call, name.value, None, value, self_class, receiver)
    return Store(fn, call, None, name, value, self_class, receiver)


def _is_setattr_of(f: ast.AST) -> bool:
    """`object.__setattr__(obj, name, v)`, `nn.Module.__setattr__(obj, name, v)` (three
    arguments; `super().__setattr__(name, v)` with two is a method of the receiver's)."""
    return isinstance(f, ast.Attribute) and f.attr == "__setattr__"


def _table_of(node: ast.AST) -> ast.AST | None:
    """The object whose attribute table `node` is (`obj.__dict__`, `vars(obj)`, `obj._modules`)."""
    if isinstance(node, ast.Attribute) and node.attr in TABLES:
        return node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "vars" and node.args:
        return node.args[0]
    return None


def _self_class(fn: FuncInfo, receiver: ast.AST) -> str | None:
    """The class of the method whose `self` (or `super()`) `receiver` is, if it is one."""
    if isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Name) and receiver.func.id == "super":
        owner = fn
        while owner is not None and owner.cls is None:
            owner = owner.parent
        return owner.cls.qual if owner is not None else None
    if not isinstance(receiver, ast.Name):
        return None
    name = receiver.id
    owner = fn
    while owner is not None:
        if owner.cls is not None and owner.kind not in ("staticmethod", "classmethod") \
                and not isinstance(owner.node, ast.Lambda) and first_param(owner) == name:
            return owner.cls.qual
        if name in owner.param_names() or name in owner.locals():
            return None
        owner = owner.parent
    return None


def _callee_name(f: ast.AST) -> str:
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _text(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 80 else text[:77] + "..."


def _short(qual: str) -> str:
    return qual.rsplit(".", 1)[-1]


def file_stores(ev: Inference, path) -> list[Store] | None:
    """Every store by literal or computed name that the functions of one scope file make
    (None: the file could not be read), in source order; nothing is evaluated."""
    mod = ev.p.module_of_path(path)
    if mod is None:
        return None
    fns = list(_functions(ev, mod))
    rebinding = rebound_store.read(fns)
    return sorted((s for fn in fns for s in _stores(fn, rebinding)), key=_position)


__all__ = ["RULE", "Store", "file_stores", "values"]
