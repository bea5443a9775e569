"""Demand-driven exploration: resolve only the call sites reachable from the entry.

States are calling contexts (a function and its parameter bindings), so a shared helper such
as `general_mm_embed_routine` is explored once per distinct language model it is given and
never mixes them. The function-level call graph (networkx) collects every resolved edge with its
evidence; the first witness path is read off breadth-first parent links, so it is a shortest one.
"""
from __future__ import annotations

import ast
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterator, NamedTuple, Optional


from . import __version__, heap
from .index import decorator_names
from .index.project import Project
from .index import implicit_names
from .index.scopes import first_param
from .semantics import (PRECEDENCE, constructor, decorators, descriptors, external, getattr_hook, isinstance_narrowing, item_protocol, iter_protocol, module_getattr, setattr_hook,
                        operator_protocol, properties, with_protocol)
from .semantics.rule import Dispatch, Target
from .infer.annotations import about_own_parameter
from .infer.evaluator import Evaluator, Scope
from .values import Ctx, VModule, VUnknown

if TYPE_CHECKING:   # imported where a graph is made (new_graph): a cached answer never needs it
    import networkx as nx
from .model import GraphView, Hop, Unresolved, hop_order, unresolved_order

# Contexts explored per function before its further call sites are explored context-free:
# bounds the work on helpers called from hundreds of places with different arguments.
MAX_CONTEXTS_PER_FUNCTION = 24
# Whole-tree export: per-context memo entries kept before they are dropped (see forget_local).
FORGET_ABOVE = 20_000
# Why a call site is left unresolved when resolving it overflows Python's stack (`g()()()…`
# 2,500 deep, 600 alternating `y = x; x = y`): the site, not the whole run, is given up.
TOO_DEEP = "too deep to analyse (Python's recursion limit was reached resolving this call)"


@dataclass(frozen=True, slots=True)
class Step:
    """A hop with the AST node behind it (for attribute chains), kept inside the analysis."""

    hop: Hop
    node: ast.Call


class UnresolvedSite(NamedTuple):
    """A call site one context could not resolve: the row a proof or graph reports, and what
    ranking it (relevance.py) and asking Jedi about it need. Rows of a whole-tree export (and
    from its workers, workers.py) carry the row only, each row once."""

    unresolved: Unresolved
    node: Optional[ast.Call]      # the call
    fn: object                    # the caller's FuncInfo
    depth: int                    # hops from the entry to the caller
    state: Optional[Ctx]          # the caller's context


def new_graph():
    """An empty networkx.MultiDiGraph. networkx is imported here, on the first exploration: a
    query answered from the cache never needs it, and importing it was 0.37 s of each run."""
    import networkx as nx

    return nx.MultiDiGraph()


@dataclass
class Exploration:
    graph: "nx.MultiDiGraph | EdgeTable"  # EdgeTable: a whole-tree export
    reached: Ctx | None = None
    parents: dict = field(default_factory=dict)      # Ctx -> (Ctx, Step)
    unresolved: list[UnresolvedSite] = field(default_factory=list)
    functions: set = field(default_factory=set)
    ctx_edges: dict = field(default_factory=dict)    # (Ctx, Ctx) -> Step, every edge seen
    depth: dict = field(default_factory=dict)        # Ctx -> hops from the entry
    contexts: dict = field(default_factory=dict)     # function -> contexts explored
    seen_sites: set = field(default_factory=set)
    rows_seen: set = field(default_factory=set)      # whole-tree export: unresolved rows kept
    # whole-tree export: rows met in a closure's context, which no later round re-resolves
    kept_rows: set = field(default_factory=set)
    call_sites: int = 0
    timed_out: bool = False
    seconds: float = 0.0

    def path_to(self, ctx: Ctx) -> list[Step]:
        steps = []
        while ctx in self.parents and self.parents[ctx] is not None:
            prev, step = self.parents[ctx]
            steps.append(step)
            ctx = prev
        return list(reversed(steps))


