"""Definitions and name bindings of one parsed file, read off its AST.

This is the cheap index the design calls for: modules, imports, classes with their bases, defs,
`self.x` assignments and the call sites of each function. Bindings are flow-insensitive (every
assignment to a name counts), which is what makes conditional and `None`-first attributes such
as `self.language_model = None; if ...: self.language_model = DeepseekV3ForCausalLM(...)` come
out as the union of both.
"""
from __future__ import annotations

import ast
import bisect
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Union

from . import decorator_names, redefinitions
from .bindings import ANY_KEY, Binding
from .children import child_fields, child_nodes
from .flow import body_reads

FuncNode = Union[ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda]


@dataclass(eq=False)
class FuncInfo:
    qual: str
    name: str
    node: FuncNode
    module: "ModuleInfo"
    cls: "ClassInfo | None" = None
    parent: "FuncInfo | None" = None
    decorators: tuple[str, ...] = ()
    _locals: dict | None = None
    _calls: list | None = None
    _returns: list | None = None
    _generator: bool | None = None
    _implicit: list | None = None
    _special: list | None = None
    _reads_seen: list | None = None  # per kind, the nodes _scan_reads found, until _implicit_of makes them
    _reads_made: list | None = None  # per kind, what _implicit_of made of them
    _params: frozenset | None = None
    _kind: str | None = None
    _local_reads: dict | None = None  # name -> local_read(name)
    _signature: tuple | None = None
    _defaults: dict | None = None
    _first: str | None = None  # first parameter's name, "" for none (first_param)
    _reads: dict | None = None
    _untracked: set | None = None
    _made: dict | None = None
    _self_assigns: list | None = None

    @property
    def kind(self) -> str:
        if self._kind is None:
            self._kind = self._find_kind()
        return self._kind

    def _find_kind(self) -> str:
        if isinstance(self.node, ast.Lambda):
            return "lambda"
        for d in self.decorators:
            if d in decorator_names.KINDS:
                return decorator_names.KINDS[d]
            if d.endswith(decorator_names.ACCESSOR_SUFFIXES):
                return "property-accessor"
        return "method" if self.cls is not None else "function"

    @property
    def line(self) -> int:
        return self.node.lineno

    @property
    def params(self) -> ast.arguments:
        return self.node.args

    def locals(self) -> dict[str, list[Binding]]:
        if self._locals is None:
            self._scan()
        return self._locals

    def local_read(self, name: str) -> tuple[list[Binding], bool] | None:
        """How a read of `name` in this body finds its value, or None when the name is not
        this function's: unbound here, declared `global`, or only stored into (`table[k] = v`
        fills the enclosing scope's `table`). Else its bindings, and whether statement order
        matters (a name bound more than once, or stored into)."""
        reads = self._local_reads
        if reads is None:
            reads = self._local_reads = {}
        if name in reads:
            return reads[name]
        local = self.locals().get(name)
        found = None
        if local and not any(b.kind == "global" for b in local) and not all(b.kind == "item" for b in local):
            # a parameter rebound in the body keeps its argument on the paths that skip the
            # rebinding (`if cls is None: cls = default`): statement order tells them apart
            found = (local, len(local) > 1 or local[0].kind == "item" or name in self.param_names())
        reads[name] = found
        return found

    def reaching(self, node: ast.Name):
        """The histories (`index/flow.py`) of this body's bindings that reach the read `node`,
        or None where statement order is not modelled (every binding counts)."""
        if self._reads is None:
            if isinstance(self.node, ast.Lambda):
                self._reads = {}
            else:
                if self._made is None:
                    self._scan()
                made = self._made or {}
                rebound = frozenset(p for p in self.param_names() if p in self._locals)
                self._reads = body_reads(self.node.body, lambda stmt: made.get(id(stmt), {}), self._untracked, rebound)
                self._made = None  # only the flow walk reads it
        return self._reads.get(id(node))

    def self_assignments(self) -> list[tuple[str, Binding]]:
        """`self.x = ...` (and `setattr(self, "x", ...)`, `self.x.append(...)`) in this method."""
        if self._self_assigns is None:
            self._scan()
        return self._self_assigns

    def _scan(self) -> None:
        """One walk over the body for everything read off it: call sites, returns, yields,
        implicit-call statements, the bindings of the body (and which statement makes each, for
        index/flow.py), the names flow does not follow, and the method's `self.x` stores."""
        calls, returns, special = [], [], []
        untracked: set[str] = set()  # names statement order does not follow (index/flow.py)
        comprehended: dict = {}      # the bindings comprehension targets make, by name
        made: dict[int, dict] = {}   # id(statement) -> the bindings it makes, by name
        self_assigns: list[tuple[str, Binding]] = []
        selfname = first_param(self) if self.cls is not None and self.kind != "staticmethod" else None
        scope_qual = self.module.name if self.name == MODULE_CODE else self.qual
        local = self.name != MODULE_CODE  # a function's own locals (module code's are globals)
        package = self.module.package
        generator = False
        for n, owner in _walk_owned(self.node):
            scanned = _SCANNED.get(n.__class__)
            if scanned is None:
                scanned = _SCANNED[n.__class__] = issubclass(n.__class__, _SCANNED_NODES)
            if not scanned:
                continue
            if isinstance(n, ast.Call):
                calls.append(n)
                if spreads(n):  # `f(*xs)`, `f(**m)`: the iteration and mapping protocols
                    special.append(n)
            elif unpacks(n):  # `a, b = obj`: the iteration protocol
                special.append(n)
            elif isinstance(n, ast.Return):
                if n.value is not None:
                    returns.append(n.value)
            elif isinstance(n, (ast.Yield, ast.YieldFrom)):
                generator = True
                if isinstance(n, ast.YieldFrom):  # `yield from obj`: the iteration protocol
                    special.append(n)
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Raise, ast.For, ast.AsyncFor,
                                ast.comprehension, ast.With, ast.AsyncWith)):
                special.append(n)
            if isinstance(n, ast.NamedExpr):
                untracked.update(t.id for t in ast.walk(n.target) if isinstance(t, ast.Name))
            elif isinstance(n, (ast.Global, ast.Nonlocal)):
                untracked.update(n.names)
            if isinstance(n, ast.comprehension):
                # Python 3: a comprehension's target is its own scope's, not this body's: no
                # statement of the body rebinds it (flow.py's reads outside the comprehension
                # do not see it; reads inside fall back to every binding, this one included)
                bind_node(n, comprehended, scope_qual, package, local, self.module.renamed)
                continue
            table = made.get(id(owner))
            if table is None:
                table = made[id(owner)] = {}
            bind_node(n, table, scope_qual, package, local, self.module.renamed)
            if selfname is not None:
                self_assigns.extend(_self_assignments(n, selfname))
        calls.sort(key=lambda c: (c.lineno, c.col_offset))
        self._calls = calls
        self._returns = [self.node.body] if isinstance(self.node, ast.Lambda) else returns
        self._generator = generator and not isinstance(self.node, ast.Lambda)
        self._special = special
        self._self_assigns = self_assigns
        table = {}
        for per_stmt in made.values():
            for name, bs in per_stmt.items():
                table.setdefault(name, []).extend(bs)
        # a name only comprehensions bind (no statement of the body, not a parameter): its
        # reads are not ordered (every binding counts, as before)
        untracked.update(n for n in comprehended if n not in table and n not in self.param_names())
        self._untracked = untracked
        if self._locals is None:  # module code's are the module's globals, collected at load
            for name, bs in comprehended.items():
                table.setdefault(name, []).extend(bs)
            self._locals = table
        # kept for reaching() only where statement order can matter (a name bound twice or
        # stored into): the flow walk is not needed elsewhere, and the tables would double locals
        params = self.param_names()
        ordered = any(len(bs) > 1 or bs[0].kind == "item" or name in params for name, bs in self._locals.items())
        self._made = made if self._reads is None and ordered else None

    def calls(self) -> list[ast.Call]:
        if self._calls is None:
            self._scan()
        return self._calls

    def returns(self) -> list[ast.expr]:
        if self._returns is None:
            self._scan()
        return self._returns

    def implicit_calls(self, make) -> list[tuple[str, ast.Call]]:
        """Calls the syntax makes without a call expression, as synthetic call nodes placed at
        their source (`@dec def f` is `dec(f)`, `raise E` is `E()`, `for x in obj` calls
        `obj.__iter__()`...): what `make(node)` gives, as (kind, call) pairs, for each nested
        def, `raise` and loop of the body in source order, memoised. The rules make them
        (explore.implicit_calls); the index only finds the statements."""
        if self._implicit is None:
            if self._special is None:
                self._scan()
            self._implicit = [pair for node in self._special if node is not self.node for pair in make(node)]
        return self._implicit

    def attribute_reads(self, make) -> list[tuple[str, ast.Call]]:
        """The attribute reads of the body (`x.attr`, `self.a.attr`, `f().attr`), as what
        `make(node)` gives (synthetic calls `x.attr()` placed at each, a path's step being a
        call: where a property's getter may run, explore.py asks `semantics/properties.py`),
        in source order, memoised."""
        return self._implicit_of(_READS, make)

    def item_accesses(self, make) -> list[tuple[str, ast.Call]]:
        """The subscripts of the body (`x[k]`, `self.t[k]`, `f()[k]`), as what `make(node)`
        gives (synthetic calls: semantics/item_protocol.py), in source order, memoised."""
        return self._implicit_of(_ITEMS, make)

    def attribute_stores(self, make) -> list[tuple[str, ast.Call]]:
        """The attribute stores and deletions of the body (`x.attr = v`, `del self.a.attr`), as
        what `make(node)` gives (synthetic calls: where a property's setter or deleter may run,
        semantics/properties.py), in source order, memoised."""
        return self._implicit_of(_STORES, make)

    def operator_calls(self, make) -> list[tuple[str, ast.Call]]:
        """The operators, truth tests and f-string values of the body (`a + b`, `-a`, `a < b`,
        `k in d`, `a += b`, `if x:`, `x and y`, `f"{x}"`...), as what `make(node)` gives
        (synthetic calls of their operands' dunders: semantics/operator_protocol.py), in source
        order, memoised."""
        return self._implicit_of(_OPERATORS, make)

    def _implicit_of(self, kind: int, make) -> list:
        """What `make` gives for each node of one kind `_scan_reads` collects, memoised; the
        nodes themselves are let go once made."""
        made = self._reads_made
        if made is None:
            made = self._reads_made = [None] * len(_KINDS)
        if made[kind] is None:
            seen = self._reads_seen
            if seen is None or seen[kind] is None:
                seen = self._reads_seen = self._scan_reads()
            made[kind] = [x for n in seen[kind] for x in make(n)]
            seen[kind] = None
            if all(x is None for x in seen):
                self._reads_seen = None
        return made[kind]

    def _scan_reads(self) -> list:
        """One walk over the body for the nodes implicit calls may hide in, by kind (`_KINDS`),
        in source order: attribute reads, subscripts, attribute stores, and operators, truth
        tests and f-string values; None for a kind already made. `x.a += v` reads `x.a` before
        it stores it."""
        found: list = [[] for _ in _KINDS]
        reads, subs, stores, ops = found
        for n in walk_local(self.node):
            if isinstance(n, ast.Attribute):
                (reads if isinstance(n.ctx, ast.Load) else stores).append(n)
            elif isinstance(n, ast.Subscript):
                subs.append(n)
            elif isinstance(n, _OPERATOR_NODES):
                ops.append(n)
                if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Attribute):
                    reads.append(n.target)
        return [None if self._reads_made[k] is not None else sorted(nodes, key=_position)
                for k, nodes in enumerate(found)]

    def is_generator(self) -> bool:
        if self._generator is None:
            self._scan()
        return self._generator

    def signature(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """Names of the positional parameters (positional-only first) and keyword-only ones."""
        if self._signature is None:
            a = self.node.args
            self._signature = (tuple(p.arg for p in a.posonlyargs + a.args), tuple(p.arg for p in a.kwonlyargs))
        return self._signature

    def defaults(self) -> dict:
        """Parameter name -> its default's expression, for the parameters that have one."""
        if self._defaults is None:
            a = self.node.args
            positional = a.posonlyargs + a.args
            out = dict(zip([p.arg for p in positional[len(positional) - len(a.defaults):]], a.defaults))
            out.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None})
            self._defaults = out
        return self._defaults

    def param_names(self) -> frozenset[str]:
        if self._params is None:
            a = self.node.args
            names = {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs}
            names |= {x.arg for x in (a.vararg, a.kwarg) if x is not None}
            self._params = frozenset(names)
        return self._params


