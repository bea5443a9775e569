"""Pictures of proofs and call graphs (DOT, SVG, PNG): the only package that imports pydot.

The pipeline is scene (what to show, pure data) -> dot (pydot objects) -> write (file, via
Graphviz). Callers normally want one of the one-call helpers at the bottom.
"""
from __future__ import annotations

from .dot import to_dot
from .files import render_graph_file, render_proof_file
from .scene import MAX_NODES, Scene, graph_scene, proof_scene
from .write import FORMATS, find_dot, output_format, write

__all__ = [
    "MAX_NODES", "FORMATS", "Scene", "proof_scene", "graph_scene", "to_dot", "proof_picture",
    "graph_picture", "write", "output_format", "find_dot", "render_proof_file",
    "render_graph_file",
]


def proof_picture(proof, nodes, neighbourhood=None, max_nodes: int = MAX_NODES):
    """A reach proof as a pydot graph (see `proof_scene`)."""
    return to_dot(proof_scene(proof, nodes, neighbourhood, max_nodes))


def graph_picture(view, highlight=None, nodes=None, max_nodes: int = MAX_NODES, depth=None):
    """A call neighbourhood as a pydot graph, with `highlight`'s path drawn on top."""
    return to_dot(graph_scene(view, highlight, nodes, max_nodes, depth))
