"""PyCG's micro-benchmark must not regress: a case that passed a criterion (no false edge, no
missing edge) in the accepted score (`benchmarks/pycg_micro_score.json`) must still pass it.

Improvements are welcome and reported; accept them with
`python3 benchmarks/pycg_micro.py --write-score`. Skips only when the registry is unreachable.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from upstream import RegistryUnavailable

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE / "benchmarks"))

import pycg_micro  # noqa: E402

pytestmark = pytest.mark.real


def test_pycg_micro_benchmark_does_not_regress():
    try:
        snippets = pycg_micro.snippets_dir()
    except RegistryUnavailable as exc:
        pytest.skip(f"package registry unreachable: {exc}")
    cases = pycg_micro.run_suite(snippets)
    print("\n" + pycg_micro.table(cases))
    accepted = json.loads(pycg_micro.SCORE_FILE.read_text())
    now = pycg_micro.score(cases)
    assert now["cases"] == accepted["cases"], "the benchmark's case list changed"
    regressions = []
    for criterion in ("no_false_edge", "no_missing_edge"):
        lost = sorted(set(accepted[criterion]) - set(now[criterion]))
        gained = sorted(set(now[criterion]) - set(accepted[criterion]))
        if gained:
            print(f"{criterion}: {len(gained)} case(s) now pass (accept with --write-score): {gained}")
        by_name = {c.name: c for c in cases}
        regressions += [pycg_micro.detail(by_name[name], snippets) + f"\n  (was {criterion})" for name in lost]
    assert not regressions, "PyCG micro-benchmark regressions:\n" + "\n".join(regressions)