@dataclass(eq=False)
class ClassInfo:
    qual: str
    name: str
    node: ast.ClassDef
    module: "ModuleInfo"
    methods: dict[str, FuncInfo] = field(default_factory=dict)
    attrs: dict[str, list[Binding]] = field(default_factory=dict)
    # (name, "setter" / "deleter") -> the accessor of the property `name` this body defines
    accessors: dict[tuple[str, str], FuncInfo] = field(default_factory=dict)
    # name -> the getter of a property the body makes by `name = property(fget, ...)`
    # (index/class_aliases.py); `methods[name]` is that getter too
    made_properties: dict[str, FuncInfo] = field(default_factory=dict)
    _self_attrs: dict | None = None

    @property
    def line(self) -> int:
        return self.node.lineno

    def self_attrs(self) -> dict[str, list[tuple[FuncInfo, Binding]]]:
        """`self.x = ...` (and `setattr(self, "x", ...)`) in every method of this class."""
        if self._self_attrs is None:
            out: dict[str, list[tuple[FuncInfo, Binding]]] = {}
            for fn in {id(f): f for f in self.methods.values()}.values():  # an alias once
                for attr, binding in fn.self_assignments():
                    out.setdefault(attr, []).append((fn, binding))
            self._self_attrs = out
        return self._self_attrs


