"""Jedi's disk cache shared by several processes: a pickle cut short (another process writing
it, a crash) must not make Jedi silently blind (the same question answered "reached", then
"unknown"). The question is the rule_jedi fixture's: Jedi is the only way it is reached."""
from __future__ import annotations

import json
import pickle
from pathlib import Path

import jedi
import parso.cache
import pytest

from callgraph.cli import main

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CASE = json.loads((FIXTURES / "reach" / "rule_jedi" / "expected.json").read_text())


@pytest.fixture
def jedi_cache(tmp_path, monkeypatch):
    """Jedi's cache in a directory of the test's own (read by Jedi at each parse), and parso's
    in-memory cache empty, so that every module is read from (or written to) that directory."""
    monkeypatch.setattr(jedi.settings, "cache_directory", str(tmp_path / "jedi"))
    saved = dict(parso.cache.parser_cache)  # emptied in place: Jedi holds the dict itself
    parso.cache.parser_cache.clear()
    yield tmp_path / "jedi"
    parso.cache.parser_cache.clear()
    parso.cache.parser_cache.update(saved)


def _reach(capsys) -> dict:
    args = ["reach", CASE["entry"], CASE["target"], "--no-cache", "--json"]
    for root in CASE["root"]:
        args += ["--root", str(FIXTURES / root)]
    code = main(args)
    out = capsys.readouterr().out
    proof = json.loads(out)
    assert code == {"reached": 0, "unreachable": 1, "unknown": 2}[proof["verdict"]], (code, out)
    return proof


def test_truncated_cache_pickles_are_misses_and_rewritten_whole(jedi_cache, capsys) -> None:
    assert _reach(capsys)["verdict"] == "reached"
    pickles = list(jedi_cache.rglob("*.pkl"))
    assert pickles, "Jedi wrote no cache: the test would check nothing"
    for p in pickles:  # what a reader sees while another process writes the file in place
        p.write_bytes(b"\x80\x05")
    parso.cache.parser_cache.clear()  # this process must read the files again, as another would
    with pickles[0].open("rb") as reader:  # a reader that opened the file before the rewrite
        proof = _reach(capsys)
        assert reader.read() == b"\x80\x05"  # kept its whole (old) file: a rename, not a rewrite
    assert proof["verdict"] == "reached", proof.get("unresolved")
    assert [hop["rule"] for hop in proof["path"]] == CASE["rules"]
    for p in jedi_cache.rglob("*.pkl"):  # each bad pickle parsed again and written whole
        assert not p.name.startswith(".tmp-"), p
        with p.open("rb") as f:
            pickle.load(f)
