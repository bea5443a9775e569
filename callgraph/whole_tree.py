"""Whole-tree call graph (export, callers): every function of the scope as an entry.

Context-insensitive by nature, but not blind to arguments: pass one resolves every function
with its parameters unbound and records, for each callee, what each call site binds; pass two
resolves each callee once more with the union of those bindings (and again, up to
EXPORT_ROUNDS passes, for callees handed a function or class they had not been). A union is not
a fixpoint when the passes end: a callee whose union grew after its last pass, and every function
it reaches, keep their rows about their own parameters left unbound (`downstream`). So `general_mm_embed_routine`
gets an edge to the `forward` of every language model any VLM passes it (what a whole-program
graph must say), at the cost of two visits per function, not one per caller.
"""
from __future__ import annotations

from typing import Callable, Iterable

from . import workers
from .explore import EdgeTable, Exploration, Explorer, graph_view
from .index.project import Project
from .semantics.binding import self_context
from .infer.evaluator import Evaluator
from .values import Ctx, VClass, VFunc, VInst, VPartial, VUnknown, ordered
from .model import GraphView

# Whole-tree mode trades depth for breadth: shallower return inference, fewer argument sets.
EXPORT_INFER_DEPTH = 4
EXPORT_RETURN_CONTEXTS = 2
# Closures (lambdas, nested defs) keep their own contexts: at most this many each.
EXPORT_CLOSURE_CONTEXTS = 4
# A parameter's union over all callers keeps at most this many values.
EXPORT_UNION_VALUES = 256
# Passes that re-resolve callees with their callers' arguments (each after the one before).
EXPORT_ROUNDS = 3
# Values whose arrival in a union makes a later round worth it: what can be called.
_HANDED = (VFunc, VPartial, VClass)


# What stands for the values a union past EXPORT_UNION_VALUES leaves out: a call on the parameter
# stays unresolved (its row kept), never resolved by the values kept alone.
_UNION_CUT = VUnknown(f"more than {EXPORT_UNION_VALUES} values from the callers; the rest not followed")


def _capped(vals) -> frozenset:
    """A parameter's union as a context holds it: the first EXPORT_UNION_VALUES values and, when
    that cut any, an unknown for the others (dropped, a site resolved from the values kept would
    lose the edges of the others with no row: the export's `drop_resolved_sites`)."""
    if len(vals) <= EXPORT_UNION_VALUES:
        return frozenset(vals)
    return frozenset(ordered(vals)[:EXPORT_UNION_VALUES]) | {_UNION_CUT}


def whole_tree(project: Project, binds: dict[str, str], roots: tuple[str, ...], node,
               progress: Callable[[str], None] | None = None, jobs: int = 1, registries=None) -> GraphView:
    """`jobs`: processes the sweeps run in (workers.py); `registries`: the Analysis's (its model
    config, its tables read once)."""
    project.load_all(progress)
    scope_paths = {p.resolve() for p in project.scope_files()}
    starts = []
    for fn in list(project.functions.values()):
        if fn.name == "<lambda>" or fn.module.path not in scope_paths:
            continue
        starts.append(self_context(fn, VInst(fn.cls.qual, exact=False)) if fn.cls else Ctx(fn.qual))
    jobs = workers.usable_jobs(jobs)
    if progress:
        progress(f"resolving {len(starts)} functions" + (f" in {jobs} processes" if jobs > 1 else ""))
    ev = Evaluator(project, binds, max_depth=EXPORT_INFER_DEPTH, max_return_contexts=EXPORT_RETURN_CONTEXTS,
                   registries=registries)
    ev.registries.adapters  # the registries' tables, read off every file's text, then the texts go
    project.forget_texts()
    explorer = Explorer(project, ev, whole_tree=True)
    ex = Exploration(graph=EdgeTable())

    # Pass one: every function with its parameters unbound; what each call site binds is folded
    # into its callee's union as it is met (the callee contexts themselves are not kept).
    rounds = _Rounds()
    rounds.resolved.update(starts)  # a callee whose callers bind what pass one assumed is done
    rounds.fold(workers.sweep(explorer, ex, starts, jobs, progress))
    # Then each callee with the union of what its callers bind, closures as they are; and again
    # for the callees whose union grew in that pass (a function handed down two calls: `f(g)`
    # where `f(a)` calls `a(h)`), for EXPORT_ROUNDS passes in all.
    for i in range(EXPORT_ROUNDS):
        todo = rounds.next_contexts(first=i == 0)
        if not todo:
            break
        if progress:
            progress(f"resolving {len(todo)} functions again with their callers' arguments")
        rounds.fold(workers.sweep(explorer, ex, todo, jobs, progress))

    ev.close()
    # a site left unresolved with parameters unbound, then resolved with the callers' arguments,
    # is resolved; but not in a closure some of whose contexts were left out (past
    # EXPORT_CLOSURE_CONTEXTS): the edges of those are missing, and the row stands for them. A
    # callee whose union grew after its last pass, and what it or such a closure reaches (the
    # values they would have passed on are missing there too), keep their rows about their own
    # parameters: a call on one may lack the edges of the values not followed
    return graph_view(ex, roots, "", {c.fn for c in starts}, node, drop_resolved_sites=True,
                      keep_rows_of=frozenset(rounds.capped),
                      param_rows_of=downstream(ex.graph, rounds.capped | rounds.stale))


