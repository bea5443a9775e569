"""Shared test fixtures."""
from __future__ import annotations

import pytest

from upstream import RegistryUnavailable, cache_dir, fetch


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
