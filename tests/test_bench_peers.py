"""benchmarks/peers.py and bench_tree.py's process handling, on tiny hand-made outputs.

No peer tool is installed or downloaded: each format is written out here by hand, in the shape
the pinned versions produce (PyCG 0.0.7 / jarviscg 0.1.0rc7 simple JSON, pyan3 2.9.0 DOT,
code2flow 2.5.1 JSON graph, our GraphView JSON).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import peers  # noqa: E402

K = "sglang.srt.models.kimi_k25.KimiK25ForConditionalGeneration.forward"
G = "sglang.srt.managers.mm_utils.general_mm_embed_routine"
C = "sglang.srt.models.deepseek_v2.DeepseekV2ForCausalLM.forward"
M = "sglang.srt.models.deepseek_v2.DeepseekV2Model.forward"
M_INIT = "sglang.srt.models.deepseek_v2.DeepseekV2Model.__init__"


def test_adjacency_json_pycg_and_jarviscg():
    full = json.dumps({K: [G, "<builtin>.len"], G: [C], C: [M, "torch.cat"], M: []})
    s = peers.summarize("pycg", full)
    assert s == {"edges": 5, "edges_in_tree": 3, "flagship": True, "missing": [], "instead": []}
    # jarviscg's miss: `self.model(...)` read as a constructor call; __init__ is not forward.
    ctor = json.dumps({K: [G], G: [C], C: [M_INIT]})
    s = peers.summarize("jarviscg", ctor)
    assert not s["flagship"] and s["missing"] == [f"{C} -> {M}"]
    assert s["instead"] == [f"{C} has 1 callee(s), into the class: {M_INIT}"]


def test_pyan_dot_uses_only_and_safe_labels():
    ids = [peers.tool_name("pyan3", m, p) for m, p in peers.FLAGSHIP]
    assert ids[0] == "sglang__srt__models__kimi_k25__KimiK25ForConditionalGeneration__forward"
    lines = ["digraph G {", '    graph [rankdir=TB, ranksep=0.5, layout=dot];',
             f'"{ids[0]}" [label="KimiK25ForConditionalGeneration.forward", style="filled"];']
    lines += [f'    "{a}" -> "{b}" [style="solid",  color="#000000"];' for a, b in zip(ids, ids[1:])]
    lines += [f'    "{ids[0]}" -> "sglang__srt__models__kimi_k25__KimiK25ForConditionalGeneration" '
              '[style="dashed",  color="#838b8b"];',  # a defines edge: not a call
              f'    "{ids[1]}" -> "len" [style="solid",  color="#000000"];', "}"]
    s = peers.summarize("pyan3", "\n".join(lines))
    assert s == {"edges": 4, "edges_in_tree": 3, "flagship": True, "missing": [], "instead": []}
    without_last = "\n".join(ln for ln in lines if not ln.strip().startswith(f'"{ids[2]}" -> "{ids[3]}"'))
    assert peers.summarize("pyan3", without_last)["missing"] == [f"{ids[2]} -> {ids[3]}"]


def test_pyan_safe_label_matches_pyan():
    # pyan appends X to reserved words anywhere in the name, then turns dots into "__".
    assert peers.pyan_safe_label("a.callgraph.node_utils.f") == "a__callgraphX__nodeX_utils__f"
    assert peers.pyan_safe_label("*.len") == "__len"


def test_code2flow_json_file_basename_names():
    names = [peers.tool_name("code2flow", m, p) for m, p in peers.FLAGSHIP]
    assert names == ["kimi_k25::KimiK25ForConditionalGeneration.forward", "mm_utils::general_mm_embed_routine",
                     "deepseek_v2::DeepseekV2ForCausalLM.forward", "deepseek_v2::DeepseekV2Model.forward"]
    nodes = {f"node_{i}": {"uid": f"node_{i}", "label": "x", "name": n} for i, n in enumerate(names)}
    edges = [{"source": "node_0", "target": "node_1", "directed": True},
             {"source": "node_1", "target": "node_2", "directed": True}]
    text = json.dumps({"graph": {"directed": True, "nodes": nodes, "edges": edges}})
    s = peers.summarize("code2flow", text)
    assert s["edges"] == 2 and s["edges_in_tree"] == 2 and not s["flagship"]
    assert s["missing"] == [f"{names[2]} -> {names[3]}"]


def test_ours_graphview_json():
    edge = {"site": "x.py:1:0", "expr": "f()", "rule": "direct", "via": []}
    data = {"root": ["/r"], "entry": "", "tool_version": "0", "nodes": [], "unresolved": [],
            "edges": [{"caller": a, "callee": b, **edge} for a, b in ((K, G), (G, C), (C, M), (C, M))]}
    assert peers.summarize("ours", json.dumps(data)) == {"edges": 3, "edges_in_tree": 3, "flagship": True,
                                                         "missing": [], "instead": []}


def test_unknown_tool():
    with pytest.raises(ValueError):
        peers.tool_name("nope", "a", "b")


def test_timed_kills_at_the_limit_and_reads_the_crash(tmp_path):
    import bench_tree

    run = bench_tree.timed([sys.executable, "-c", "import time; time.sleep(30)"], tmp_path, 0.5,
                           tmp_path / "o", tmp_path / "e")
    assert run["timed_out"] and run["exit"] < 0  # killed by a signal, not ended by its own sleep
    run = bench_tree.timed([sys.executable, "-c", "raise IndexError('tuple index out of range')"], tmp_path, 10,
                           tmp_path / "o", tmp_path / "e")
    row = bench_tree.describe("pycg", "-", run, tmp_path / "none.json", tmp_path / "e", 10)
    assert row["status"] == "crashed (exit 1): IndexError: tuple index out of range"
    assert run["rss_mb"] > 0


def test_display_folds_file_lists():
    argv = ["nice", "-n", "19", "/v/bin/pyan3", "/t/a.py", "/t/b.py", "--root", "/r", "--file", "/w/o.dot"]
    assert (__import__("bench_tree").display(argv, {"/v/bin/": "", "/r": "ROOT", "/w/o.dot": "OUT.dot"})
            == "nice -n 19 pyan3 <2 .py files> --root ROOT --file OUT.dot")


def test_other_trees_count_their_own_edges_and_no_sglang_chain(tmp_path):
    import bench_tree

    out = tmp_path / "o.json"
    out.write_text(json.dumps({"edges": [{"caller": "vllm.a.f", "callee": "vllm.b.g", "site": "x", "rule": "direct"},
                                         {"caller": "vllm.a.f", "callee": "torch.cat", "site": "y", "rule": "external"}]}))
    run = {"seconds": 1.0, "cpu_s": 1.0, "rss_mb": 1, "exit": 0, "timed_out": False}
    row = bench_tree.describe("ours", "cold", run, out, tmp_path / "e", 10, "vllm")
    assert (row["status"], row["edges"], row["edges_in_tree"]) == ("ok", 2, 1)
    assert "missing" not in row and "flagship" not in row