class EdgeTable:
    """A whole-tree export's edges without networkx: (caller, callee, site, rule) -> hop. The
    sweeps only add edges and ask whether one is there; graph_view reads them once at the end.
    A MultiDiGraph keeps two adjacency dicts per node pair, a key dict and a data dict per edge:
    269 MB for the 381k edges of transformers' export. The part of networkx's interface the
    export uses (add_edge, has_edge, edges, nodes) reads the same."""

    __slots__ = ("_edges", "_nodes")

    def __init__(self):
        self._edges: dict[tuple, Hop] = {}
        self._nodes: dict[str, None] = {}

    @property
    def nodes(self) -> list[str]:
        return list(self._nodes)

    def add_node(self, name: str) -> None:
        self._nodes[name] = None

    def add_nodes_from(self, names) -> None:
        self._nodes.update(dict.fromkeys(names))

    def has_edge(self, u: str, v: str, key: tuple[str, str]) -> bool:
        return (u, v, *key) in self._edges

    def add_edge(self, u: str, v: str, key: tuple[str, str], hop: Hop) -> None:
        self._nodes.setdefault(u, None)
        self._nodes.setdefault(v, None)
        self._edges[(u, v, *key)] = hop

    def number_of_edges(self) -> int:
        return len(self._edges)

    def edges(self, keys: bool = False, data: bool = False):
        for (u, v, site, rule), hop in self._edges.items():
            out = (u, v, (site, rule)) if keys else (u, v)
            yield out + ({"hop": hop},) if data else out


