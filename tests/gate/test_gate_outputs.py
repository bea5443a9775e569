"""What CI consumes: JUnit XML, GitHub annotations, JSON, and the reasons' file:line.

All on sglang_broken's config (one kept, one expected path missing, one path that should not
exist), run from the repo root as a CI job would.
"""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from gate_helpers import CHECK_FIXTURES, REPO, assert_lines_in_order

from callgraph.api import Analysis
from callgraph.gate.config import load_config
from callgraph.gate.contracts import Analyses, evaluate
from callgraph.gate.results import Status

BROKEN = CHECK_FIXTURES / "sglang_broken" / "gate.cfg"
QWEN2 = "sglang/srt/models/qwen2.py"
KIMI = "sglang/srt/models/kimi_k25.py"


def test_junit_has_one_case_per_contract_with_reasons(check, tmp_path):
    junit = tmp_path / "out" / "callgraph.xml"
    code, _, _ = check("--config", BROKEN, "--junit-xml", junit)
    assert code == 1
    suite = ET.parse(junit).getroot().find("testsuite")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == [
        "kimi-serves-deepseek", "kimi-reaches-qwen2", "kimi-avoids-deepseek"]
    assert suite.get("tests") == "3" and suite.get("failures") == "2"
    assert cases[0].find("failure") is None
    missing, forbidden = cases[1].find("failure"), cases[2].find("failure")
    assert missing.get("type") == "broken" and f"{QWEN2}:" in missing.text
    assert "witness path that should not exist" in forbidden.text and f"{KIMI}:46" in forbidden.text


def test_broken_reason_names_the_target_and_its_callers(check):
    code, out, _ = check("--config", BROKEN, "--contract", "kimi-reaches-qwen2")
    assert code == 1
    assert_lines_in_order([
        "BROKEN   kimi-reaches-qwen2",
        "expected reached, proved unreachable",
        f"{QWEN2}:27  Qwen2Model.forward (the target) is defined here",
    ], out)
    # where the entry would have to go: the target's callers (engine) or the uses of its class
    assert "Qwen2ForCausalLM" in out and (f"{QWEN2}:37" in out or f"{QWEN2}:40" in out), out


def test_github_annotations_point_at_repo_files(check):
    code, out, _ = check("--config", BROKEN, "--format", "github")
    assert code == 1
    annotations = [line for line in out.splitlines() if line.startswith("::error ")]
    tree = "fixtures/trees/sglang_mini/python/"
    assert any(a.startswith(f"::error file={tree}{KIMI},line=46,") and "kimi-avoids-deepseek" in a
               for a in annotations), annotations
    assert any(f"file={tree}{QWEN2},line=" in a and "kimi-reaches-qwen2" in a
               for a in annotations), annotations
    assert not any("kimi-serves-deepseek" in a for a in annotations)
    assert "Contracts: 3 checked, 1 kept, 2 broken" in out


def test_json_report(check):
    code, out, _ = check("--config", BROKEN, "--format", "json")
    data = json.loads(out)
    assert code == data["exit_code"] == 1
    assert data["summary"] == {"checked": 3, "kept": 1, "broken": 2, "unknown": 0, "drifted": 0}
    kept = data["contracts"][0]
    assert kept["status"] == "kept" and kept["proof"]["verdict"] == "reached"
    assert kept["path"][0]["site"].startswith(f"{KIMI}:46")


def test_contracts_on_one_tree_share_one_analysis(analysis_cache):
    made = []

    def factory(**kwargs):
        made.append(kwargs["roots"])
        return Analysis(**kwargs)

    cfg = load_config(CHECK_FIXTURES / "sglang_kept" / "setup.cfg", cwd=REPO)
    analyses = Analyses(factory, cache_dir=str(analysis_cache), use_cache=True)
    results = evaluate(cfg.contracts, analyses)
    assert len(cfg.contracts) == 5 and len(made) == 1
    assert all(r.status is Status.KEPT for r in results)

    two_trees = load_config(CHECK_FIXTURES / "hf_bound" / "setup.cfg", cwd=REPO)
    analyses = Analyses(factory, cache_dir=str(analysis_cache), use_cache=True)
    evaluate(two_trees.contracts, analyses)
    assert len(analyses) == 2


def test_self_contracts_from_repo_root_as_ci_runs_them(check):
    """The line CI runs: `callgraph check --config fixtures/check/self/setup.cfg`."""
    code, out, err = check("--config", "fixtures/check/self/setup.cfg", cwd=REPO)
    assert code == 0, out + err
    assert "Contracts: 5 checked, 5 kept, 0 broken, 0 unknown, 0 drifted." in out


@pytest.mark.parametrize("fmt", ["text", "json", "github"])
def test_every_format_keeps_the_exit_code(check, fmt):
    code, _, _ = check("--config", CHECK_FIXTURES / "hf_unknown" / "setup.cfg", "--format", fmt)
    assert code == 2