@dataclass(eq=False)
class ModuleInfo:
    name: str
    path: Path
    display: str
    tree: ast.Module
    is_package: bool
    globals: dict[str, list[Binding]] = field(default_factory=dict)
    store_lines: tuple[int, ...] | None = None  # of its text (store_lines); None: not read, any line
    # id(def) -> its name where a body defines the name twice (index/redefinitions.py)
    renamed: dict[int, str | None] = field(default_factory=dict)

    @property
    def package(self) -> str:
        return self.name if self.is_package else self.name.rpartition(".")[0]

    @property
    def star_imports(self) -> list[str]:
        return [b.target for b in self.globals.get("*", ())]


def unpacks(node: ast.AST) -> bool:
    """Whether an assignment unpacks its value (`a, b = obj`, `[a, *rest] = obj`)."""
    return isinstance(node, ast.Assign) and any(isinstance(t, (ast.Tuple, ast.List)) for t in node.targets)


def spreads(node: ast.AST) -> bool:
    """Whether a call spreads an argument (`f(*xs)`, `f(**m)`)."""
    return isinstance(node, ast.Call) and (any(isinstance(a, ast.Starred) for a in node.args)
                                           or any(kw.arg is None for kw in node.keywords))


def first_param(fn: FuncInfo) -> str | None:
    if fn._first is None:
        args = fn.node.args.posonlyargs or fn.node.args.args
        fn._first = args[0].arg if args else ""
    return fn._first or None