class Explorer:
    def __init__(self, project: Project, ev: Evaluator, max_contexts: int = MAX_CONTEXTS_PER_FUNCTION,
                 whole_tree: bool = False):
        self.p = project
        self.ev = ev
        self.max_contexts = max_contexts
        self._deadline: float | None = None  # of the run in progress (resume)
        # Whole-tree export (sweep()): calls into external code are edges, and no witness paths
        # are read, so no states or steps are kept.
        self.whole_tree = whole_tree
        self._sites: dict[ast.Call, tuple[str, str]] = {}  # call node -> (site, text): one per node
        self._too_deep: set[ast.Call] = set()  # sites whose resolution overflowed the stack
        self._warned: set[str] = set()

    def _site(self, fn, node: ast.Call) -> tuple[str, str]:
        """A call site's place and source text, made once per node (every edge and unresolved
        row of the site shares the strings)."""
        found = self._sites.get(node)
        if found is None:
            found = self._sites[node] = (site_of(fn, node), _expr_text(node))
        return found

    def run(
        self,
        start: Ctx,
        is_target: Callable[[str], bool],
        stop_at_first: bool = True,
        deadline: float | None = None,
        max_depth: int | None = None,
        progress: Callable[[str], None] | None = None,
    ) -> Exploration:
        ex = Exploration(graph=new_graph())
        ex.parents[start] = None
        ex.depth[start] = 0
        ex.graph.add_node(start.fn)
        return self.resume(ex, [start], is_target, stop_at_first, deadline, max_depth, progress)

    def resume(self, ex: Exploration, frontier: list[Ctx], is_target, stop_at_first=True, deadline=None,
               max_depth=None, progress=None) -> Exploration:
        """Breadth-first from `frontier` (states already in `ex.parents`), adding to `ex`. Past
        `deadline` the run stops, between call sites too (one function of a cold tree may
        take seconds), and says so in `ex.timed_out`."""
        self._deadline = deadline
        try:
            return self._resume(ex, frontier, is_target, stop_at_first, deadline, max_depth, progress)
        finally:
            self._deadline = None  # a later sweep() or run without a budget is not cut

    def _resume(self, ex, frontier, is_target, stop_at_first, deadline, max_depth, progress) -> Exploration:
        t0 = time.perf_counter()
        last_report = t0
        while frontier:
            nxt: list[Ctx] = []
            for state in frontier:
                if max_depth is not None and ex.depth[state] >= max_depth:
                    continue
                if deadline is not None and time.perf_counter() > deadline:
                    ex.timed_out = True
                    nxt = []
                    break
                if self.visit(ex, state, is_target, nxt) and stop_at_first:
                    ex.seconds += time.perf_counter() - t0
                    return ex
                if progress and time.perf_counter() - last_report > 2.0:
                    last_report = time.perf_counter()
                    progress(f"explored {len(ex.functions)} functions, {ex.call_sites} call sites")
            frontier = nxt
        ex.seconds += time.perf_counter() - t0
        return ex

    def sweep(self, ex: Exploration, states: list[Ctx], progress=None) -> Iterator[Ctx]:
        """Whole-tree export: resolve the call sites of each state once, adding the edges to
        `ex`, and yield the callee contexts met (neither explored nor kept: the caller decides).
        Per-context memos are dropped as they pass FORGET_ABOVE entries, and the C heap's pages
        they held given back (heap.py)."""
        t0 = last_report = time.perf_counter()
        for state in states:
            ex.graph.add_node(state.fn)
            callees: list[Ctx] = []
            self.visit(ex, state, lambda q: False, callees)
            yield from callees
            if self.ev.memo_size() > FORGET_ABOVE:
                self.ev.forget_local()
                heap.release()  # the dropped memos' large tables: their pages back to the system
            if progress and time.perf_counter() - last_report > 2.0:
                last_report = time.perf_counter()
                progress(f"resolved {len(ex.functions)} functions, {ex.call_sites} call sites")
        ex.seconds += time.perf_counter() - t0

    def visit(self, ex: Exploration, state: Ctx, is_target, nxt: list[Ctx]) -> bool:
        """Dispatch every call site of one state, adding edges to `ex` and new callee contexts
        to `nxt`; True when the target was just reached."""
        fn = self.p.functions.get(state.fn)
        if fn is None:
            return False
        ex.functions.add(fn.qual)
        scope = Scope(fn.module, fn, state)
        depth = ex.depth.get(state, 0)
        dead = isinstance_narrowing.dead_nodes(self.ev, fn, scope)
        for node in fn.calls():
            if dead and id(node) in dead:
                continue  # in a branch `isinstance` rules out in this context
            if self._deadline is not None and time.perf_counter() > self._deadline:
                ex.timed_out = True  # the rest of this function's sites are not looked at
                return False
            d = self._dispatch(fn, node, scope)
            site_key = (fn.qual, node.lineno, node.col_offset)
            if site_key not in ex.seen_sites:
                ex.seen_sites.add(site_key)
                ex.call_sites += 1
            for why in dict.fromkeys(d.unresolved):
                row = Unresolved(fn.qual, *self._site(fn, node), why)
                if not self.whole_tree:
                    ex.unresolved.append(UnresolvedSite(row, node, fn, depth, state))
                else:
                    if row not in ex.rows_seen:  # the graph lists each row once, and only the row
                        ex.rows_seen.add(row)
                        ex.unresolved.append(UnresolvedSite(row, None, None, 0, None))
                    if state.closure is not None:
                        ex.kept_rows.add(row)
            if self._follow(ex, state, fn, node, d, None, is_target, nxt):
                return True
        row_of = lambda kind, node, why: ex.unresolved.append(  # noqa: E731
            UnresolvedSite(Unresolved(fn.qual, site_of(fn, node), _implicit_text(kind, node), why), node, fn, depth, state))
        for kind, node in fn.implicit_calls(implicit_calls):
            d = self._dispatch(fn, node, scope)
            if d.unresolved and d.unresolved[0] == TOO_DEEP:
                row_of(kind, node, TOO_DEEP)
            elif d.unresolved and kind in PROTOCOL_KINDS and not self.whole_tree:
                # `for x in obj`, `with obj`, `f(*obj)` on an object not inferred: any `__iter__`...
                row_of(kind, node, _may_run(kind, node, d.unresolved[0]))
            elif d.unresolved and kind in CALL_KINDS and not self.whole_tree:
                # `@deco` / `raise exc_type` not inferred: a call of it, ranked as calls are
                row_of(kind, node, d.unresolved[0])
            if self._follow(ex, state, fn, node, d, kind, is_target, nxt):
                return True
        for kind, node in self._implicit_sites(fn):  # getters, subscripts, operators, setters
            if dead and id(node.func) in dead:
                continue
            d = self._implicit(kind, node, scope)
            if d is None:
                continue
            if d.unresolved:  # a receiver not inferred: what may run is not known (reach only)
                row_of(kind, node, d.unresolved[0])
            if self._follow(ex, state, fn, node, d, kind, is_target, nxt):
                return True
        return False

    def _implicit_sites(self, fn) -> Iterator[tuple[str, ast.Call]]:
        """(kind, synthetic call) of the implicit calls hidden in reads, subscripts, operators
        and stores, each kind's made only once the ones before it are explored (a query may
        stop at the target first)."""
        yield from fn.attribute_reads(self._read_calls)  # `obj.x` runs x's getter
        yield from fn.item_accesses(self._item_calls)  # `obj[k]` runs __getitem__, k.__hash__
        yield from fn.operator_calls(self._operator_calls)  # `a + b` runs a.__add__, b.__radd__
        yield from fn.attribute_stores(self._store_calls)  # `obj.x = v` runs x's setter
        yield from module_getattr.import_calls(self.p, fn)  # `from m import x` runs m.__getattr__
        yield from getattr_hook.builtin_reads(fn, self.p.dunder_names())  # `getattr(obj, name)` reads
        yield from setattr_hook.builtin_stores(fn, self.p.dunder_names())  # `setattr(obj, name, v)` stores

    def _read_calls(self, node: ast.Attribute) -> list[tuple[str, ast.Call]]:
        """The synthetic calls `obj.x()` of an attribute read, placed at it: the getter's where
        some file of the scope defines a property of that name, a descriptor's `__get__` where a
        class body may bind the name to one, a `__getattr__` hook's where some file defines a
        hook."""
        kinds = [k for k, names in (("getter", self.p.property_names()), ("get", self.p.descriptor_names()))
                 if node.attr in names]
        made = [(k, ast.copy_location(ast.Call(func=node, args=[], keywords=[]), node)) for k in kinds]
        return made + getattr_hook.read_calls(node, self.p.dunder_names())  # `__getattr__` answering it

    def _item_calls(self, node: ast.Subscript) -> list[tuple[str, ast.Call]]:
        """The synthetic calls of a subscript: the container's item method, and the key's
        `__hash__` where some file of the scope defines one."""
        return item_protocol.calls(node, self.p.dunder_names())

    def _operator_calls(self, node: ast.AST) -> list[tuple[str, ast.Call]]:
        """The synthetic dunder calls of an operator or truth test, for the dunders some file
        of the scope defines."""
        return operator_protocol.calls(node, self.p.dunder_names())

    def _store_calls(self, node: ast.Attribute) -> list[tuple[str, ast.Call]]:
        """The setter's or deleter's synthetic call of an attribute store, where some file of
        the scope defines an accessor of that name."""
        out = properties.store_calls(node) if node.attr in self.p.accessor_names() else []
        if node.attr in self.p.descriptor_names():
            out += [("delete" if k == "deleter" else "set", call) for k, call in properties.store_calls(node)]
        return out + setattr_hook.store_calls(node, self.p.dunder_names())  # `__setattr__`, `__delattr__`

    def _implicit(self, kind: str, call: ast.Call, scope: Scope) -> Dispatch | None:
        """What the implicit call `call` of `kind` (`_implicit_sites`) runs on its receiver, as
        a dispatch under the kind's rule; None when nothing runs, or when reading the receiver
        overflows the stack (then nothing is known of it; the run goes on)."""
        try:
            if kind == "import":  # the receiver names the module imported from
                owners = frozenset({VModule(call.func.value.id)})
            else:
                owners = self.ev.eval(call.func.value, scope, set())
            if kind == "getter":
                found = properties.runs(self.ev, owners, call.func.attr)
            elif kind == "setter" or kind == "deleter":
                found = properties.accessor_runs(self.ev, owners, call.func.attr, kind)
            elif kind == "hook" or kind == "getattr" or kind == "import":  # a class's hook, a module's (PEP 562)
                found = getattr_hook.runs(self.ev, owners, call.func.attr) if kind != "import" else []
                found += [(qual, ctx, module_getattr.RULE.name)
                          for qual, ctx in module_getattr.runs(self.ev, owners, call.func.attr)]
            elif kind == "setattr" or kind == "delattr":
                found = setattr_hook.runs(self.ev, owners, kind)
            elif kind in descriptors.KINDS:
                found = descriptors.runs(self.ev, owners, call.func.attr, kind)
            elif kind == "item":
                found = item_protocol.runs(self.ev, owners, call, scope)
            else:
                found = operator_protocol.runs(self.ev, owners, call, scope)
        except RecursionError:
            self.ev.close()
            return None
        rule = IMPLICIT_RULE[kind]
        targets = [Target(f[0], f[1], f[2] if len(f) > 2 else rule) for f in found]
        why = None if self.whole_tree else _not_inferred(kind, call, owners)  # the export lists no such row
        return Dispatch(targets=targets, unresolved=[why] if why else []) if targets or why else None

    def _dispatch(self, fn, node: ast.Call, scope: Scope) -> Dispatch:
        """The call's dispatch; one that overflows the stack leaves the site unresolved (in
        every context: unresolved is always sound) and the run goes on. The overflow abandoned
        recursion guards that would read as empty (no target, nothing unresolved) forever, so
        every memo is dropped: correct answers, recomputed, and only on this rare path."""
        if node in self._too_deep:
            return Dispatch(unresolved=[TOO_DEEP])
        try:
            return self.ev.calls.dispatch(node, scope)
        except RecursionError:
            # The calls nested in this one (`g()()…` is 2,500 of them) would each overflow
            # again, each costing a full stack: they are given up with it.
            self._too_deep.update(n for n in ast.walk(node) if isinstance(n, ast.Call))
            self.ev.close()
            site = site_of(fn, node)
            if site not in self._warned:
                self._warned.add(site)
                self.p.warn(f"{site}: {TOO_DEEP}; left unresolved")
            return Dispatch(unresolved=[TOO_DEEP])

    def _follow(self, ex: Exploration, state: Ctx, fn, node: ast.Call, d, implicit: str | None, is_target,
                nxt: list) -> bool:
        """Add the edges of one dispatched call; True when the target was just reached."""
        for t in d.targets:
            if implicit is not None and t.rule == "callback":
                continue
            callee = self.p.functions.get(t.fn)
            rule, via = _rule_and_via(t.rule, d.tags, callee)
            if implicit is not None:  # named by its kind's rule, or by the rule `_implicit` gave it
                named = t.rule if implicit in SITE_KINDS else IMPLICIT_RULE[implicit]
                rule, via = named, tuple(r for r in dict.fromkeys((rule,) + via) if r != named)
            ctx = self.add_edge(ex, state, fn, node, t.fn, t.ctx, rule, via, implicit, t.key)
            if ctx is None:
                continue
            if is_target(t.fn) and ex.reached is None:
                ex.reached = ctx
                ex.functions.add(t.fn)
                return True
            nxt.append(ctx)
        if self.whole_tree and implicit is None:
            site, text = self._site(fn, node) if d.externals else ("", "")
            for hop in external.hops(fn.qual, d.externals, site, text):
                ex.graph.add_edge(fn.qual, hop.callee, key=(hop.site, hop.rule), hop=hop)
        return False

    def add_edge(self, ex: Exploration, state: Ctx, fn, node: ast.Call, callee: str, ctx: Ctx, rule: str,
                 via: tuple[str, ...], implicit: str | None = None, key: str = "") -> Ctx | None:
        """Record one resolved call; return the callee's context if it is new to explore."""
        # an implicit call's text is its own (`@dec`, `raise E`), made only for a new hop
        site, expr = (site_of(fn, node), None) if implicit else self._site(fn, node)
        known = ex.graph.has_edge(fn.qual, callee, key=(site, rule))
        if self.whole_tree and known:
            return ctx  # sweep(): the caller keeps what it needs
        hop = Hop(fn.qual, callee, site, _implicit_text(implicit, node) if implicit else expr, rule, via, key)
        if not known:
            ex.graph.add_edge(fn.qual, callee, key=(site, rule), hop=hop)
        if self.whole_tree:
            return ctx
        n = ex.contexts.get(callee, 0)
        if ctx not in ex.parents and n >= self.max_contexts:
            ctx = Ctx(callee, self._widened(callee, ctx), ctx.closure)  # widened: parameters unbound
        if ctx != state:
            ex.ctx_edges.setdefault((state, ctx), Step(hop, node))
        if ctx in ex.parents:
            return None
        ex.contexts[callee] = n + 1
        ex.parents[ctx] = (state, Step(hop, node))
        ex.depth[ctx] = ex.depth[state] + 1
        return ctx

    def _widened(self, callee: str, ctx: Ctx) -> tuple:
        """What a widened context keeps bound: nothing, but a classmethod's `cls`. Unbound, `self`
        reads as any instance of its class or below (annotations.py), but `cls` as the class
        itself only: `Sub29.build()` past 24 contexts of `Base.build` made `cls().run()` run
        `Base.run` alone, a false "unreachable". Such contexts stay apart by their class (a
        finite number: the tree's classes)."""
        fn = self.p.functions.get(callee)
        if fn is None or fn.cls is None or fn.kind != "classmethod":
            return ()
        first = first_param(fn)
        bound = ctx.get(first) if first else None
        return ((first, bound),) if bound is not None else ()


