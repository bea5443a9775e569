"""The DOT a picture is made of: it parses back, holds the path, highlights only the path."""
from __future__ import annotations

import pydot
import pytest
from render_cases import KIMI, MODEL, PATH, ROUTINE

from callgraph.render import graph_picture, proof_picture

# pydot's DOT parser calls pyparsing's old camelCase API; not ours to fix.
pytestmark = pytest.mark.filterwarnings("ignore:.*deprecated.*:DeprecationWarning")


def parse(graph: pydot.Dot) -> pydot.Dot:
    (parsed,) = pydot.graph_from_dot_data(graph.to_string())
    return parsed


def unquote(s: str | None) -> str:
    return (s or "").strip('"')


def all_nodes(graph: pydot.Dot) -> dict[str, pydot.Node]:
    found = {unquote(n.get_name()): n for n in graph.get_nodes()}
    for sub in graph.get_subgraphs():
        found.update(all_nodes(sub))
    found.pop("node", None)   # the defaults statement
    found.pop("edge", None)
    return found


def edges(graph: pydot.Dot) -> list[tuple[str, str, pydot.Edge]]:
    return [(unquote(e.get_source()), unquote(e.get_destination()), e) for e in graph.get_edges()]


def is_highlighted(item) -> bool:
    return "path" in unquote(item.get("class")).split()


def test_dot_holds_every_path_node_and_highlights_only_path_edges(reached, neighbourhood):
    parsed = parse(graph_picture(neighbourhood, highlight=reached))
    nodes = all_nodes(parsed)
    assert {h.caller for h in PATH} | {MODEL} <= set(nodes)
    path_pairs = {(h.caller, h.callee) for h in PATH}
    drawn = edges(parsed)
    assert len(drawn) == 6
    assert {(s, d) for s, d, e in drawn if is_highlighted(e)} == path_pairs
    assert all(not is_highlighted(e) for s, d, e in drawn if (s, d) not in path_pairs)
    assert unquote(parsed.get("rankdir")) == "LR"


def test_nodes_are_clustered_by_file_with_short_labels(reached, nodes):
    parsed = parse(proof_picture(reached, nodes))
    clusters = {unquote(sub.get("label")): sorted(all_nodes(sub)) for sub in parsed.get_subgraphs()}
    assert clusters["sglang/srt/managers/mm_utils.py"] == [ROUTINE]
    assert len(clusters["sglang/srt/models/deepseek_v2.py"]) == 2
    label = unquote(all_nodes(parsed)[KIMI].get("label"))
    assert label == "KimiK25ForConditionalGeneration.forward"


def test_edges_are_labelled_with_line_and_rule(reached, nodes):
    parsed = parse(proof_picture(reached, nodes))
    labels = {(s, d): unquote(e.get("label")) for s, d, e in edges(parsed)}
    assert labels[(KIMI, ROUTINE)] == r"line 46\ndirect"


def test_unresolved_blocking_site_is_a_dashed_node_with_the_expression(unknown, nodes):
    parsed = parse(proof_picture(unknown, nodes))
    dashed = [n for n in all_nodes(parsed).values() if unquote(n.get("style")) == "dashed"]
    assert len(dashed) == 1
    assert unquote(dashed[0].get("label")).startswith("language_model(...)")
    assert not [e for _, _, e in edges(parsed) if is_highlighted(e)]
    assert "unknown" in unquote(parsed.get("label"))