# The nodes FuncInfo._scan reads anything off: calls, returns, yields, the statements that
# make implicit calls, and every node bind_node or _self_assignments binds a name for.
# (tests/test_scan.py checks that bind_node binds nothing for any other node.)
_SCANNED_NODES = (ast.Call, ast.Return, ast.Yield, ast.YieldFrom, ast.FunctionDef, ast.AsyncFunctionDef,
                  ast.ClassDef, ast.Raise, ast.For, ast.AsyncFor, ast.comprehension, ast.NamedExpr,
                  ast.Global, ast.Nonlocal, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.With,
                  ast.AsyncWith, ast.Import, ast.ImportFrom, ast.ExceptHandler)
_SCANNED: dict[type, bool] = {}


# the kinds of nodes FuncInfo._scan_reads collects, in this order
_KINDS = (_READS, _ITEMS, _STORES, _OPERATORS) = range(4)
# the nodes that run an operand's dunders: operators, truth tests, f-strings, the keys of dict and
# set displays and of the container methods that hash them (operator_protocol.py)
_OPERATOR_NODES = (ast.BinOp, ast.AugAssign, ast.UnaryOp, ast.Compare, ast.If, ast.While, ast.IfExp, ast.Assert,
              ast.BoolOp, ast.comprehension, ast.FormattedValue, ast.Dict, ast.Set, ast.DictComp, ast.SetComp,
              ast.Call, ast.Await)


def _position(node: ast.AST) -> tuple[int, int]:
    """Source order; a comprehension's clause (no position of its own) at its target's."""
    at = node.target if isinstance(node, ast.comprehension) else node
    return at.lineno, at.col_offset


