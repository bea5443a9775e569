"""Every `fixtures/reach/<case>/expected.json` is one run of `callgraph reach ... --json`.

Adding a case is adding a folder (see fixtures/reach/*/README.md). The schema:
entry, target, root (relative to fixtures/), args (extra CLI args; `{fixtures}` is the fixtures
folder), verdict, exit_code,
path (qualnames entry..target), sites (per hop, `path:line` or a list of alternatives), rules (per hop: a rule, a list of
acceptable rules, or null), attribute_chain, error_contains (str or list, for verdict error),
stderr_contains (str or list), unresolved_min (least number of unresolved sites named),
unresolved_contains (str or list: each must be in one named site's `site expr why`, so an
"unknown" names the right blocker), first_unresolved (str: in the first named site's
`site expr why`, so the blocker a person reads first is the one a target could be behind),
conditions (registry key expression -> keys the answer must list as reaching: docs/registries.md).
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from callgraph.cli import main

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CASES = sorted((FIXTURES / "reach").glob("*/expected.json"))
KNOWN_KEYS = {"entry", "target", "root", "args", "verdict", "exit_code", "path", "sites", "rules",
              "attribute_chain", "error_contains", "stderr_contains", "unresolved_min", "unresolved_contains",
              "first_unresolved", "conditions"}


def _as_list(value):
    return [value] if isinstance(value, str) else list(value)


def run_reach(case: dict, root_base: Path, extra: list[str], capsys) -> tuple[int, str, str]:
    argv = ["reach", case["entry"], case["target"]]
    for root in case["root"]:
        argv += ["--root", str(root_base / root)]
    # `{fixtures}` in an argument is the fixtures folder (a --model-config file beside a tree)
    argv += [a.replace("{fixtures}", str(root_base)) for a in case.get("args", [])] + ["--json"] + extra
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _proof(code: int, out: str, err: str) -> dict:
    try:
        return json.loads(out)
    except json.JSONDecodeError:
        pytest.fail(f"no JSON proof on stdout (exit {code}); stderr:\n{err}")


def check_case(case: dict, code: int, out: str, err: str) -> None:
    """The assertions shared by the fixture cases and the real cases."""
    assert "Traceback" not in err, err
    for text in _as_list(case.get("stderr_contains", [])):
        assert text in err, f"{text!r} not on stderr:\n{err}"
    if case["verdict"] == "error":
        assert code == case["exit_code"] == 3, (code, out, err)
        for text in _as_list(case["error_contains"]):
            assert text in err, f"{text!r} not in the error message:\n{err}"
        assert len([ln for ln in err.splitlines() if ln.startswith("callgraph: error:")]) == 1, err
        return
    proof = _proof(code, out, err)
    assert proof["verdict"] == case["verdict"], (proof["verdict"], proof.get("unresolved"))
    assert code == case["exit_code"]
    if case["verdict"] != "reached":
        assert proof["path"] == []
        assert len(proof.get("unresolved", [])) >= case.get("unresolved_min", 0), proof
        rows = [f"{u['site']} {u['expr']} {u['why']}" for u in proof.get("unresolved", [])]
        for text in _as_list(case.get("unresolved_contains", [])):
            assert any(text in row for row in rows), f"{text!r} names no blocker:\n" + "\n".join(rows)
        if "first_unresolved" in case:
            assert rows and case["first_unresolved"] in rows[0], "first blocker:\n" + "\n".join(rows)
        got = {c["key"]: c["reaching"] for c in proof.get("conditions", [])}
        for key, reaching in case.get("conditions", {}).items():  # key -> keys that must be listed
            assert key in got, (key, proof.get("conditions"))
            assert set(reaching) <= set(got[key]), (key, got[key])
        return
    hops = proof["path"]
    assert [h["callee"] for h in hops] == case["path"][1:], [h["callee"] for h in hops]
    assert hops[0]["caller"] == case["path"][0]
    assert proof["entry"] == case["path"][0] and proof["target"] == case["path"][-1]
    for a, b in zip(hops, hops[1:]):
        assert a["callee"] == b["caller"], (a, b)
    got = [h["site"].rsplit(":", 1)[0] for h in hops]
    assert len(got) == len(case["sites"]), got
    for site, want in zip(got, case["sites"]):  # a site, or a list of equally short ones
        assert site in _as_list(want), (got, case["sites"])
    for hop, rule in zip(hops, case.get("rules", [None] * len(hops))):
        if rule is not None:
            assert hop["rule"] in _as_list(rule), (hop, rule)
    if "attribute_chain" in case:
        assert proof["attribute_chain"] == case["attribute_chain"]


@pytest.mark.parametrize("expected", CASES, ids=[p.parent.name for p in CASES])
def test_reach_fixture(expected: Path, capsys) -> None:
    case = json.loads(expected.read_text())
    assert set(case) <= KNOWN_KEYS, set(case) - KNOWN_KEYS
    code, out, err = run_reach(case, FIXTURES, ["--no-cache"], capsys)
    check_case(case, code, out, err)
