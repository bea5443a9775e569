"""What a picture shows, decided before anything is drawn.

A scene is the list of functions, calls and unresolved call sites a picture will hold, each with
its role (entry, target, on a path, context, unresolved), plus the caption that says what the cap
left out. Choosing is the part with rules worth testing (the witness path always survives the cap;
blocking unresolved sites come before context; context is kept nearest-first), so it lives here,
free of pydot; `dot.py` only turns a scene into Graphviz objects.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from ..model import GraphView, Hop, Node, Proof, Unresolved, Verdict
from . import labels

# Default cap on drawn nodes (functions plus unresolved sites); `--max-nodes` overrides it.
MAX_NODES = 200

ENTRY, TARGET, PATH, CONTEXT, UNRESOLVED = "entry", "target", "path", "context", "unresolved"


@dataclass(frozen=True)
class SceneNode:
    id: str        # the function's qualified name, or "unresolved-N" for a call site
    label: str
    file: str      # the cluster it is drawn in; "" when unknown
    role: str
    tooltip: str


@dataclass(frozen=True)
class SceneEdge:
    src: str
    dst: str
    label: str
    on_path: bool
    unresolved: bool
    tooltip: str


@dataclass(frozen=True)
class Scene:
    title: str
    caption: str                  # what was left out; "" when nothing was
    nodes: tuple[SceneNode, ...]
    edges: tuple[SceneEdge, ...]


def proof_scene(proof: Proof, nodes: Mapping[str, Node],
                neighbourhood: GraphView | None = None, max_nodes: int = MAX_NODES) -> Scene:
    """A reach proof: path(s) highlighted, blocking unresolved sites dashed, optional context."""
    return _build(
        entry=proof.entry, target=proof.target, title=_proof_title(proof, nodes),
        paths=_paths(proof), unresolved=_blocking(proof),
        context=neighbourhood.edges if neighbourhood else (),
        extra_nodes=neighbourhood.nodes if neighbourhood else (),
        nodes=_merge_nodes(nodes, neighbourhood), max_nodes=max_nodes, hidden_unresolved=0)


def graph_scene(view: GraphView, highlight: Proof | None = None,
                nodes: Mapping[str, Node] | None = None, max_nodes: int = MAX_NODES,
                depth: int | None = None) -> Scene:
    """A neighbourhood of calls from `view.entry`, with the path of `highlight` drawn on top.

    Unresolved sites of the neighbourhood are counted in the caption, not drawn: only those that
    block the highlighted proof explain a verdict, the rest would bury the picture.
    """
    known = _merge_nodes(nodes or {}, view)
    entry_label = _label(view.entry, known)
    title = f"calls from {entry_label}" + (f", depth {depth}" if depth is not None else "")
    blocking: Sequence[Unresolved] = ()
    paths: Sequence[Sequence[Hop]] = ()
    target = None
    if highlight is not None:
        title += "\n" + _proof_title(highlight, known)
        paths, blocking, target = _paths(highlight), _blocking(highlight), highlight.target
    shown_sites = {u.site for u in blocking}
    hidden = len({u.site for u in view.unresolved} - shown_sites)
    return _build(entry=view.entry, target=target, title=title, paths=paths, unresolved=blocking,
                  context=view.edges, extra_nodes=view.nodes, nodes=known, max_nodes=max_nodes,
                  hidden_unresolved=hidden)


def _build(*, entry: str, target: str | None, title: str, paths: Sequence[Sequence[Hop]],
           unresolved: Sequence[Unresolved], context: Iterable[Hop], extra_nodes: Iterable[Node],
           nodes: Mapping[str, Node], max_nodes: int, hidden_unresolved: int) -> Scene:
    max_nodes, context = max(1, max_nodes), tuple(context)
    files = _files(nodes, [h for p in paths for h in p] + list(context), unresolved)
    path_ids = {q for p in paths for h in p for q in (h.caller, h.callee)}

    def fn(qualname: str) -> SceneNode:
        role = (ENTRY if qualname == entry else TARGET if qualname == target
                else PATH if qualname in path_ids else CONTEXT)
        node = nodes.get(qualname)
        where = f"\n{node.file}:{node.line}" if node else ""
        file = files.get(qualname, "")
        return SceneNode(qualname, labels.node_label(qualname, file), file, role, qualname + where)

    # Candidates in priority order: entry and witness path, other paths, target, blocking sites
    # (with their callers), then context nearest-first.
    edges: dict[tuple[str, str, str], SceneEdge] = {}
    ranked: dict[str, SceneNode] = {}
    must_keep: set[str] = {entry}
    ranked[entry] = fn(entry)
    for i, path in enumerate(paths):
        for hop in path:
            for q in (hop.caller, hop.callee):
                ranked.setdefault(q, fn(q))
                if i == 0:
                    must_keep.add(q)
            edges.setdefault((hop.caller, hop.callee, hop.site), _edge(hop, on_path=True))
    if target is not None:
        ranked.setdefault(target, fn(target))
        must_keep.add(target)
    for i, u in enumerate(unresolved):
        uid = f"unresolved-{i + 1}"
        if u.caller:
            ranked.setdefault(u.caller, fn(u.caller))
        file = files.get(u.caller, _site_file(u.site))
        ranked[uid] = SceneNode(uid, labels.unresolved_label(u), file, UNRESOLVED,
                                f"{u.site}\n{u.expr}\n{u.why}")
        if u.caller:
            edges.setdefault((u.caller, uid, u.site), SceneEdge(
                u.caller, uid, labels.unresolved_edge_label(u), False, True, u.site))
        if target is not None:  # what the site might lead to: the reason the verdict is open
            edges[(uid, target, "")] = SceneEdge(uid, target, "could reach?", False, True,
                                                 f"{u.site} may call into {target}")
    for hop in context:
        edges.setdefault((hop.caller, hop.callee, hop.site), _edge(hop, on_path=False))
    for q in _nearest_first(entry, context, [n.name for n in extra_nodes]):
        ranked.setdefault(q, fn(q))

    kept = [n for n in ranked.values() if n.id in must_keep]
    room = max_nodes - len(kept)
    for n in ranked.values():
        if n.id not in must_keep and room > 0:
            kept.append(n)
            room -= 1
    kept_ids = {n.id for n in kept}
    # Draw in candidate order so the layout is stable from run to run.
    drawn_nodes = tuple(n for n in ranked.values() if n.id in kept_ids)
    drawn_edges = tuple(e for e in edges.values() if e.src in kept_ids and e.dst in kept_ids)
    dropped = [n for n in ranked.values() if n.id not in kept_ids]
    caption = _caption(
        functions=sum(1 for n in dropped if n.role != UNRESOLVED),
        sites=sum(1 for n in dropped if n.role == UNRESOLVED),
        calls=len(edges) - len(drawn_edges), total=len(ranked), max_nodes=max_nodes,
        hidden_unresolved=hidden_unresolved)
    return Scene(title, caption, drawn_nodes, drawn_edges)


def _edge(hop: Hop, on_path: bool) -> SceneEdge:
    rules = ", ".join((hop.rule, *labels.rules_via(hop)))
    return SceneEdge(hop.caller, hop.callee, labels.edge_label(hop), on_path, False,
                     f"{hop.site}  {hop.expr}  [{rules}]")


def _paths(proof: Proof) -> tuple[tuple[Hop, ...], ...]:
    """Witness first, then every other path `--all-paths` found."""
    paths = [proof.path] if proof.path else []
    paths += [p for p in proof.all_paths if p and p != proof.path]
    return tuple(paths)


def _blocking(proof: Proof) -> tuple[Unresolved, ...]:
    """Unresolved sites worth drawing: those that keep a proof open (none once it is reached)."""
    return () if proof.verdict is Verdict.REACHED else proof.unresolved


def _nearest_first(entry: str, edges: Sequence[Hop], names: Iterable[str]) -> list[str]:
    """Breadth-first from the entry, so a cap cuts the far end of the neighbourhood."""
    succ: dict[str, list[str]] = {}
    for e in edges:
        succ.setdefault(e.caller, []).append(e.callee)
    seen, order, queue = {entry}, [entry], deque([entry])
    while queue:
        for nxt in succ.get(queue.popleft(), ()):
            if nxt not in seen:
                seen.add(nxt)
                order.append(nxt)
                queue.append(nxt)
    rest = [q for q in [*names, *(x for e in edges for x in (e.caller, e.callee))] if q not in seen]
    return order + list(dict.fromkeys(rest))


def _files(nodes: Mapping[str, Node], hops: Sequence[Hop],
           unresolved: Sequence[Unresolved]) -> dict[str, str]:
    """A function's file: from its Node, else from a call site inside it (the caller's file)."""
    files = {q: n.file for q, n in nodes.items() if n.file}
    for h in hops:
        files.setdefault(h.caller, h.site_path)
    for u in unresolved:
        if u.caller:
            files.setdefault(u.caller, _site_file(u.site))
    return files


def _site_file(site: str) -> str:
    parts = site.rsplit(":", 2)
    return parts[0] if len(parts) == 3 else ""


def _merge_nodes(nodes: Mapping[str, Node], view: GraphView | None) -> dict[str, Node]:
    merged = {n.name: n for n in view.nodes} if view else {}
    merged.update(nodes)
    return merged


def _label(qualname: str, nodes: Mapping[str, Node]) -> str:
    node = nodes.get(qualname)
    return labels.node_label(qualname, node.file if node else None)


def _proof_title(proof: Proof, nodes: Mapping[str, Node]) -> str:
    entry, target = _label(proof.entry, nodes), _label(proof.target, nodes)
    head = f"{entry} → {target}: {proof.verdict.value}"
    if proof.verdict is Verdict.REACHED:
        extra = len(_paths(proof)) - 1
        head += f" in {len(proof.path)} hops" + (f" ({extra + 1} paths)" if extra else "")
    elif proof.verdict is Verdict.UNKNOWN and proof.unresolved:
        n = len(proof.unresolved)
        head += f" ({n} unresolved call site{'s' if n != 1 else ''} could reach it, dashed)"
    return head


def _caption(*, functions: int, sites: int, calls: int, total: int, max_nodes: int,
             hidden_unresolved: int) -> str:
    parts = []
    if functions or sites:
        kinds = [f"{functions} functions" if functions else "",
                 f"{sites} unresolved call sites" if sites else ""]
        parts.append(f"left out by the cap of {max_nodes} nodes (--max-nodes): "
                     f"{functions + sites} of {total} nodes ({', '.join(k for k in kinds if k)})"
                     f" and {calls} calls")
    elif calls:
        parts.append(f"left out: {calls} calls")
    if hidden_unresolved:
        parts.append(f"{hidden_unresolved} unresolved call sites in this neighbourhood not drawn "
                     "(only those that block a --to proof are)")
    return "\n".join(parts)
