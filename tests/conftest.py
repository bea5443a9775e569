"""Shared test fixtures, and how the test workers share the work (tests/run.sh)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from upstream import RegistryUnavailable, cache_dir, fetch

#: real case id -> its wheel (`sglang==0.5.23`), from real_cases/*.json
REAL_TREES = {case["id"]: case["wheel"] for path in sorted((Path(__file__).parent / "real_cases").glob("*.json"))
              for case in json.loads(path.read_text())}
_REAL_CASE = re.compile(r"::test_real_case\[(.+)\]$")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadgroup` (tests/run.sh): the real cases of one tree are one unit of work, run by
    one worker, which parses that tree once for them all (test_real_cases.py `tree_analyses`);
    the trees' units go out first (the most cases first), and every other test is a unit of its
    own, sent to whichever worker has run out. pytest-xdist's own loadgroup groups by the
    `xdist_group` mark through a rewrite of the node id that pytest 9 no longer reads (every
    test was then a unit of its own): this reads the case's tree off its id instead."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class TreeGroups(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            match = _REAL_CASE.search(nodeid)
            if match and match.group(1) in REAL_TREES:
                return "real cases of " + REAL_TREES[match.group(1)]
            return nodeid

    return TreeGroups(config, log)


@pytest.fixture(scope="session")
def upstream():
    """`upstream("name==version") -> Path` of the unpacked wheel; skips only when offline."""
    fetched = {}

    def get(spec: str):
        if spec not in fetched:
            try:
                fetched[spec] = fetch(spec)
            except RegistryUnavailable as exc:
                pytest.skip(f"package registry unreachable: {exc}")
        return fetched[spec]

    return get


@pytest.fixture(scope="session")
def analysis_cache():
    """One analysis cache for the session, under the test cache (outside the repo)."""
    path = cache_dir() / "analysis"
    path.mkdir(parents=True, exist_ok=True)
    return path
