"""The export in forked workers gives the graph one process gives, and survives a worker dying."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from callgraph import workers
from callgraph.api import Analysis
from callgraph.cli import main
from callgraph.explore import Explorer

TREES = Path(__file__).resolve().parent.parent / "fixtures" / "trees"
ROOTS = [TREES / "sglang_mini" / "python" / "sglang" / "srt", TREES / "py_semantics", TREES / "hf_mini"]

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="workers fork")


def _export(root: Path, jobs: int, progress=None):
    return Analysis(roots=[str(root)], use_cache=False, warn=lambda m: None, progress=progress).export(jobs=jobs)


def _canon(view):
    return (sorted(view.nodes, key=lambda n: n.name), sorted(view.edges, key=lambda e: (e.caller, e.site, e.callee, e.rule)),
            sorted(view.unresolved, key=lambda u: (u.caller, u.site, u.why)))


@pytest.mark.parametrize("root", ROOTS, ids=lambda p: p.parts[-1] if p.parts[-1] != "srt" else "sglang_mini")
def test_forked_export_equals_one_process(root, monkeypatch):
    monkeypatch.setattr(workers, "MIN_FORKED_SWEEP", 1)  # fork even for a small tree
    one = _export(root, 1)
    lines = []
    three = _export(root, 3, progress=lines.append)
    assert one.edges and _canon(three) == _canon(one)
    assert any("in 3 processes" in line for line in lines)
    assert not any("worker failed" in line for line in lines)


def _raise_in_worker():
    raise RuntimeError("worker broke")


def _killed_in_worker():
    os.kill(os.getpid(), 9)  # dies without a word, as under the OOM killer


@pytest.mark.parametrize("fail,said", [(_raise_in_worker, "a worker failed (RuntimeError: worker broke"),
                                       (_killed_in_worker, "a worker failed (no result: EOFError; exit status -9)")],
                         ids=["raises", "killed"])
def test_a_failing_worker_leaves_its_chunk_here(fail, said, monkeypatch):
    monkeypatch.setattr(workers, "MIN_FORKED_SWEEP", 1)
    parent = os.getpid()
    real = Explorer.sweep

    def sweep(self, ex, states, progress=None):
        if os.getpid() != parent:
            fail()
        yield from real(self, ex, states, progress)

    root = ROOTS[0]
    one = _export(root, 1)
    monkeypatch.setattr(Explorer, "sweep", sweep)
    lines = []
    two = _export(root, 2, progress=lines.append)
    assert _canon(two) == _canon(one)
    assert any(said in line for line in lines), lines


def test_jobs_must_be_positive(tmp_path, capsys):
    assert main(["export", "--root", str(ROOTS[0]), "-o", str(tmp_path / "g.json"), "--jobs", "0"]) == 3
    assert "--jobs" in capsys.readouterr().err
    assert not (tmp_path / "g.json").exists()


def test_a_failure_here_leaves_no_worker_running(monkeypatch):
    monkeypatch.setattr(workers, "MIN_FORKED_SWEEP", 1)
    parent = os.getpid()

    def sweep(self, ex, states, progress=None):
        if os.getpid() != parent:
            time.sleep(60)  # a worker still busy when this process fails
        raise RuntimeError("failed here")
        yield  # pragma: no cover - a generator, as Explorer.sweep is

    monkeypatch.setattr(Explorer, "sweep", sweep)
    forked = []
    real_fork = workers._fork

    def fork(*args):
        pid, reader = real_fork(*args)
        forked.append(pid)
        return pid, reader

    monkeypatch.setattr(workers, "_fork", fork)
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match="failed here"):
        _export(ROOTS[0], 2)
    assert time.monotonic() - t0 < 30  # the worker was stopped, not waited for
    assert forked
    for pid in forked:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # and reaped: it is no child of ours any more
