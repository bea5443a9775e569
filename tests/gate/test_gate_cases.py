"""The import-linter style functional tests: one folder a case under fixtures/check/.

Each case holds a config (setup.cfg, pyproject.toml or a named file), an expected.json with the
arguments, the exit code and the lines that must appear in order (stdout, and stderr for invalid
configs), and a README saying what it tests. Adding a case is adding a folder.
"""
from __future__ import annotations

import json

import pytest

from gate_helpers import CHECK_FIXTURES, assert_lines_in_order

CASES = sorted(p for p in CHECK_FIXTURES.iterdir() if (p / "expected.json").is_file())


@pytest.mark.parametrize("case", CASES, ids=[p.name for p in CASES])
def test_case(case, check):
    expected = json.loads((case / "expected.json").read_text())
    code, out, err = check(*expected.get("args", []), cwd=case)
    assert code == expected["exit_code"], f"exit {code}\nstdout:\n{out}\nstderr:\n{err}"
    assert_lines_in_order(expected.get("stdout", []), out)
    assert_lines_in_order(expected.get("stderr", []), err)
    if expected["exit_code"] == 3:
        assert "Traceback" not in err


def test_every_case_has_a_readme():
    assert CASES, "no cases found"
    for case in CASES:
        assert (case / "README.md").is_file(), case