def downstream(graph, stale) -> frozenset:
    """`stale` and every function it reaches by the graph's edges: a function resolved without
    some values its callers pass (a union that grew after its last pass, a closure's context left
    out) passes them on to its callees, whose unions lack them too, and so on down."""
    out = set(stale)
    succ: dict[str, list[str]] = {}
    if out:
        for u, v in graph.edges():
            succ.setdefault(u, []).append(v)
    todo = list(out)
    while todo:
        for v in succ.get(todo.pop(), ()):
            if v not in out:
                out.add(v)
                todo.append(v)
    return frozenset(out)


class _Rounds:
    """The callers' arguments of every callee, folded in as the sweeps meet them."""

    def __init__(self):
        self.union: dict[str, dict[str, set]] = {}
        self.closures: dict[str, dict[Ctx, None]] = {}
        self.grown: dict[str, None] = {}   # functions whose union grew since the last round
        self.handed: set[str] = set()      # ... by a function or class handed down (see next_contexts)
        self.fresh: list[Ctx] = []         # closure contexts not resolved yet
        self.resolved: set[Ctx] = set()
        # closures with contexts past EXPORT_CLOSURE_CONTEXTS left out: their sites' rows stay
        self.capped: set[str] = set()
        # callees whose union grew after the last round that resolved them (`stale`)
        self.skipped: set[str] = set()

    @property
    def stale(self) -> set[str]:
        """The callees never resolved with their whole union: left out of a later round (no
        function or class handed down), or grown in the last one."""
        return self.skipped | set(self.grown)

    def fold(self, callees: Iterable[Ctx]) -> None:
        for ctx in callees:
            if ctx.closure is not None:
                bucket = self.closures.setdefault(ctx.fn, {})
                if ctx not in bucket and len(bucket) < EXPORT_CLOSURE_CONTEXTS:
                    bucket[ctx] = None
                    self.fresh.append(ctx)
                elif ctx not in bucket:
                    self.capped.add(ctx.fn)
            elif ctx.binds:
                params = self.union.setdefault(ctx.fn, {})
                for name, vals in ctx.binds:
                    have = params.setdefault(name, set())
                    if not vals <= have:
                        if any(isinstance(v, _HANDED) for v in vals - have):
                            self.handed.add(ctx.fn)
                        if have.__class__ is frozenset:  # shared with a context (next_contexts)
                            have = params[name] = set(have)
                        have.update(vals)
                        self.grown[ctx.fn] = None

    def next_contexts(self, first: bool) -> list[Ctx]:
        """The first round resolves every callee whose callers bind anything; later rounds only
        those that were handed a function, method or class they had not been (what a further
        round can turn into new edges: `f(g)` where `f(a)` calls `a(h)`). Other growth there,
        another instance or external value passed down, is left at the union it had (`stale`:
        its rows about its own parameters stay). Every value a union gains can change edges
        (an instance passed through a helper: `mid(x)` calls `run(x)`, which calls
        `x.forward()`), but re-resolving all of them until nothing grows does not end: attribute chains of outside values (`loc.loc.swa_loc`),
        string patterns and nested partials grow a little every round (SGLang srt: 1,100-1,300
        callees a round after 15 rounds)."""
        out, self.fresh = self.fresh, []
        for fn in sorted(self.grown):
            if not first and fn not in self.handed:
                self.skipped.add(fn)
                continue
            self.skipped.discard(fn)
            params = self.union[fn]
            kept = {n: _capped(v) for n, v in params.items()}
            for n, v in kept.items():
                if len(v) == len(params[n]):
                    params[n] = v  # the union is the context's set: held once, not twice
            ctx = Ctx(fn, tuple(sorted(kept.items())))
            if ctx not in self.resolved:
                self.resolved.add(ctx)
                out.append(ctx)
        self.grown.clear()
        self.handed.clear()
        return out
