"""Queries on a finished call graph (`GraphView`), with no analysis behind them.

`callers` needs the whole-tree graph (who calls X is a question about every function), which
`Analysis.export()` builds once; after that every question is a plain graph walk. Keeping these
walks free of `Analysis` lets the CI gate, the commands and the tests share them on any
GraphView, including one read back from an exported JSON file.
"""
from __future__ import annotations

from collections import deque
from typing import Iterable

import networkx as nx

from .errors import NameNotFound
from .model import GraphView, Hop, Node, hop_order


def digraph(view: GraphView) -> nx.MultiDiGraph:
    """Nodes are qualified names; each edge keeps its `Hop` (site, expr, rule) under "hop"."""
    g = nx.MultiDiGraph()
    g.add_nodes_from(n.name for n in view.nodes)
    for e in view.edges:
        g.add_edge(e.caller, e.callee, hop=e)
    return g


def _reverse_bfs(g: nx.MultiDiGraph, target: str, depth: int | None) -> dict[str, Hop | None]:
    """Every node that reaches target (within `depth` hops), each with its first hop on a
    shortest path towards the target (None for the target itself)."""
    nxt: dict[str, Hop | None] = {target: None}
    dist = {target: 0}
    queue = deque([target])
    while queue:
        cur = queue.popleft()
        if depth is not None and dist[cur] >= depth:
            continue
        for caller, _, data in sorted(g.in_edges(cur, data=True), key=lambda t: (t[0], t[2]["hop"].site)):
            if caller not in nxt:
                nxt[caller] = data["hop"]
                dist[caller] = dist[cur] + 1
                queue.append(caller)
    return nxt


def callers(view: GraphView, target: str, depth: int | None = None, entries_only: bool = False) -> list[str]:
    """Every function that reaches `target` (within `depth` hops; all when None), sorted; with
    `entries_only`, only those nobody calls (the outermost entry points). `depth=1` gives the
    direct callers. The target itself is never listed, even when it is recursive."""
    g = digraph(view)
    if target not in g:
        raise NameNotFound(f"{target} is not a function of this graph")
    found = set(_reverse_bfs(g, target, depth)) - {target}
    if entries_only:
        found = {n for n in found if not any(c != n for c in g.predecessors(n))}
    return sorted(found)


def witness_paths(view: GraphView, target: str, depth: int | None = None) -> dict[str, tuple[Hop, ...]]:
    """For each caller of `target`, one shortest path of hops from it to the target."""
    g = digraph(view)
    if target not in g:
        raise NameNotFound(f"{target} is not a function of this graph")
    nxt = _reverse_bfs(g, target, depth)
    out = {}
    for start in sorted(set(nxt) - {target}):
        hops, cur = [], start
        while cur != target:
            hop = nxt[cur]
            hops.append(hop)
            cur = hop.callee
        out[start] = tuple(hops)
    return out


def callers_view(view: GraphView, target: str, depth: int | None = None, entries_only: bool = False) -> GraphView:
    """The subgraph of `target` and its callers (every edge among them), in the graph vocabulary;
    `entry` is the target. Unresolved sites are those inside the callers."""
    keep = set(callers(view, target, depth, entries_only=False)) | {target}
    if entries_only:
        keep = set(callers(view, target, depth, entries_only=True)) | {target}
        paths = witness_paths(view, target, depth)
        edges = {h for n in keep - {target} for h in paths[n]}
        keep |= {h.callee for h in edges}
    else:
        edges = {e for e in view.edges if e.caller in keep and e.callee in keep}
    return _subview(view, target, keep, edges)


def reachable(view: GraphView, source: str, depth: int | None = None) -> set[str]:
    """Functions reachable from `source` (itself included) within `depth` hops."""
    g = digraph(view)
    if source not in g:
        return {source}
    if depth is None:
        return nx.descendants(g, source) | {source}
    return set(nx.single_source_shortest_path_length(g, source, cutoff=depth))


def path(view: GraphView, source: str, target: str) -> tuple[Hop, ...] | None:
    """One shortest path of hops from source to target, or None."""
    g = digraph(view)
    if source not in g or target not in g:
        return None
    try:
        names = nx.shortest_path(g, source, target)
    except nx.NetworkXNoPath:
        return None
    return tuple(min((d["hop"] for d in g.get_edge_data(a, b).values()), key=lambda h: h.site)
                 for a, b in zip(names, names[1:]))


def _subview(view: GraphView, entry: str, keep: Iterable[str], edges: Iterable[Hop]) -> GraphView:
    keep = set(keep)
    nodes = {n.name: n for n in view.nodes if n.name in keep}
    for q in keep - set(nodes):
        nodes[q] = Node(q, "", 0)
    return GraphView(
        root=view.root, entry=entry, tool_version=view.tool_version,
        nodes=tuple(nodes[q] for q in sorted(nodes)),
        edges=tuple(sorted(edges, key=hop_order)),
        unresolved=tuple(u for u in view.unresolved if u.caller in keep),
    )
