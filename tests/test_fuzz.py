"""Generated programs (pysource-codegen, fixed seeds) through export and reach: none may crash
or end with an exit code outside the documented ones. benchmarks/fuzz_programs.py runs 10,000."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

pytest.importorskip("pysource_codegen")  # in the test extra (setup.cfg)
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import fuzz_programs  # noqa: E402

FUZZ_COUNT = int(os.environ.get("CALLGRAPH_FUZZ_COUNT", "300"))


def test_generated_programs_never_crash(tmp_path):
    outcomes = fuzz_programs.run(0, FUZZ_COUNT, keep=tmp_path)
    result = fuzz_programs.summary(outcomes)
    problems = [o for o in outcomes if o.problem]
    assert not problems, "\n\n".join(f"seed {o.seed}: {o.problem}" for o in problems[:3])
    assert result["programs"] >= FUZZ_COUNT * 0.9, result  # the generator ran on nearly all seeds
    assert set(result["export_codes"]) == {0}, result


def test_a_crash_is_caught(tmp_path, monkeypatch):
    """The harness itself: a failure inside the analysis is reported with its seed."""
    import callgraph.explore as explore

    def broken(*args, **kwargs):
        raise AssertionError("injected")

    monkeypatch.setattr(explore.Explorer, "visit", broken)
    (outcome,) = fuzz_programs.run(3, 1)
    assert outcome.export == 4 and "internal error: AssertionError: injected" in outcome.problem