def graph_view(ex: Exploration, roots: tuple[str, ...], entry: str, names: set[str], node,
               drop_resolved_sites: bool = False, keep_rows_of: frozenset = frozenset(),
               param_rows_of: frozenset = frozenset()) -> GraphView:
    """The exploration's function-level graph in the shared vocabulary (sorted, deduplicated).
    `drop_resolved_sites`: leave out unresolved rows of call sites that got an edge in another
    context (an edge of the same call, not of an implicit call placed at the same node), but
    those of the functions in `keep_rows_of` (some of whose contexts were not swept) and those met
    in a closure's context (`kept_rows`: no later round resolves that context again), and the
    rows of a function in `param_rows_of` about its own parameters unbound (every function
    meets those with its parameters unbound, whatever the order of work: the rows it met in
    other contexts depend on what the memos held, and differ between one process and several)."""
    edges = sorted({d["hop"] for _, _, d in ex.graph.edges(data=True)}, key=hop_order)
    # an implicit call placed at the same node (`x.get` read by a hook, of the call `x.get(k)`)
    # resolves nothing of the call: its hop's text is the implicit call's (`_implicit_text`)
    resolved = {(h.caller, h.site, h.expr) for h in edges} if drop_resolved_sites else set()
    rows = (site.unresolved for site in ex.unresolved)
    keep = ex.kept_rows
    unresolved = sorted({u for u in rows if (u.caller, u.site, u.expr) not in resolved or u.caller in keep_rows_of
                         or u in keep or (u.caller in param_rows_of and about_own_parameter(u.why, u.caller))}, key=unresolved_order)
    names = set(names) | {h.caller for h in edges} | {h.callee for h in edges}
    return GraphView(root=roots, entry=entry, tool_version=__version__,
                     nodes=tuple(node(n) for n in sorted(names)), edges=tuple(edges), unresolved=tuple(unresolved))


