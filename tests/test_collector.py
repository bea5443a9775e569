"""The cyclic collector stays paused through a query (gcpause.py), Jedi's work included."""
from __future__ import annotations

import ast
import gc

from callgraph.api import Analysis
from callgraph.gcpause import collector_paused
from callgraph.jedi_oracle import JediOracle


def test_jedi_loading_cached_trees_leaves_the_collector_paused(tmp_path, monkeypatch):
    """parso loads a tree from its disk cache under `gc.disable()` ... `gc.enable()`: asked
    inside an analysis that paused the collector, Jedi turned it back on, and collections ran
    for the rest of the query. No collection runs while a query is paused, and the collector is
    as it was after it."""
    import jedi
    import parso.cache

    monkeypatch.setattr(jedi.settings, "cache_directory", str(tmp_path / "jedi-cache"))
    pkg = tmp_path / "root" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "lib.py").write_text("def helper():\n    return 1\n")
    (pkg / "mod.py").write_text("from pkg.lib import helper\n\n\ndef entry():\n    return helper()\n")
    site = ast.parse((pkg / "mod.py").read_text()).body[1].body[0].value  # `helper()`

    def ask():
        project = Analysis(roots=[str(tmp_path / "root")], use_cache=False, warn=lambda m: None).project
        answers = JediOracle(project).callees(pkg / "mod.py", site)
        junk = [[i] for i in range(50_000)]  # what the rest of a query allocates
        return [a.qual for a in answers], len(junk)

    assert ask()[0] == ["pkg.lib.helper"]  # parses both files, writes their pickles
    assert list((tmp_path / "jedi-cache").rglob("*.pkl")), "parso wrote no cache: the test tests nothing"
    parso.cache.parser_cache.clear()  # the next Jedi reads the trees back from the disk cache
    collections = []
    count = lambda phase, info: phase == "start" and collections.append(info)  # noqa: E731
    before = gc.isenabled(), gc.get_threshold()
    gc.callbacks.append(count)
    try:
        answers, _ = collector_paused(ask)()
    finally:
        gc.callbacks.remove(count)
    assert answers == ["pkg.lib.helper"]
    assert collections == [], f"{len(collections)} collection(s) ran while the query had the collector paused"
    assert (gc.isenabled(), gc.get_threshold()) == before
