"""Paths and assertions the gate tests share."""
from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHECK_FIXTURES = REPO / "fixtures" / "check"
TREES = REPO / "fixtures" / "trees"


def assert_lines_in_order(expected: list[str], text: str) -> None:
    """Each expected string is contained in some output line, in the given order."""
    lines = text.splitlines()
    at = 0
    for want in expected:
        for i in range(at, len(lines)):
            if want in lines[i]:
                at = i + 1
                break
        else:
            raise AssertionError(f"{want!r} not found (in order) in output:\n{text}")