# The rule that names an implicit call's hop, by its kind.
IMPLICIT_RULE = {"decorate": decorators.RULE.name, "raise": constructor.RULE.name, "iter": iter_protocol.RULE.name,
                 "with": iter_protocol.RULE.name, "unpack": iter_protocol.RULE.name,
                 "spread": iter_protocol.RULE.name, "getter": properties.RULE.name, "item": iter_protocol.RULE.name,
                 "setter": properties.RULE.name, "deleter": properties.RULE.name,
                 "operator": iter_protocol.RULE.name, "get": descriptors.RULE.name, "set": descriptors.RULE.name,
                 "delete": descriptors.RULE.name, "hook": getattr_hook.RULE.name, "getattr": getattr_hook.RULE.name,
                 "import": module_getattr.RULE.name, "setattr": setattr_hook.RULE.name,
                 "delattr": setattr_hook.RULE.name}
# The kinds of `implicit_calls` whose receiver not inferred is a blocker in reach, ranked by the
# dunder they run; and those whose callee not inferred is one, ranked as a call of it.
PROTOCOL_KINDS = frozenset({"iter", "with", "unpack", "spread"})
CALL_KINDS = frozenset({"decorate", "raise"})
# The kinds `_implicit_sites` makes, whose targets `_implicit` names by their rule.
SITE_KINDS = frozenset({"getter", "get", "hook", "getattr", "item", "operator", "setter", "deleter", "set", "delete",
                        "import", "setattr", "delattr"})


