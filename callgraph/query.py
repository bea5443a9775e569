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

from . import __version__
from .conditions import conditions
from .explore import TOO_DEEP, Exploration, Explorer, Step, UnresolvedSite
from .lookup import Resolved
from .index.scopes import first_param
from .semantics import oracle as oracle_rule
from .semantics.binding import self_context
from .values import Ctx, VInst
from .model import Hop, Proof, Stats, Unresolved, Verdict
from .relevance import Relevance

MAX_BLOCKERS = 25
MAX_PATHS = 20


@dataclass
class ReachInputs:
    explorer: Explorer
    relevance_for: object  # callable(target_name, deadline=None) -> Relevance
    roots: tuple[str, ...]
    oracle: object = None  # callable() -> JediOracle | None, asked about blockers only
    leads_for: object = None  # callable(target class, deadline) -> leads.Leads | None (cut): the order
    #                           blockers are listed in


def start_context(project, entry: Resolved, entry_args: dict | None = None) -> Ctx:
    """The entry's context: `self` an exact instance of its class, and the parameters --arg
    typed bound to what their types name (the others unbound: defaults and annotations)."""
    fn = project.functions[entry.func]
    ctx = self_context(fn, VInst(entry.cls or (fn.cls.qual if fn.cls else "")))
    if not entry_args:
        return ctx
    binds = dict(ctx.binds)
    binds.update(entry_args)
    return Ctx(ctx.fn, tuple(sorted(binds.items(), key=lambda kv: kv[0])), ctx.closure)


def reach(inp: ReachInputs, entry: Resolved, target: Resolved, all_paths: bool = False,
          max_seconds: float | None = None, progress=None, deadline: float | None = None,
          entry_args: dict | None = None, assumptions: tuple[str, ...] = ()) -> Proof:
    """`deadline` (time.perf_counter()) is when `max_seconds` runs out, counted from the start of
    the whole query (the caller's: name lookup included); by default from here. Whatever the
    budget cut is named in the first blocker, and the verdict is then never "unreachable"."""
    t0 = time.perf_counter()
    project = inp.explorer.p
    start = start_context(project, entry, entry_args)
    if deadline is None and max_seconds:
        deadline = t0 + max_seconds
    cut = _Cut(deadline)
    is_target = lambda q: q == target.func  # noqa: E731
    ex = inp.explorer.run(start, is_target, stop_at_first=not all_paths, deadline=deadline, progress=progress)
    if ex.timed_out:
        cut.add(f"exploration after {len(ex.functions)} function(s)")
    if ex.reached is None and not ex.timed_out and inp.oracle is not None:
        _ask_oracle(inp, ex, target, is_target, cut, progress)
        if cut.over():
            ex.timed_out = True
            cut.add("asking Jedi about the unresolved sites")
    if entry.func == target.func:
        ex.reached = start
    base = dict(entry=entry.func, target=target.func, root=inp.roots, tool_version=__version__,
                assumptions=assumptions)
    if ex.reached is not None:
        steps = ex.path_to(ex.reached)
        paths = _all_paths(ex, start, target.func) if all_paths else ()
        return Proof(verdict=Verdict.REACHED, path=tuple(s.hop for s in steps),
                     attribute_chain=tuple(attribute_chain(project, steps)),
                     stats=_stats(ex, t0), all_paths=paths, **base)
    blockers = _blockers(inp, ex, target, cut)
    if cut.what:
        blockers.insert(0, Unresolved(entry.func, "-", "-", f"search stopped after {max_seconds:g} s "
                                      f"(--max-seconds); cut: {'; '.join(cut.what)}"))
    verdict = Verdict.UNKNOWN if blockers else Verdict.UNREACHABLE
    found = conditions(inp.explorer, blockers, target.func, target_class(target), cut.deadline) if blockers else ()
    return Proof(verdict=verdict, unresolved=tuple(blockers[:MAX_BLOCKERS]), stats=_stats(ex, t0), conditions=found,
                 **base)


def _stats(ex: Exploration, t0: float) -> Stats:
    return Stats(functions_visited=len(ex.functions), call_sites=ex.call_sites,
                 seconds=round(time.perf_counter() - t0, 3))


@dataclass
class _Cut:
    """What a --max-seconds budget stopped, for the first blocker to name."""

    deadline: float | None
    what: list = None

    def __post_init__(self):
        self.what = []

    def add(self, what: str) -> None:
        if what not in self.what:
            self.what.append(what)

    def over(self) -> bool:
        return self.deadline is not None and time.perf_counter() > self.deadline


