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


MANY = 300


@pytest.fixture
def many_holders(tmp_path):
    """A tree of MANY files, each holding an instance of the target's class, so that ordering an
    unknown's blockers (leads.py) reads every one of them; the entry leaves two sites unresolved
    that may lead to the target (`x.forward()`, `y.forward()`)."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "main.py").write_text("class Target:\n    def forward(self):\n        pass\n\n\n"
                                 "def entry(x, y):\n    x.forward()\n    y.forward()\n")
    for i in range(MANY):
        (pkg / f"h{i}.py").write_text(f"from pkg.main import Target\n\n\nclass Holder{i}:\n"
                                      f"    def __init__(self):\n        self.m{i} = Target()\n")
    return tmp_path


def test_the_budget_bounds_the_phases_after_the_index_too(many_holders, monkeypatch, capsys):
    """Before, the phases after the exploration ran unbounded once the name summaries had used up
    the budget: ordering the blockers read all MANY files (here 0.01 s a statement, 3 s in all,
    past a 0.5 s budget). Now each checks the deadline, and the cut is named."""
    from callgraph import leads

    read = []
    real = leads._statement

    def slow(lines, i, start):
        time.sleep(0.01)
        read.append(i)
        return real(lines, i, start)

    monkeypatch.setattr(leads, "_statement", slow)
    argv = ["reach", "pkg.main.entry", "pkg.main.Target", "--root", str(many_holders), "--no-cache"]
    assert main(argv + ["--max-seconds", "0.5"]) == 2
    out = capsys.readouterr().out
    assert "search stopped after 0.5 s (--max-seconds)" in out
    assert "ordering the blockers" in out, out
    assert len(read) < MANY // 2, len(read)
    read.clear()
    assert main(argv) == 2  # without a budget the same query reads them all, and lists both sites
    out = capsys.readouterr().out
    assert "x.forward" in out and "y.forward" in out and len(read) == MANY


def test_the_budget_interrupts_jedi(tmp_path, monkeypatch, capsys):
    """One inference of Jedi's can take seconds on a file's first touch; the deadline interrupts
    it (a 30 s one here), and the site it was asked about stays unresolved."""
    import jedi

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "main.py").write_text("class Target:\n    def forward(self):\n        pass\n\n\n"
                                 "def entry(x):\n    x.forward()\n")

    finished = []

    def stuck(self, line, column):
        time.sleep(30)
        finished.append(line)   # reached only if nothing interrupted the sleep
        return []

    monkeypatch.setattr(jedi.Script, "infer", stuck)
    assert main(["reach", "pkg.main.entry", "pkg.main.Target", "--root", str(tmp_path), "--no-cache",
                 "--max-seconds", "1"]) == 2
    assert not finished, "Jedi's inference ran to its end: the deadline did not interrupt it"
    out = capsys.readouterr().out
    assert "cut: asking Jedi about the unresolved sites" in out, out
    assert "x.forward" in out
