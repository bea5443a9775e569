"""Baseline round trip: accept the paths, edit the tree the way an upstream refactor does, see drift.

The tree is a copy of the bundled sglang_mini in tmp_path; the first edit inserts a helper method
between Kimi's forward and the shared multimodal routine (the path moves, the contract is still
kept: drifted), the second removes the language-model call (the path is gone: broken, and the
frontier says where the accepted path stops).
"""
from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET

import pytest
from gate_helpers import TREES, assert_lines_in_order

CONFIG = """
[callgraph]
roots = tree/python/sglang/srt
baseline = accepted/baseline.json

[callgraph:contract:kimi-serves-deepseek]
entry = KimiK25ForConditionalGeneration
target = DeepseekV2Model
expect = reached

[callgraph:contract:kimi-not-qwen2]
entry = KimiK25ForConditionalGeneration
target = Qwen2Model
expect = unreachable
"""

FORWARD = """    def forward(self, input_ids, positions, forward_batch):
        hidden_states = general_mm_embed_routine("""


@pytest.fixture
def project(tmp_path):
    shutil.copytree(TREES / "sglang_mini", tmp_path / "tree",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "setup.cfg").write_text(CONFIG)
    return tmp_path


def kimi(project):
    return project / "tree/python/sglang/srt/models/kimi_k25.py"


def test_drift_after_an_upstream_style_refactor(project, check):
    code, _, err = check("--update-baseline", cwd=project)
    assert code == 0 and "baseline written" in err
    accepted = json.loads((project / "accepted/baseline.json").read_text())
    assert len(accepted["contracts"]["kimi-serves-deepseek"]["path"]) == 3
    assert accepted["contracts"]["kimi-not-qwen2"]["path"] == []

    code, out, _ = check(cwd=project)
    assert code == 0 and "0 drifted" in out, out

    source = kimi(project).read_text()
    assert FORWARD in source
    kimi(project).write_text(source.replace(FORWARD, """    def forward(self, input_ids, positions, forward_batch):
        return self._prefill(input_ids, positions, forward_batch)

    def _prefill(self, input_ids, positions, forward_batch):
        hidden_states = general_mm_embed_routine("""))

    code, out, _ = check(cwd=project)
    assert code == 0, out
    assert_lines_in_order([
        "KEPT     kimi-serves-deepseek  (drifted from the baseline)",
        "path changed since the baseline:",
        "- KimiK25ForConditionalGeneration.forward -> general_mm_embed_routine [direct]",
        "+ KimiK25ForConditionalGeneration.forward -> KimiK25ForConditionalGeneration._prefill",
        "+ KimiK25ForConditionalGeneration._prefill -> general_mm_embed_routine [direct]",
        "KEPT     kimi-not-qwen2",
        "Contracts: 2 checked, 2 kept, 0 broken, 0 unknown, 1 drifted.",
    ], out)

    junit = project / "junit.xml"
    code, out, _ = check("--fail-on-drift", "--junit-xml", junit, cwd=project)
    assert code == 1
    failure = ET.parse(junit).getroot().find("testsuite/testcase/failure")
    assert failure.get("type") == "drifted" and "_prefill" in failure.text

    code, _, _ = check("--update-baseline", cwd=project)
    code, out, _ = check(cwd=project)
    assert code == 0 and "0 drifted" in out, "accepting the new path clears the drift"


def test_broken_after_refactor_names_where_the_accepted_path_stops(project, check):
    assert check("--update-baseline", cwd=project)[0] == 0
    source = kimi(project).read_text()
    kimi(project).write_text(source.replace(
        "language_model=self.language_model,", "language_model=self.vision_tower,"))
    code, out, _ = check("--contract", "kimi-serves-deepseek", cwd=project)
    assert code == 1, out
    assert_lines_in_order(["BROKEN   kimi-serves-deepseek",
                           "expected reached, proved unreachable"], out)
    assert_lines_in_order(["where the accepted path stops:",
                           "sglang/srt/managers/mm_utils.py:14:24  the baseline path stops here: "
                           "general_mm_embed_routine is still reached but no longer calls "
                           "DeepseekV2ForCausalLM.forward"], out)


def test_missing_baseline_is_invalid_unless_updating(project, check):
    code, _, err = check(cwd=project)
    assert code == 3 and "baseline not found" in err
