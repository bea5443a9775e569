"""Whole-tree call graph (export, callers): every function of the scope as an entry.

Context-insensitive by nature, but not blind to arguments: pass one resolves every function
with its parameters unbound and records, for each callee, what each call site binds; pass two
resolves each callee once more with the union of those bindings. So `general_mm_embed_routine`
gets an edge to the `forward` of every language model any VLM passes it (what a whole-program
graph must say), at the cost of two visits per function, not one per caller.
"""
from __future__ import annotations

from typing import Callable

import networkx as nx

from .explore import Exploration, Explorer, graph_view
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
    explorer = Explorer(project, ev, whole_tree=True)
    ex = Exploration(graph=nx.MultiDiGraph())

    # Pass one: every function with its parameters unbound; what each call site binds is folded
    # into its callee's union as it is met (the callee contexts themselves are not kept).
    union: dict[str, dict[str, set]] = {}
    closures: dict[str, dict[Ctx, None]] = {}
    for ctx in explorer.sweep(ex, starts, progress):
        if ctx.closure is not None:
            bucket = closures.setdefault(ctx.fn, {})
            if len(bucket) < EXPORT_CLOSURE_CONTEXTS:
                bucket[ctx] = None
        elif ctx.binds:
            params = union.setdefault(ctx.fn, {})
            for name, vals in ctx.binds:
                params.setdefault(name, set()).update(vals)

    # Pass two: each callee with the union of what its callers bind; closures as they are.
    second = [c for bucket in closures.values() for c in bucket]
    for fn, params in union.items():
        binds_ = tuple(sorted((n, frozenset(sorted(v, key=repr)[:EXPORT_UNION_VALUES])) for n, v in params.items()))
        second.append(Ctx(fn, binds_))
    del union, closures
    if progress:
        progress(f"resolving {len(second)} functions again with their callers' arguments")
    for _ in explorer.sweep(ex, second, progress):
        pass

    # a site left unresolved with parameters unbound, then resolved with the callers' arguments,
    # is resolved
    return graph_view(ex, roots, "", {c.fn for c in starts}, node, drop_resolved_sites=True)
