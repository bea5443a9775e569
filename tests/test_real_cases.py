"""The issue's acceptance: `reach` on pinned real trees (SGLang 0.5.23, transformers 5.23.0,
vLLM 0.33.0).

Each case in real_cases/*.json (one file per tree, so work on different trees does not collide) names its wheel, the root inside it, the expected verdict and, for
reached cases, the exact path and call sites, with the upstream line of each hop as evidence.
Cases marked unreachable are *truly* unreachable (the evidence says what was checked): the
analysis must never report them reached; unreachable, or unknown naming its blockers (among
them the one `unresolved_contains` gives, where it does), passes, but a case marked `proved` must be answered "unreachable" (exit 1): a proof once made must not
fall back to unknown.
Cases marked unknown are reached at run time through something the analysis does not model yet
(`truth` and the notes say what): the verdict must be unknown, never unreachable, and the
blockers must name the site that stops it (`unresolved_contains`).
"""
from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest

from callgraph.cli import main
from test_fixtures import _proof, check_case

CASES = [case for path in sorted((Path(__file__).parent / "real_cases").glob("*.json"))
         for case in json.loads(path.read_text())]
assert len({c["id"] for c in CASES}) == len(CASES), "real case ids must be unique"


@pytest.fixture(scope="session")
def tree_analyses():
    """`tree_analyses(tree) -> dict` for `cli.main(analyses=...)`: a tree's cases ask their
    queries of one open Analysis (one per set of options) instead of each parsing the tree
    again (four SGLang cases: 163 CPU s alone, 109 sharing one); each query's inference is its own
    (api.py `_new_query`), so it answers as it does alone. One tree's analyses at a time: the
    last tree's are let go (and collected) before the next is opened, so a worker holds no more
    memory than one tree's cases need."""
    held: dict[Path, dict] = {}

    def of(tree: Path) -> dict:
        if tree not in held:
            held.clear()
            gc.collect()
        return held.setdefault(tree, {})

    return of


@pytest.mark.real
@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_real_case(case: dict, upstream, analysis_cache, tree_analyses, capsys) -> None:
    tree = upstream(case["wheel"])  # sglang==0.5.23, transformers==5.23.0, vllm==0.33.0
    argv = ["reach", case["entry"], case["target"], "--root", str(tree / case["root"])]
    configs = Path(__file__).parent / "real_cases" / "configs"  # `{configs}/x.json`: a --model-config
    argv += [a.replace("{configs}", str(configs)) for a in case.get("args", [])]
    argv += ["--json", "--cache-dir", str(analysis_cache)]
    code = main(argv, analyses=tree_analyses(tree))
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    if case["verdict"] in ("reached", "unknown"):
        check_case(case, code, out, err)
        return
    proof = _proof(code, out, err)
    assert proof["verdict"] != "reached", proof["path"]
    if case.get("proved"):  # proved once: it must stay proved, never fall back to unknown
        assert proof["verdict"] == "unreachable" and code == 1, proof.get("unresolved")
        return
    assert proof["verdict"] in ("unreachable", "unknown"), proof["verdict"]
    if proof["verdict"] == "unknown":
        assert code == 2 and proof["unresolved"], "unknown must name at least one blocker"
        named = [f"{u['site']} {u['expr']} {u['why']}" for u in proof["unresolved"]]
        for text in case.get("unresolved_contains", []):  # the blocker that keeps it from a proof
            assert any(text in n for n in named), f"{text!r} names no blocker:\n" + "\n".join(named)
    else:
        assert code == 1


@pytest.mark.real
def test_flagship_as_the_issue_states_it(upstream, analysis_cache, capsys) -> None:
    """KimiK25ForConditionalGeneration reaches DeepseekV2Model through the shared mm helper."""
    tree = upstream("sglang==0.5.23")
    code = main(["reach", "KimiK25ForConditionalGeneration", "DeepseekV2Model",
                 "--root", str(tree / "sglang/srt"), "--json", "--cache-dir", str(analysis_cache)])
    proof = json.loads(capsys.readouterr().out)
    assert code == 0 and proof["verdict"] == "reached"
    assert [proof["path"][0]["caller"]] + [h["callee"] for h in proof["path"]] == [
        "sglang.srt.models.kimi_k25.KimiK25ForConditionalGeneration.forward",
        "sglang.srt.managers.mm_utils.general_mm_embed_routine",
        "sglang.srt.models.deepseek_v2.DeepseekV2ForCausalLM.forward",
        "sglang.srt.models.deepseek_v2.DeepseekV2Model.forward",
    ]
    assert proof["path"][1]["site"].startswith("sglang/srt/managers/mm_utils.py:885:")
    assert proof["attribute_chain"] == ["language_model", "model"]
