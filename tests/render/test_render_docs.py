"""docs/pictures/ is what docs/make_pictures.py makes from the fixtures today (never stale)."""
from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("callgraph.api", reason="the analysis engine has not landed yet")

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz not installed")
def test_committed_pictures_are_current():
    spec = importlib.util.spec_from_file_location("make_pictures", REPO / "docs/make_pictures.py")
    make_pictures = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = make_pictures   # dataclasses look their module up there
    spec.loader.exec_module(make_pictures)
    assert make_pictures.stale() == [], "run: python docs/make_pictures.py"