def walk_local(node: ast.AST) -> Iterator[ast.AST]:
    """ast.walk over a function's own body: nested defs, lambdas and classes are their own scopes.

    Default values and decorators of nested defs run in this scope, so they are included.
    """
    if isinstance(node, ast.Lambda):
        stack: list[ast.AST] = [node.body]
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        stack = list(node.body)
    else:
        stack = [node]
    while stack:
        cur = stack.pop()
        yield cur
        if isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef)):
            stack.extend(cur.decorator_list)
            stack.extend(d for d in cur.args.defaults if d is not None)
            stack.extend(d for d in cur.args.kw_defaults if d is not None)
            continue
        if isinstance(cur, ast.Lambda):
            stack.extend(cur.args.defaults)
            continue
        if isinstance(cur, ast.ClassDef):
            stack.extend(cur.decorator_list)
            stack.extend(cur.bases)
            continue
        stack += child_nodes(cur)


def _walk_owned(node: ast.AST) -> Iterator[tuple[ast.AST, ast.AST | None]]:
    """walk_local, with each node's statement: itself or the closest statement around it."""
    if isinstance(node, ast.Lambda):
        stack: list[tuple[ast.AST, ast.AST | None]] = [(node.body, None)]
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        stack = [(s, s) for s in node.body]
    else:
        stack = [(node, node if isinstance(node, ast.stmt) else None)]
    stmt, node_class = ast.stmt, ast.AST
    kinds = _WALK_KIND
    while stack:
        cur, owner = stack.pop()
        yield cur, owner
        row = kinds.get(cur.__class__)
        if row is None:
            row = _walk_kind(cur.__class__)
        kind, fields = row
        if kind == _EXPR:  # no statement below an expression (lambda bodies are not walked)
            for name in fields:  # child_nodes, inline: this walk meets every node of every body
                value = getattr(cur, name, None)
                if value.__class__ is list:
                    stack += [(child, owner) for child in value if isinstance(child, node_class)]
                elif isinstance(value, node_class):
                    stack.append((value, owner))
            continue
        if kind == _DEF:
            children = [*cur.decorator_list, *(d for d in cur.args.defaults if d is not None),
                        *(d for d in cur.args.kw_defaults if d is not None)]
        elif kind == _LAMBDA:
            children = cur.args.defaults
        elif kind == _CLASS:
            children = [*cur.decorator_list, *cur.bases]
        else:
            children = child_nodes(cur)
        for child in children:
            stack.append((child, child if isinstance(child, stmt) else owner))


_EXPR, _HOLDS_STMTS, _DEF, _LAMBDA, _CLASS = range(5)
_WALK_KIND: dict[type, tuple[int, tuple[str, ...]]] = {}


def _walk_kind(cls: type) -> tuple[int, tuple[str, ...]]:
    if issubclass(cls, (ast.FunctionDef, ast.AsyncFunctionDef)):
        kind = _DEF
    elif issubclass(cls, ast.Lambda):
        kind = _LAMBDA
    elif issubclass(cls, ast.ClassDef):
        kind = _CLASS
    elif issubclass(cls, (ast.stmt, ast.excepthandler, ast.match_case, ast.mod)):
        kind = _HOLDS_STMTS
    else:
        kind = _EXPR
    row = _WALK_KIND[cls] = (kind, child_fields(cls))
    return row


