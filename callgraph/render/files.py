"""From an analysis to a picture on disk, in one call, for the commands.

`reach --dot FILE` and `graph -o FILE` both need "ask the analysis for node details (and maybe
context), build the scene, draw it, write it". That glue lives here so the commands stay thin.
The analysis is taken by shape (a Protocol), not imported: renderers sit after the query layer
and must not pull the engine in.
"""
from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import Iterable, Protocol

from ..errors import CallgraphError
from ..model import GraphView, Hop, Node, Proof, Verdict
from .dot import to_dot
from .scene import MAX_NODES, graph_scene, proof_scene
from .write import write


class AnalysisLike(Protocol):
    def node(self, qualname: str) -> Node: ...
    def callees(self, entry: str, depth: int | None = None) -> GraphView: ...


def render_proof_file(proof: Proof, analysis: AnalysisLike, out_path: Path | str,
                      max_nodes: int = MAX_NODES, dot_binary: str | None = None) -> Path:
    """Draw a reach proof to `out_path` (.dot/.svg/.png); return the path written.

    A reached proof shows its path(s). A proof that is not reached shows, for each unresolved
    call site that blocks it, the shortest route from the entry to that site, so the reader sees
    where the analysis got stuck rather than a handful of disconnected boxes.
    """
    context = None
    if proof.verdict is not Verdict.REACHED and proof.unresolved:
        view = analysis.callees(proof.entry)
        route = routes_to(view.edges, proof.entry, [u.caller for u in proof.unresolved])
        context = GraphView(view.root, view.entry, view.tool_version, view.nodes, route)
    names = {proof.entry, proof.target, *(u.caller for u in proof.unresolved if u.caller)}
    names.update(q for path in (proof.path, *proof.all_paths) for h in path
                 for q in (h.caller, h.callee))
    scene = proof_scene(proof, nodes_for(analysis, names), context, max_nodes)
    return write(to_dot(scene), out_path, dot_binary)


def render_graph_file(view: GraphView, analysis: AnalysisLike, out_path: Path | str,
                      highlight: Proof | None = None, max_nodes: int = MAX_NODES,
                      depth: int | None = None, dot_binary: str | None = None) -> Path:
    """Draw a neighbourhood (from `analysis.callees`) with an optional proof on top."""
    names: set[str] = set()
    if highlight is not None:
        names = {highlight.target, *(u.caller for u in highlight.unresolved if u.caller)}
        names.update(q for path in (highlight.path, *highlight.all_paths) for h in path
                     for q in (h.caller, h.callee))
    names -= {n.name for n in view.nodes}
    scene = graph_scene(view, highlight, nodes_for(analysis, names), max_nodes, depth)
    return write(to_dot(scene), out_path, dot_binary)


def nodes_for(analysis: AnalysisLike, names: Iterable[str]) -> dict[str, Node]:
    """Node details for the names the analysis knows; the scene falls back for the others."""
    found = {}
    for name in sorted(names):
        try:
            found[name] = analysis.node(name)
        except CallgraphError:
            continue
    return found


def routes_to(edges: Iterable[Hop], entry: str, goals: Iterable[str]) -> tuple[Hop, ...]:
    """The edges of one shortest route from `entry` to each goal (breadth-first, first found)."""
    succ: dict[str, list[Hop]] = {}
    for e in edges:
        succ.setdefault(e.caller, []).append(e)
    via: dict[str, Hop | None] = {entry: None}
    queue = deque([entry])
    while queue:
        for e in succ.get(queue.popleft(), ()):
            if e.callee not in via:
                via[e.callee] = e
                queue.append(e.callee)
    route: dict[Hop, None] = {}
    for goal in goals:
        hop = via.get(goal)
        while hop is not None and hop not in route:
            route[hop] = None
            hop = via[hop.caller]
    return tuple(route)