def implicit_calls(node: ast.AST) -> list[tuple[str, ast.Call]]:
    """(kind, synthetic call) for the calls statement `node` makes without a call expression:
    a nested def's decorators (`semantics/decorators.py`), `raise E` (`constructor.py`), a
    loop's `__iter__`/`__next__` (`iter_protocol.py`), a with-statement's `__enter__`/`__exit__`
    (`with_protocol.py`)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return [("decorate", c) for c in decorators.applications(node)]
    if isinstance(node, ast.Raise):
        return [("raise", c) for c in constructor.raised(node)]
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return [("with", c) for c in with_protocol.calls(node)]
    kind = "unpack" if isinstance(node, ast.Assign) else "spread" if isinstance(node, ast.Call) else "iter"
    return [(kind, c) for c in iter_protocol.calls(node)] + [("unpack", c) for c in iter_protocol.element_unpacks(node)]


def _not_inferred(kind: str, call: ast.Call, owners) -> str | None:
    """Why the implicit call's targets may be incomplete: a receiver not inferred (a parameter
    with no argument bound, a value not modelled), which may be any object, so the accessor,
    hook or dunder it may run is named (`implicit_names.of_implicit`, which the name bound
    ranks the row by: the synthetic call carries it as `rank_names`); None where every
    receiver is known."""
    open_ = sorted(v.why for v in owners if v.__class__ is VUnknown)
    return _may_run(kind, call, open_[0]) if open_ else None


def _may_run(kind: str, call: ast.Call, why: str) -> str:
    """`why` with what the implicit call `call` may run on a receiver not inferred
    (`implicit_names.of_implicit`: a dunder, an accessor, a hook), which the synthetic call
    keeps as `rank_names` for the name bound to rank its row by."""
    names = implicit_names.of_implicit(kind, call.func.attr, getattr_hook.ANY_NAME)
    call.rank_names = names
    shown = " / ".join("any accessor" if n == implicit_names.ANY_ACCESSOR else f"the accessor of '{n[1:]}'"
                       if n.startswith(implicit_names.ACCESSOR) else n for n in names)
    return f"{why}; the implicit call may run {shown}"


def _implicit_text(kind: str, node: ast.Call) -> str:
    shown = getattr(node, "shown", None)  # a rule's own text for its synthetic call (`yield from x`)
    if shown is not None:
        return shown
    try:
        if kind == "decorate":
            return f"@{ast.unparse(node.func)}"
        if kind == "raise":
            return f"raise {ast.unparse(node.func)}"
        if kind == "with":
            return f"with {ast.unparse(node.func.value)}"[:80]
        if kind == "import":
            return f"from {node.func.value.id} import {node.func.attr}"[:80]
        if kind == "unpack" or kind == "spread":  # `a, b = obj`; `f(*obj)`, `f(**obj)`
            inner = node.func.value
            while isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute):
                inner = inner.func.value
            if isinstance(inner, ast.Call):  # `next(xs)`: an element of xs (iter_protocol.element_unpacks)
                return f"... = an element of {ast.unparse(inner.args[0])} (unpacked)"[:80]
            text = ast.unparse(inner)
            if kind == "unpack":
                return f"... = {text} (unpacked)"[:80]
            return f"**{text}" if node.func.attr in ("keys", "__getitem__") else f"*{text}"[:80]
        if (kind == "setattr" or kind == "delattr") and node.func.attr == getattr_hook.ANY_NAME:
            return f"{kind}({ast.unparse(node.func.value)}, ...)"[:80]
        if kind == "getattr":
            name = "<name>" if node.func.attr == getattr_hook.ANY_NAME else repr(node.func.attr)
            return f"getattr({ast.unparse(node.func.value)}, {name})"[:80]
        if kind == "getter" or kind == "get" or kind == "hook":
            return ast.unparse(node.func)[:80]
        if kind == "operator":
            return ast.unparse(node)[:80]
        if kind == "setter" or kind == "set" or kind == "setattr":
            return f"{ast.unparse(node.func)} = ..."[:80]
        if kind == "deleter" or kind == "delete" or kind == "delattr":
            return f"del {ast.unparse(node.func)}"[:80]
        if kind == "item":
            return f"{ast.unparse(node.func.value)}[{ast.unparse(node.args[0])}]"[:80]
        inner = node.func.value
        while isinstance(inner, ast.Call):
            inner = inner.func.value
        return f"for ... in {ast.unparse(inner)}"[:80]
    except Exception:  # pragma: no cover
        return kind


def _larger_than(node: ast.AST, limit: int) -> bool:
    stack, seen = [node], 0
    while stack:
        seen += 1
        if seen > limit:
            return True
        stack.extend(ast.iter_child_nodes(stack.pop()))
    return False


def site_of(fn, node: ast.Call) -> str:
    return f"{fn.module.display}:{node.lineno}:{node.col_offset}"


def _rule_and_via(rule: str, tags: frozenset, callee) -> tuple[str, tuple[str, ...]]:
    """The hop's rule is the one that dispatched the call; a plain call of a function value
    (`direct`) is named by the most specific rule that typed its receiver instead. `via`: the
    other rules involved, in the registry's precedence (semantics.REGISTRY)."""
    rules = set(tags) | {rule}
    if callee is not None and any(d not in decorator_names.PLAIN and not d.endswith(decorator_names.ACCESSOR_SUFFIXES)
                                  for d in callee.decorators):
        rules.add("decorator")
    ranked = sorted((r for r in rules if r in PRECEDENCE), key=PRECEDENCE.__getitem__)
    primary = rule if rule != "direct" or not ranked else ranked[0]
    via = tuple(r for r in ranked if r != primary and r != "direct")
    return primary, via


# Nodes of a callee expression printed in full (its text is cut to 80 characters anyway);
# past it, unparsing each of the 2,500 calls nested in `g()()…` costs minutes.
MAX_TEXT_NODES = 400


def _expr_text(node: ast.Call) -> str:
    if _larger_than(node.func, MAX_TEXT_NODES):
        text = "<a long expression>"
    else:
        try:
            text = ast.unparse(node.func)
        except Exception:  # unparse recurses: a RecursionError on a deep one
            text = "<call>"
    if len(text) > 80:
        text = text[:77] + "..."
    return f"{text}(...)" if node.args or node.keywords else f"{text}()"