def dotted_text(node: ast.AST) -> str | None:
    """`a.b.c` for a chain of attributes on a name; None for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


# Container methods that put values in: `layers.append(Layer())`, `table.update({...})`.
ADDING_METHODS = {"append": 0, "add": 0, "insert": 1, "setdefault": 1, "extend": "*", "update": "**", "appendleft": 0}
# How many positional arguments each takes on a list, set, deque or dict (`update` any): a call
# spelled with another count (`cute.append(shape, n)`, an outside module's function) raises
# TypeError on a builtin container, so it stores nothing into one and is not read as a store.
ADDING_ARITY = {"append": 1, "add": 1, "appendleft": 1, "extend": 1, "insert": 2, "setdefault": 2}

# The text of a statement that may store into a container or declare a name global (what
# `_mutation` and `ast.Global` read): `X[k] = v`, `X.append(v)` and the other ADDING_METHODS,
# `global X`. It errs towards yes (strings and comments match too); see store_lines.
_STORE_TEXT = re.compile(r"\bglobal\b|\][\s\\]*=(?!=)|\.[\s\\]*(?:" + "|".join(ADDING_METHODS) + r")\b[\s\\]*\(")


def store_lines(text: str) -> tuple[int, ...]:
    """The lines (1-based, sorted) on which a match of _STORE_TEXT starts or ends: a function
    spanning none of them makes no item store and declares nothing global, so
    `containers.remote_stores` need not scan its locals (5,758 functions' scans were most of
    a query's fixed cost on SGLang srt)."""
    lines: list[int] = []
    line, last = 1, 0
    for m in _STORE_TEXT.finditer(text):
        line += text.count("\n", last, m.start())
        end = line + text.count("\n", m.start(), m.end())
        lines.append(line)
        if end != line:
            lines.append(end)
        line, last = end, m.end()
    return tuple(lines)


def spans_any(lines: tuple[int, ...], node: ast.AST) -> bool:
    """Whether one of the sorted `lines` falls within node's lines."""
    i = bisect.bisect_left(lines, node.lineno)
    return i < len(lines) and lines[i] <= (node.end_lineno or node.lineno)


# A subscript key that is not a literal (`x[k] = e`).
# The name module-level code runs under (`mod.<module>`, see index/project.py).
MODULE_CODE = "<module>"


def _is_self_attr(node: ast.AST, selfname: str) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == selfname


def _mutation(node: ast.AST) -> tuple[ast.AST, Binding] | None:
    """`X.append(v)` / `X[k] = v` and friends: (the container expression X, the binding)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ADDING_METHODS:
        pos = ADDING_METHODS[node.func.attr]
        arity = ADDING_ARITY.get(node.func.attr)
        spread = any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords)
        if arity is not None and not spread and (len(node.args) != arity or node.keywords):
            return None
        container, keys = _subscripts(node.func.value)
        if isinstance(pos, str) and node.args:
            return container, Binding("item", node.args[0], (pos,), keys=keys)
        if isinstance(pos, int) and len(node.args) > pos:
            return container, Binding("item", node.args[pos], (), keys=keys)
    if isinstance(node, ast.Assign):
        for t in node.targets:
            if isinstance(t, ast.Subscript):
                container, keys = _subscripts(t)
                return container, Binding("item", node.value, ("=",), keys=keys)
    return None


def _subscripts(node: ast.AST) -> tuple[ast.AST, tuple]:
    """`x["a"][k]` -> (x, ("a", ANY_KEY)): the container a nested store goes into, and the keys."""
    keys = []
    while isinstance(node, ast.Subscript):
        s = node.slice
        keys.append(s.value if isinstance(s, ast.Constant) and not isinstance(s.value, type(...)) else ANY_KEY)
        node = node.value
    return node, tuple(reversed(keys))


def _self_assignments(node: ast.AST, selfname: str) -> Iterator[tuple[str, Binding]]:
    mutated = _mutation(node)
    if mutated is not None and _is_self_attr(mutated[0], selfname):
        yield mutated[0].attr, mutated[1]
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if node.value is None:
            return
        for t in targets:
            for sub, path in _unpack(t, ()):
                if _is_self_attr(sub, selfname):
                    yield sub.attr, Binding("assign", node.value, path)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr":
        a = node.args
        if (
            len(a) == 3
            and isinstance(a[0], ast.Name)
            and a[0].id == selfname
            and isinstance(a[1], ast.Constant)
            and isinstance(a[1].value, str)
        ):
            yield a[1].value, Binding("assign", a[2], ())


def _unpack(target: ast.AST, path: tuple) -> Iterator[tuple[ast.AST, tuple]]:
    if isinstance(target, (ast.Tuple, ast.List)):
        for i, elt in enumerate(target.elts):
            if isinstance(elt, ast.Starred):
                yield from _unpack(elt.value, path + ("*",))
            else:
                yield from _unpack(elt, path + (i,))
    else:
        yield target, path


def _add(table: dict, name: str, binding: Binding) -> None:
    table.setdefault(name, []).append(binding)


def _bind_target(target: ast.AST, table: dict, make) -> None:
    for sub, path in _unpack(target, ()):
        if isinstance(sub, ast.Name):
            _add(table, sub.id, make(path))
        elif isinstance(sub, ast.Starred) and isinstance(sub.value, ast.Name):
            _add(table, sub.value.id, make(path + ("*",)))


def collect_bindings(root: ast.AST, table: dict, scope_qual: str, package: str, renamed: dict | None = None) -> None:
    """Bindings made in one scope (a function body or a module body), nested scopes excluded."""
    for node in walk_local(root) if not isinstance(root, ast.stmt) else _walk_stmt(root):
        bind_node(node, table, scope_qual, package, False, renamed)


def bind_node(node: ast.AST, table: dict, scope_qual: str, package: str, local: bool = False,
              renamed: dict | None = None) -> None:
    """The bindings one node makes in its scope (`scope_qual` names its definitions). In a
    function body (`local`), `x: T = v` binds `v` alone: the annotation adds no value at run
    time, and nothing outside the function can set its local (`attention_interface: Callable =
    ALL_ATTENTION_FUNCTIONS.get_interface(...)` is what get_interface returns, not any callable).
    A module's or class's `x: T = v` keeps T too (a dataclass field, a global set from outside);
    a read of a module global drops it where nothing can set it from outside
    (`Evaluator._module_bindings`)."""
    mutated = _mutation(node)
    if mutated is not None and isinstance(mutated[0], ast.Name):
        _add(table, mutated[0].id, mutated[1])
    if isinstance(node, ast.Assign):
        for t in node.targets:
            _bind_target(t, table, lambda p, v=node.value: Binding("assign", v, p))
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        if node.value is not None:
            _bind_target(node.target, table, lambda p, v=node.value: Binding("assign", v, p))
        if isinstance(node, ast.AnnAssign) and not (local and node.value is not None):  # `x: T` (fields...)
            _bind_target(node.target, table, lambda p, a=node.annotation: Binding("annot", a, p))
    elif isinstance(node, ast.NamedExpr):
        _bind_target(node.target, table, lambda p, v=node.value: Binding("assign", v, p))
    elif isinstance(node, (ast.For, ast.AsyncFor)):
        _bind_target(node.target, table, lambda p, v=node.iter: Binding("iter", v, p))
    elif isinstance(node, ast.comprehension):
        _bind_target(node.target, table, lambda p, v=node.iter: Binding("iter", v, p))
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        for item in node.items:
            if item.optional_vars is not None:
                _bind_target(item.optional_vars, table, lambda p, v=item.context_expr: Binding("with", v, p))
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        for name, target in import_bindings(node, package):
            _add(table, name, Binding("import", target=target))
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        if renamed and id(node) in renamed:  # a name defined twice in the body (redefinitions.py)
            if renamed[id(node)] is not None and redefinitions.binds(node):
                _add(table, node.name, Binding("def", target=renamed[id(node)]))
        else:
            _add(table, node.name, Binding("def", target=f"{scope_qual}.{node.name}"))
    elif isinstance(node, ast.ClassDef):
        _add(table, node.name, Binding("class", target=f"{scope_qual}.{node.name}"))
    elif isinstance(node, ast.ExceptHandler) and node.name:  # an exception the clause's classes name
        _add(table, node.name, Binding("caught", node.type, ()))
    elif isinstance(node, ast.Global):
        for n in node.names:
            _add(table, n, Binding("global"))


def _walk_stmt(stmt: ast.stmt) -> Iterator[ast.AST]:
    """Walk one statement of a scope without entering nested scopes (but yielding their defs)."""
    stack: list[ast.AST] = [stmt]
    while stack:
        cur = stack.pop()
        yield cur
        if isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack += child_nodes(cur)


def import_bindings(node: ast.Import | ast.ImportFrom, package: str) -> list[tuple[str, str]]:
    """(local name, dotted target) for an import statement; relative imports need `package`."""
    out = []
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname:
                out.append((alias.asname, alias.name))
            else:
                top = alias.name.split(".")[0]
                out.append((top, top))
        return out
    base = node.module or ""
    if node.level:
        pkg_parts = package.split(".") if package else []
        if node.level - 1 > len(pkg_parts):
            return out
        pkg_parts = pkg_parts[: len(pkg_parts) - (node.level - 1)]
        base = ".".join(pkg_parts + ([base] if base else []))
    for alias in node.names:
        if alias.name == "*":
            out.append(("*", base))
        else:
            out.append((alias.asname or alias.name, f"{base}.{alias.name}" if base else alias.name))
    return out
