"""Fixtures for the renderer tests, built from the real model objects in render_cases."""
from __future__ import annotations

import pytest
from render_cases import CONTEXT, KIMI, MODEL, NODES, PATH, ROOT, ROUTINE

from callgraph.model import GraphView, Node, Proof, Unresolved, Verdict


@pytest.fixture
def reached() -> Proof:
    return Proof(Verdict.REACHED, KIMI, MODEL, ROOT, "test", path=PATH,
                 attribute_chain=("language_model", "model"))


@pytest.fixture
def unknown() -> Proof:
    return Proof(Verdict.UNKNOWN, KIMI, MODEL, ROOT, "test", unresolved=(
        Unresolved(ROUTINE, "sglang/srt/managers/mm_utils.py:14:11", "language_model(...)",
                   "receiver type unknown: parameter bound to None"),))


@pytest.fixture
def neighbourhood() -> GraphView:
    return GraphView(ROOT, KIMI, "test", tuple(NODES.values()), PATH + CONTEXT)


@pytest.fixture
def nodes() -> dict[str, Node]:
    return dict(NODES)
