"""Whole-tree call graph (export, callers): every function of the scope as an entry.

Context-insensitive by nature, but not blind to arguments: pass one resolves every function
with its parameters unbound and records, for each callee, what each call site binds; pass two
resolves each callee once more with the union of those bindings. So `general_mm_embed_routine`
gets an edge to the `forward` of every language model any VLM passes it (what a whole-program
graph must say), at the cost of two visits per function, not one per caller.
"""
from __future__ import annotations

from typing import Callable

from .explore import Explorer, graph_view
from .index.project import Project
from .infer.binding import self_context
from .infer.evaluator import Evaluator
from .infer.values import Ctx, VInst
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


def whole_tree(project: Project, binds: dict[str, str], roots: tuple[str, ...], node,
               progress: Callable[[str], None] | None = None) -> GraphView:
    project.load_all(progress)
    scope_paths = {p.resolve() for p in project.scope_files()}
    starts = []
    for fn in list(project.functions.values()):
        if fn.name == "<lambda>" or fn.module.path not in scope_paths:
            continue
        starts.append(self_context(fn, VInst(fn.cls.qual, exact=False)) if fn.cls else Ctx(fn.qual))
    if progress:
        progress(f"resolving {len(starts)} functions")
    ev = Evaluator(project, binds, max_depth=EXPORT_INFER_DEPTH, max_return_contexts=EXPORT_RETURN_CONTEXTS)
    explorer = Explorer(project, ev, max_contexts=10**9, record_external=True)
    ex = explorer.start_many(starts, max_depth=1, progress=progress)

    # Pass two: each callee with the union of what its callers bind; closures as they are.
    # Then again for the callees of pass two whose union grew (a function handed down two
    # calls: `f(g)` where `f(a)` calls `a(h)`), for EXPORT_ROUNDS passes in all.
    union: dict[str, dict[str, set]] = {}
    closures: dict[str, list[Ctx]] = {}
    done: set = set()
    for _ in range(EXPORT_ROUNDS):
        second = _next_round(ex, union, closures, done)
        if not second:
            break
        for ctx in second:
            ex.parents.setdefault(ctx, None)
            ex.depth[ctx] = 0
        if progress:
            progress(f"resolving {len(second)} functions again with their callers' arguments")
        explorer.resume(ex, second, lambda q: False, stop_at_first=False, max_depth=1, progress=progress)

    # a site left unresolved with parameters unbound, then resolved with the callers' arguments,
    # is resolved
    return graph_view(ex, roots, "", {c.fn for c in starts}, node, drop_resolved_sites=True)


def _next_round(ex, union: dict, closures: dict, done: set) -> list[Ctx]:
    """The contexts to resolve next: each callee bound by a call not yet counted, with the
    union of its callers' arguments where that union grew; closures as they are."""
    grown: set[str] = set()
    out: list[Ctx] = []
    for ctx, depth in list(ex.depth.items()):
        if depth != 1 or not (ctx.binds or ctx.closure) or ctx in done:
            continue
        done.add(ctx)
        if ctx.closure is not None:
            bucket = closures.setdefault(ctx.fn, [])
            if len(bucket) < EXPORT_CLOSURE_CONTEXTS:
                bucket.append(ctx)
                out.append(ctx)
            continue
        params = union.setdefault(ctx.fn, {})
        for name, vals in ctx.binds:
            have = params.setdefault(name, set())
            if not vals <= have:
                have.update(vals)
                grown.add(ctx.fn)
    for fn in sorted(grown):
        binds_ = tuple(sorted((n, frozenset(sorted(v, key=repr)[:EXPORT_UNION_VALUES])) for n, v in union[fn].items()))
        ctx = Ctx(fn, binds_)
        if ex.depth.get(ctx) != 0:  # not resolved yet (a caller may have bound just these)
            out.append(ctx)
    return out