def _blocking_rows(inp: ReachInputs, ex: Exploration, target: Resolved,
                   cut: _Cut | None = None) -> list[UnresolvedSite]:
    """Unresolved rows that could lead to the target, one per site, most relevant first:
    closest to the target by name, then closest to the entry."""
    if not ex.unresolved:
        return []
    rel: Relevance = inp.relevance_for(target.func.rsplit(".", 1)[-1],
                                       cut.deadline if cut is not None else None)
    if rel.index.missing and cut is not None and cut.deadline is not None:
        cut.add(f"name summaries of {rel.index.missing} file(s), so every unresolved "
                        f"site counts as one that could lead there")
    ranked = {}
    for row in ex.unresolved:
        site, fn = row.unresolved.site, row.fn
        rank = rel.site_rank(row.node, set(fn.param_names()) | set(fn.locals()))
        if rank is None and row.unresolved.why == TOO_DEEP:
            rank = 99  # never analysed: the name bound's premises (its locals were) do not hold
        if rank is None:
            continue
        if site not in ranked or ranked[site][:2] > (rank, row.depth):
            ranked[site] = (rank, row.depth, row)
    # calls first: an implicit call's receiver not inferred is most often what an unresolved
    # call listed above it returned (`outputs.hidden_states` of `outputs = self.model(...)`)
    return [r for _, _, r in sorted(ranked.values(), key=lambda r: (_implicit(r[2]), r[0], r[1], r[2].unresolved.site))]


def _implicit(row: UnresolvedSite) -> bool:
    """Whether the row is an implicit call's (a read, store or operator on a receiver not
    inferred: explore.py's synthetic call carries the names it may run)."""
    return getattr(row.node, "rank_names", None) is not None


def _blockers(inp: ReachInputs, ex: Exploration, target: Resolved, cut: _Cut | None = None) -> list[Unresolved]:
    """The blockers a person reads: those a target instance could be behind first (leads.py),
    then in the name bound's order. (Jedi is asked in the name bound's order: _ask_oracle.)"""
    rows = _blocking_rows(inp, ex, target, cut)
    if len(rows) > 1 and inp.leads_for is not None:
        deadline = cut.deadline if cut is not None else None
        leads = None if cut is not None and cut.over() else inp.leads_for(target_class(target), deadline)
        if leads is None:  # only the order is lost: which sites are listed is the name bound's
            cut.add("ordering the blockers by what holds the target (leads.py): in the name bound's order")
        else:
            rows = sorted(rows, key=lambda r: (_implicit(r), leads.key(r.node, r.fn)))  # stable: ties keep their order
    return [row.unresolved for row in rows]


def target_class(target: Resolved) -> str | None:
    """The class that defines the target method, by its name: an instance of it or of any
    subclass that inherits the method runs it (a subclass named as the target inherits it)."""
    owner, _, _ = target.func.rpartition(".")
    return owner.rsplit(".", 1)[-1] if owner and owner[:1] != "<" else None


def _ask_oracle(inp: ReachInputs, ex: Exploration, target: Resolved, is_target, cut: _Cut, progress) -> None:
    """Ask Jedi about the blockers, most relevant first; explore on from what it resolves."""
    deadline = cut.deadline
    rows = _blocking_rows(inp, ex, target, cut)
    if not rows:
        return
    oracle = inp.oracle()
    if oracle is None:
        return
    explorer, classes = inp.explorer, inp.explorer.ev.classes
    asked: set[str] = set()
    over = lambda: deadline is not None and time.perf_counter() > deadline  # noqa: E731
    while rows and not oracle.exhausted() and not over():
        if progress:
            progress(f"asking Jedi about {len(rows)} unresolved call sites")
        fresh = []
        for row in rows:
            u, node, fn, state = row.unresolved, row.node, row.fn, row.state
            if oracle.exhausted() or over():
                break
            asked.add(u.site)
            if _implicit(row):
                continue  # an implicit call: no call expression there for Jedi to answer
            answers = oracle.callees(fn.module.path, node, deadline)
            # Jedi's answers add edges; the site stays unresolved, a blocker (semantics/oracle.py)
            for a in answers:
                for callee, ctx, via in oracle_rule.targets(a, classes):
                    c = explorer.add_edge(ex, state, fn, node, callee, ctx, oracle_rule.RULE.name, via)
                    if c is None:
                        continue
                    if is_target(callee):
                        ex.reached = c
                        return
                    fresh.append(c)
        if fresh:
            explorer.resume(ex, fresh, is_target, deadline=deadline, progress=progress)
            if ex.reached is not None:
                return
        rows = [r for r in _blocking_rows(inp, ex, target, cut) if r.unresolved.site not in asked]


def _all_paths(ex: Exploration, start: Ctx, target: str) -> tuple[tuple[Hop, ...], ...]:
    import networkx as nx  # only --all-paths needs it (see explore.new_graph)

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
