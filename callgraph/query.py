"""The reach query: explore from the entry, then judge honestly.

reached      a witness path was found (shortest, breadth-first);
unreachable  the closure was explored completely and no unresolved call site in it could lead
             to the target (by the name bound in relevance.py);
unknown      otherwise: the blocking call sites are listed, closest to the target first.
"""
from __future__ import annotations

import ast
import time
from dataclasses import dataclass

import networkx as nx

from . import __version__
from .explore import Exploration, Explorer, Step
from .index.lookup import Resolved
from .index.scopes import first_param
from .infer.values import Ctx, VInst
from .model import Hop, Proof, Stats, Unresolved, Verdict
from .relevance import Relevance

MAX_BLOCKERS = 25
MAX_PATHS = 20


@dataclass
class ReachInputs:
    explorer: Explorer
    relevance_for: object  # callable(target_name) -> Relevance
    roots: tuple[str, ...]


def start_context(project, entry: Resolved) -> Ctx:
    fn = project.functions[entry.func]
    if fn.cls is not None and fn.kind not in ("staticmethod", "classmethod") and first_param(fn):
        cls = entry.cls or fn.cls.qual
        return Ctx(fn.qual, ((first_param(fn), frozenset({VInst(cls)})),))
    return Ctx(fn.qual)


def reach(inp: ReachInputs, entry: Resolved, target: Resolved, all_paths: bool = False,
          max_seconds: float | None = None, progress=None) -> Proof:
    t0 = time.perf_counter()
    project = inp.explorer.p
    start = start_context(project, entry)
    deadline = t0 + max_seconds if max_seconds else None
    ex = inp.explorer.run(start, lambda q: q == target.func, stop_at_first=not all_paths,
                          deadline=deadline, progress=progress)
    if entry.func == target.func:
        ex.reached = start
    base = dict(entry=entry.func, target=target.func, root=inp.roots, tool_version=__version__)
    if ex.reached is not None:
        steps = ex.path_to(ex.reached)
        paths = _all_paths(ex, start, target.func) if all_paths else ()
        return Proof(verdict=Verdict.REACHED, path=tuple(s.hop for s in steps),
                     attribute_chain=tuple(attribute_chain(project, steps)),
                     stats=_stats(ex, t0), all_paths=paths, **base)
    blockers = _blockers(inp, ex, target)
    if ex.timed_out:
        blockers.insert(0, Unresolved(entry.func, "-", "-", f"search stopped after {max_seconds:g} s (--max-seconds)"))
    verdict = Verdict.UNKNOWN if blockers else Verdict.UNREACHABLE
    return Proof(verdict=verdict, unresolved=tuple(blockers[:MAX_BLOCKERS]), stats=_stats(ex, t0), **base)


def _stats(ex: Exploration, t0: float) -> Stats:
    return Stats(functions_visited=len(ex.functions), call_sites=ex.call_sites,
                 seconds=round(time.perf_counter() - t0, 3))


def _blockers(inp: ReachInputs, ex: Exploration, target: Resolved) -> list[Unresolved]:
    if not ex.unresolved:
        return []
    rel: Relevance = inp.relevance_for(target.func.rsplit(".", 1)[-1])
    ranked = {}
    for u, node, fn, depth in ex.unresolved:
        rank = rel.site_rank(node, set(fn.param_names()) | set(fn.locals()))
        if rank is None:
            continue
        key = u.site
        if key not in ranked or ranked[key][:2] > (rank, depth):
            ranked[key] = (rank, depth, u)
    # closest to the target by name first, then closest to the entry
    return [u for _, _, u in sorted(ranked.values(), key=lambda r: (r[0], r[1], r[2].site))]


def _all_paths(ex: Exploration, start: Ctx, target: str) -> tuple[tuple[Hop, ...], ...]:
    g = nx.DiGraph()
    for ctx, parent in ex.parents.items():
        if parent is not None:
            g.add_edge(parent[0], ctx, step=parent[1])
    for (a, b), step in ex.ctx_edges.items():
        if not g.has_edge(a, b):
            g.add_edge(a, b, step=step)
    ends = [c for c in g.nodes if c.fn == target]
    out: dict[tuple, tuple[Hop, ...]] = {}
    for end in ends:
        for nodes in nx.all_simple_paths(g, start, end):
            hops = tuple(g.edges[a, b]["step"].hop for a, b in zip(nodes, nodes[1:]))
            out.setdefault(tuple((h.caller, h.callee, h.site) for h in hops), hops)
            if len(out) >= MAX_PATHS:
                break
    return tuple(sorted(out.values(), key=len))


def attribute_chain(project, steps: list[Step]) -> list[str]:
    """Attributes from the entry's `self` to the target instance, as the path shows them:
    `self.language_model` passed as `language_model=` to a helper that calls it, then
    `self.model(...)` inside it, gives ["language_model", "model"]."""
    self_chain: list[str] | None = []
    params: dict[str, list[str]] = {}
    for step in steps:
        caller = project.functions.get(step.hop.caller)
        callee = project.functions.get(step.hop.callee)
        if caller is None or callee is None:
            return []
        selfname = first_param(caller) if caller.cls is not None else None
        env = dict(params)
        if selfname and self_chain is not None:
            env[selfname] = self_chain
        recv = _chain(step.node.func, env)
        new_params: dict[str, list[str]] = {}
        a = callee.node.args
        positional = [p.arg for p in a.posonlyargs + a.args]
        if step.hop.rule in ("module-call", "call-method"):
            self_chain = recv
            positional = positional[1:]
        elif isinstance(step.node.func, ast.Attribute) and callee.cls is not None and callee.kind not in ("staticmethod",):
            self_chain = _chain(step.node.func.value, env)
            positional = positional[1:]
        elif callee.cls is not None and step.hop.rule == "constructor":
            self_chain = None
            positional = positional[1:]
        for i, arg in enumerate(step.node.args):
            if i < len(positional) and not isinstance(arg, ast.Starred):
                c = _chain(arg, env)
                if c is not None:
                    new_params[positional[i]] = c
        for kw in step.node.keywords:
            if kw.arg:
                c = _chain(kw.value, env)
                if c is not None:
                    new_params[kw.arg] = c
        params = new_params
    return self_chain or []


def _chain(expr: ast.AST, env: dict[str, list[str]]) -> list[str] | None:
    parts: list[str] = []
    while True:
        if isinstance(expr, ast.Attribute):
            parts.append(expr.attr)
            expr = expr.value
        elif isinstance(expr, ast.Subscript):
            parts.append("*")
            expr = expr.value
        else:
            break
    if isinstance(expr, ast.Name) and expr.id in env and env[expr.id] is not None:
        return env[expr.id] + list(reversed(parts))
    return None
