"""End to end: the flagship fixture through the engine, the CLI and the renderer.

Skipped until the engine (`callgraph.api`) is importable; from then on these are the tests that
say the pictures show what `reach` proves.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pydot
import pytest
from test_render_write import svg_texts

pytest.importorskip("callgraph.api", reason="the analysis engine has not landed yet")

from callgraph.api import Analysis  # noqa: E402
from callgraph.cli import main  # noqa: E402
from callgraph.render import render_proof_file  # noqa: E402
from callgraph.render.labels import node_label  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:.*deprecated.*:DeprecationWarning")

REPO = Path(__file__).resolve().parents[2]
SGLANG = REPO / "fixtures/trees/sglang_mini/python/sglang/srt"
HF = REPO / "fixtures/trees/hf_mini"
FLAGSHIP = json.loads((REPO / "fixtures/reach/kimi_to_deepseek_model/expected.json").read_text())
FLAGSHIP_PATH = FLAGSHIP["path"]
needs_dot = pytest.mark.skipif(shutil.which("dot") is None,
                               reason="Graphviz not installed (tests/run.sh installs it)")


@pytest.fixture
def cache(tmp_path) -> Path:
    """A fresh analysis cache: the fixture trees are tiny, and a shared cache written by an
    older engine build (same tool version) would answer for it."""
    return tmp_path / "cache"


def parse(out: Path) -> pydot.Dot:
    (graph,) = pydot.graph_from_dot_data(out.read_text(encoding="utf-8"))
    return graph


def drawn(graph: pydot.Dot) -> tuple[dict[str, pydot.Node], list[tuple[str, str, bool]]]:
    """Every node (clusters included) and every edge as (source, destination, highlighted)."""
    def walk(g):
        found = {n.get_name().strip('"'): n for n in g.get_nodes()}
        for sub in g.get_subgraphs():
            found.update(walk(sub))
        return found
    nodes = {k: v for k, v in walk(graph).items() if k not in ("node", "edge", "graph")}
    edges = [(e.get_source().strip('"'), e.get_destination().strip('"'),
              "path" in (e.get("class") or "").strip('"').split()) for e in graph.get_edges()]
    return nodes, edges


def graph_cli(tmp_path, cache, *args) -> int:
    return main(["graph", "KimiK25ForConditionalGeneration", "--to", "DeepseekV2Model",
                 "--root", str(SGLANG), "--cache-dir", str(cache), *args])


def test_graph_dot_holds_the_flagship_path_and_highlights_only_it(tmp_path, cache):
    out = tmp_path / "flagship.dot"
    assert graph_cli(tmp_path, cache, "-o", str(out)) == 0
    nodes, edges = drawn(parse(out))
    assert set(FLAGSHIP_PATH) <= set(nodes)
    assert {(s, d) for s, d, hot in edges if hot} == set(zip(FLAGSHIP_PATH, FLAGSHIP_PATH[1:]))
    assert any(not hot for _, _, hot in edges), "the neighbourhood adds context edges"


def test_graph_cap_is_named_in_the_caption(tmp_path, cache):
    out = tmp_path / "capped.dot"
    assert graph_cli(tmp_path, cache, "--max-nodes", "1", "-o", str(out)) == 0
    graph = parse(out)
    nodes, _ = drawn(graph)
    assert set(FLAGSHIP_PATH) <= set(nodes)   # the witness path survives any cap
    assert "--max-nodes" in graph.get("label")


@needs_dot
def test_flagship_svg_shows_the_path_labels(tmp_path, cache):
    analysis = Analysis(roots=[str(SGLANG)], cache_dir=str(cache))
    proof = analysis.reach(analysis.resolve("KimiK25ForConditionalGeneration"),
                           analysis.resolve("DeepseekV2Model"))
    out = render_proof_file(proof, analysis, tmp_path / "flagship.svg")
    texts = set(svg_texts(out.read_text(encoding="utf-8")))
    for name in FLAGSHIP_PATH:
        assert node_label(name, analysis.node(name).file) in texts
    assert {hop.rule for hop in proof.path} <= texts


def test_unknown_proof_shows_the_blocking_site_dashed(tmp_path, cache):
    analysis = Analysis(roots=[str(HF)], cache_dir=str(cache))
    proof = analysis.reach(analysis.resolve("LlavaForConditionalGeneration"),
                           analysis.resolve("LlamaModel"))
    assert proof.verdict.value == "unknown", "fixtures/reach/llava_auto_unbound expects unknown"
    nodes, edges = drawn(parse(render_proof_file(proof, analysis, tmp_path / "llava.dot")))
    dashed = [n for n in nodes.values() if (n.get("style") or "").strip('"') == "dashed"]
    assert len(dashed) == len(proof.unresolved) >= 1
    assert not [e for e in edges if e[2]], "an unknown verdict has no path to highlight"


def test_reach_dot_option(tmp_path, cache):
    out = tmp_path / "reach.dot"
    rc = main(["reach", "KimiK25ForConditionalGeneration", "DeepseekV2Model", "--root",
               str(SGLANG), "--cache-dir", str(cache), "--dot", str(out)])
    if rc == 3 and not out.exists():
        pytest.skip("reach --dot is not wired yet")
    assert rc == 0
    nodes, edges = drawn(parse(out))
    assert set(FLAGSHIP_PATH) <= set(nodes) and all(hot for _, _, hot in edges)
