"""What a picture holds: labels, roles, the cap and its caption (no pydot, no Graphviz)."""
from __future__ import annotations

from render_cases import CAUSAL, KIMI, LAYER, MODEL, PATH, ROUTINE

from callgraph.model import GraphView, Hop, Node, Proof, Unresolved
from callgraph.render import graph_scene, proof_scene
from callgraph.render.labels import edge_label, module_of, node_label, unresolved_label


def test_labels_are_class_method_or_function_name():
    assert node_label(KIMI, "sglang/srt/models/kimi_k25.py") == (
        "KimiK25ForConditionalGeneration.forward")
    assert node_label(ROUTINE, "sglang/srt/managers/mm_utils.py") == "general_mm_embed_routine"
    assert node_label("pkg.mod.Outer.Inner.f", "pkg/mod.py") == "Outer.Inner.f"
    assert node_label("pkg.helper", "pkg/__init__.py") == "helper"
    # Without a file: a capitalised next-to-last part is the class.
    assert node_label(MODEL, None) == "DeepseekV2Model.forward"
    assert node_label(ROUTINE, None) == "general_mm_embed_routine"
    assert module_of("a/b/__init__.py") == "a.b"


def test_proof_scene_roles_clusters_and_edge_evidence(reached, nodes):
    scene = proof_scene(reached, nodes)
    roles = {n.id: n.role for n in scene.nodes}
    assert roles == {KIMI: "entry", ROUTINE: "path", CAUSAL: "path", MODEL: "target"}
    files = {n.id: n.file for n in scene.nodes}
    assert files[ROUTINE] == "sglang/srt/managers/mm_utils.py"
    assert [(e.src, e.dst) for e in scene.edges] == [(h.caller, h.callee) for h in PATH]
    assert all(e.on_path for e in scene.edges)
    assert scene.edges[1].label == "line 14\nparam-binding"
    assert scene.title.startswith(
        "KimiK25ForConditionalGeneration.forward → DeepseekV2Model.forward: reached in 3 hops")
    assert scene.caption == ""


def test_files_fall_back_to_the_call_sites_inside_a_function(reached):
    scene = proof_scene(reached, nodes={})
    files = {n.id: n.file for n in scene.nodes}
    assert files[KIMI] == "sglang/srt/models/kimi_k25.py"
    assert files[MODEL] == ""   # the target makes no call on the path: unknown, drawn unclustered


def test_unknown_proof_draws_blocking_sites_dashed(unknown, nodes):
    scene = proof_scene(unknown, nodes)
    sites = [n for n in scene.nodes if n.role == "unresolved"]
    assert len(sites) == 1 and sites[0].label.startswith("language_model(...)\n")
    edge = next(e for e in scene.edges if e.dst == sites[0].id)
    assert edge.src == ROUTINE and edge.unresolved and not edge.on_path
    onward = next(e for e in scene.edges if e.src == sites[0].id)
    assert onward.dst == MODEL and onward.label == "could reach?" and not onward.on_path
    assert "unknown (1 unresolved call site could reach it" in scene.title


def test_reached_proof_draws_no_unresolved_sites(reached, unknown, nodes):
    both = Proof(**{**reached.__dict__, "unresolved": unknown.unresolved})
    assert not [n for n in proof_scene(both, nodes).nodes if n.role == "unresolved"]


def test_graph_scene_highlights_only_the_path(reached, neighbourhood):
    scene = graph_scene(neighbourhood, highlight=reached, depth=3)
    on_path = {(e.src, e.dst) for e in scene.edges if e.on_path}
    assert on_path == {(h.caller, h.callee) for h in PATH}
    assert len(scene.edges) == 6 and len(scene.nodes) == 7
    assert scene.title.startswith("calls from KimiK25ForConditionalGeneration.forward, depth 3\n")


def test_cap_keeps_the_witness_path_and_says_what_was_left_out(reached, neighbourhood):
    scene = graph_scene(neighbourhood, highlight=reached, max_nodes=2)
    ids = {n.id for n in scene.nodes}
    assert {KIMI, ROUTINE, CAUSAL, MODEL} <= ids and LAYER not in ids
    assert "left out by the cap of 2 nodes (--max-nodes): 3 of 7 nodes (3 functions)" in (
        scene.caption)
    assert "and 3 calls" in scene.caption


def test_cap_keeps_nearest_context_first():
    chain = [f"pkg.mod.f{i}" for i in range(6)]
    hops = tuple(Hop(a, b, f"pkg/mod.py:{i + 1}:0", f"{b}()", "direct")
                 for i, (a, b) in enumerate(zip(chain, chain[1:])))
    view = GraphView(("r",), chain[0], "t", tuple(Node(q, "pkg/mod.py", 1) for q in chain), hops)
    scene = graph_scene(view, max_nodes=3)
    assert [n.id for n in scene.nodes] == chain[:3]
    assert "3 of 6 nodes" in scene.caption


def test_neighbourhood_unresolved_sites_are_counted_not_drawn(neighbourhood):

    view = GraphView(neighbourhood.root, neighbourhood.entry, "t", neighbourhood.nodes,
                     neighbourhood.edges, (Unresolved(KIMI, "sglang/srt/models/kimi_k25.py:45:3",
                                                      "x.view(-1)", "no type"),))
    scene = graph_scene(view)
    assert not [n for n in scene.nodes if n.role == "unresolved"]
    assert "1 unresolved call sites in this neighbourhood not drawn" in scene.caption


def test_all_paths_are_highlighted(reached, nodes):
    detour = (Hop(KIMI, CAUSAL, "sglang/srt/models/kimi_k25.py:50:8", "self.language_model(...)",
                  "init-attribute"), PATH[2])
    proof = Proof(**{**reached.__dict__, "all_paths": (PATH, detour)})
    scene = proof_scene(proof, nodes)
    assert {(e.src, e.dst) for e in scene.edges if e.on_path} == {
        (h.caller, h.callee) for h in PATH + detour}
    assert "reached in 3 hops (2 paths)" in scene.title


def test_edge_label_adds_the_rules_that_typed_the_receiver():
    hop = Hop(ROUTINE, CAUSAL, "sglang/srt/managers/mm_utils.py:14:11", "language_model(...)",
              "module-call", via=("param-binding", "mro"))
    assert edge_label(hop) == "line 14\nmodule-call\nvia param-binding, mro"


def test_unresolved_label_wraps_the_reason_and_clips_the_expression():
    u = Unresolved(ROUTINE, "a.py:1:0", "f(" + "x, " * 40 + ")", "word " * 60)
    lines = unresolved_label(u).split("\n")
    assert lines[0].endswith("…") and len(lines[0]) == 48
    assert len(lines) == 4 and lines[-1].endswith("…") and all(len(x) <= 48 for x in lines)
