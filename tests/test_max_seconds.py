"""`--max-seconds` bounds the whole reach query, not only the exploration (issue 16: a cold
transformers query with `--max-seconds 3` ran 14.7 s, most of it summarising the names of
2,860 files, and reported no "stopped" blocker). What the budget cut is named, and a cut run
never answers "unreachable"."""
from __future__ import annotations

import time

import pytest

from callgraph import relevance
from callgraph.cli import main

FILES = 20


@pytest.fixture
def tree(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    # x.frobnicate() stays unresolved; no def is named frobnicate, so the name summaries rule
    # it out, and only they can.
    (pkg / "main.py").write_text("def entry(x):\n    x.frobnicate()\n\n\ndef target():\n    pass\n")
    for i in range(FILES):
        (pkg / f"m{i}.py").write_text(f"def f{i}():\n    return {i}\n")
    return tmp_path


@pytest.fixture
def slow_summaries(monkeypatch):
    """Each file's name summary takes 0.2 s; returns the list of files summarised."""
    done = []
    real = relevance._summarize_file

    def slow(path):
        time.sleep(0.2)
        done.append(path)
        return real(path)

    monkeypatch.setattr(relevance, "_summarize_file", slow)
    return done


def _reach(tree, *extra):
    return main(["reach", "pkg.main.entry", "pkg.main.target", "--root", str(tree), "--no-cache", *extra])


def test_without_a_budget_the_summaries_prove_unreachable(tree, slow_summaries, capsys):
    assert _reach(tree) == 1
    assert len(slow_summaries) == FILES + 2


def test_the_budget_cuts_the_name_summaries_and_says_so(tree, slow_summaries, capsys):
    assert _reach(tree, "--max-seconds", "0.3") == 2
    out = capsys.readouterr().out
    assert "search stopped after 0.3 s (--max-seconds); cut: name summaries of" in out
    assert "x.frobnicate" in out  # every unresolved site counts once summaries are cut
    assert len(slow_summaries) < FILES  # the rest were never started


def test_the_budget_counts_from_the_start_of_the_query(tree, monkeypatch, capsys):
    """Time spent before exploring (finding the names) is spent from the same budget."""
    from callgraph import api

    real = api.Analysis._resolve

    def slow_resolve(self, name, what="name"):
        time.sleep(0.3)
        return real(self, name, what)

    monkeypatch.setattr(api.Analysis, "_resolve", slow_resolve)
    assert _reach(tree, "--max-seconds", "0.2") == 2
    assert "cut: exploration after 0 function(s)" in capsys.readouterr().out


def test_the_budget_cuts_inside_a_function(tmp_path, monkeypatch, capsys):
    """One function of a cold tree can take seconds (its sites parse files): the budget is
    checked between its call sites, not only between functions."""
    from callgraph import explore

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    calls = "".join(f"    x.m{i}()\n" for i in range(20))
    (pkg / "main.py").write_text(f"def entry(x):\n{calls}\n\ndef target():\n    pass\n")
    dispatched = []
    real = explore.Explorer._dispatch

    def slow(self, fn, node, scope):
        time.sleep(0.1)
        dispatched.append(node)
        return real(self, fn, node, scope)

    monkeypatch.setattr(explore.Explorer, "_dispatch", slow)
    assert _reach(tmp_path, "--max-seconds", "0.3") == 2
    assert "cut: exploration after 1 function(s)" in capsys.readouterr().out
    assert len(dispatched) < 20
