"""Scene -> pydot graph: the one module (with its package) that knows Graphviz's vocabulary.

Only this package imports pydot (one adapter per third-party library). Styling choices, and why:
left-to-right ranks because call chains are long and thin; one cluster per file because a
reviewer navigates by file; the path in a strong colour with thick edges so it reads at a glance
even when the context around it is large; unresolved sites dashed because they are not calls
the tool vouches for. Every highlighted element also carries `class="path"` (an SVG class) so
tests and stylesheets can find it without matching colours.
"""
from __future__ import annotations

import pydot

from .scene import CONTEXT, ENTRY, PATH, TARGET, UNRESOLVED, Scene, SceneEdge, SceneNode

FONT = "Helvetica"

GRAPH_STYLE = dict(rankdir="LR", labelloc="t", fontname=FONT, fontsize="13", nodesep="0.25",
                   ranksep="0.6", newrank="true", compound="true")
NODE_DEFAULTS = dict(shape="box", style="rounded,filled", fontname=FONT, fontsize="11",
                     fillcolor="#f1f3f5", color="#adb5bd")
EDGE_DEFAULTS = dict(fontname=FONT, fontsize="9", color="#adb5bd", fontcolor="#868e96",
                     arrowsize="0.7")
CLUSTER_STYLE = dict(style="rounded", color="#ced4da", fontname=FONT, fontsize="10",
                     fontcolor="#495057", labeljust="l")

NODE_STYLE = {
    ENTRY: {"fillcolor": "#d0ebff", "color": "#1864ab", "penwidth": "2.5", "class": "path entry"},
    TARGET: {"fillcolor": "#d3f9d8", "color": "#2b8a3e", "penwidth": "2.5", "peripheries": "2",
             "class": "path target"},
    PATH: {"fillcolor": "#fff4e6", "color": "#d9480f", "penwidth": "2", "class": "path"},
    CONTEXT: {},
    UNRESOLVED: {"style": "dashed", "fillcolor": "white", "color": "#c92a2a",
                 "fontcolor": "#c92a2a", "fontsize": "10", "class": "unresolved"},
}
PATH_EDGE = {"color": "#d9480f", "fontcolor": "#d9480f", "penwidth": "2.5", "fontsize": "10",
             "class": "path"}
UNRESOLVED_EDGE = {"style": "dashed", "arrowhead": "empty", "color": "#c92a2a", "fontcolor": "#c92a2a",
                   "class": "unresolved"}


def to_dot(scene: Scene) -> pydot.Dot:
    """One pydot digraph: clusters by file in order of first appearance, nodes, then edges."""
    label = scene.title + (f"\n{scene.caption}" if scene.caption else "")
    graph = pydot.Dot("callgraph", graph_type="digraph", label=label, **GRAPH_STYLE)
    graph.set_node_defaults(**NODE_DEFAULTS)
    graph.set_edge_defaults(**EDGE_DEFAULTS)
    clusters: dict[str, pydot.Cluster] = {}
    for node in scene.nodes:
        parent = graph
        if node.file:
            if node.file not in clusters:
                clusters[node.file] = pydot.Cluster(f"file{len(clusters)}", label=node.file,
                                                    **CLUSTER_STYLE)
                graph.add_subgraph(clusters[node.file])
            parent = clusters[node.file]
        parent.add_node(_node(node))
    for edge in scene.edges:
        graph.add_edge(_edge(edge))
    return graph


def _node(node: SceneNode) -> pydot.Node:
    attrs = {"label": node.label, "tooltip": node.tooltip, **NODE_STYLE[node.role]}
    return pydot.Node(node.id, **attrs)


def _edge(edge: SceneEdge) -> pydot.Edge:
    style = PATH_EDGE if edge.on_path else UNRESOLVED_EDGE if edge.unresolved else {}
    attrs = {"label": edge.label, "tooltip": edge.tooltip, **style}
    return pydot.Edge(edge.src, edge.dst, **attrs)
