"""A cache record is believed only when it proves itself (callgraph/cache.py, records.py):
anything damaged, edited or misshapen is discarded with one note and the answer rebuilt."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from callgraph.cache import decode, encode
from callgraph.cli import main

TREE = {
    "a.py": "from b import helper\n\n\ndef entry(obj):\n    helper()\n    obj.run()\n\n\ndef lonely():\n    pass\n",
    "b.py": "def helper():\n    leaf()\n\n\ndef leaf():\n    pass\n\n\ndef other(x):\n    x.run()\n",
}


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "src"
    root.mkdir()
    for name, text in TREE.items():
        (root / name).write_text(text)
    return root


def _run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _records(cache: Path, kind: str) -> list[Path]:
    return sorted(cache.glob(f"*/{kind}/*/*.json"))


def _value(path: Path, kind: str):
    return decode(path.read_bytes(), kind)


def _reach(tree, cache, capsys, target="leaf"):
    return _run(["reach", "entry", target, "--root", str(tree), "--cache-dir", str(cache), "--json"], capsys)


def _damages(kind: str, good: bytes):
    """(label, bytes) of damaged versions of a good record."""
    value = decode(good, kind)
    head, _, body = good.partition(b"\n")
    out = [("not JSON", b"{not json"), ("bare JSON list", b"[]"), ("no header", body),
           ("cut short", good[: len(good) // 2]),
           ("edited body", head + b"\n" + body.replace(b'"callee"', b'"callee" ', 1)),
           ("wrong kind", encode("names" if kind != "names" else "reach", value))]
    for label, shape in [("[]", []), ("{}", {}), ("proof null", {"proof": None, "read": {}}),
                         ("graph null", {"graph": None, "read": {}}), ("read list", {**value, "read": []})]:
        out.append((f"shape {label}", encode(kind, shape)))
    return out


def _proof_damages(good: bytes):
    value = decode(good, "reach")
    proof = value["proof"]
    bogus = {**value, "proof": {**proof, "verdict": "maybe"}}
    cut = {**value, "proof": {**proof, "path": proof["path"][:1]}}
    flipped = {**value, "proof": {**proof, "verdict": "unreachable"}}
    classes = {**value, "classes": [1, None]}  # the names the text shortens by: strings only
    return [("bogus verdict", encode("reach", bogus)), ("path cut to one hop", encode("reach", cut)),
            ("verdict flipped, path kept", encode("reach", flipped)), ("classes not names", encode("reach", classes))]


def test_reach_record_damage_is_discarded_and_rebuilt(tree, tmp_path, capsys):
    cache = tmp_path / "cache"
    code, cold, _ = _reach(tree, cache, capsys)
    assert code == 0 and json.loads(cold)["verdict"] == "reached"
    (record,) = _records(cache, "reach")
    good = record.read_bytes()
    assert len(json.loads(cold)["path"]) == 2
    for label, bad in _damages("reach", good) + _proof_damages(good):
        record.write_bytes(bad)
        code, out, err = _reach(tree, cache, capsys)
        assert code == 0, (label, err)
        assert json.loads(out)["path"] == json.loads(cold)["path"], label
        notes = [ln for ln in err.splitlines() if ln.startswith("callgraph: note: discarded a damaged")]
        assert len(notes) == 1 and str(record) in notes[0], (label, err)
        assert "Traceback" not in err
        assert _value(record, "reach")["proof"]["verdict"] == "reached", label  # rebuilt


def test_a_good_record_is_served_without_a_note(tree, tmp_path, capsys):
    cache = tmp_path / "cache"
    _reach(tree, cache, capsys)
    code, out, err = _reach(tree, cache, capsys)
    assert code == 0 and "note:" not in err


def test_name_summaries_and_export_records_are_checked(tree, tmp_path, capsys):
    cache = tmp_path / "cache"
    code, cold, _ = _reach(tree, cache, capsys, target="lonely")  # not reached: the name bound runs
    assert code in (1, 2)
    names = _records(cache, "names")
    assert len(names) == 2
    for path in names:
        path.write_bytes(encode("names", {"defs": [["f", "not a list", True]], "holders": [],
                                          "values": [], "classes": []}))
    (index,) = _records(cache, "nameindex")  # the whole tree's, read first: damaged too
    index.write_bytes(encode("nameindex", {"callees": [], "defs": [["f", "not a set", True]], "holders": [], "values": [],
                                           "classes": [], "dynamic": False, "skipped": []}))
    for path in _records(cache, "reach"):
        path.unlink()
    code2, warm, err = _reach(tree, cache, capsys, target="lonely")
    assert (code2, json.loads(warm)["verdict"]) == (code, json.loads(cold)["verdict"])
    assert err.count("note: discarded a damaged cache record (defs[0] is not") == 3, err

    out = tmp_path / "g.json"
    argv = ["export", "--root", str(tree), "--cache-dir", str(cache), "-o", str(out)]
    assert _run(argv, capsys)[0] == 0
    first = out.read_text()
    (record,) = _records(cache, "export")
    for label, bad in _damages("export", record.read_bytes()):
        record.write_bytes(bad)
        code, _, err = _run(argv, capsys)
        assert code == 0 and out.read_text() == first, label
        assert err.count("note: discarded a damaged cache record") == 1, (label, err)


def test_cache_info_and_clear(tree, tmp_path, capsys):
    cache = tmp_path / "cache"
    _reach(tree, cache, capsys, target="lonely")
    (cache / "keep-me.txt").write_text("not callgraph's")
    code, out, _ = _run(["cache", "info", "--cache-dir", str(cache)], capsys)
    assert code == 0
    assert f"location: {cache}" in out
    (row,) = [ln for ln in out.splitlines() if ln.startswith("records ")]
    assert "(this version): 4 (1 nameindex, 2 names, 1 reach)" in row, out
    code, out, _ = _run(["cache", "clear", "--cache-dir", str(cache)], capsys)
    assert code == 0 and out.startswith("removed 4 file(s)"), out
    assert _records(cache, "*") == [] and (cache / "keep-me.txt").exists()
    code, out, _ = _run(["cache", "info", "--cache-dir", str(cache)], capsys)
    assert "records: none" in out


def test_a_known_tree_reads_its_name_index_as_one_record(tree, tmp_path, capsys, monkeypatch):
    """The second query on a tree reads the whole name index from one record, not a summary per
    file, gets the same answer, and warns again about a file the index skipped; an edited file
    gives the tree another key, so the index is built afresh and takes the edit in."""
    from callgraph import cache as cache_module

    (tree / "bad.py").write_text("def broken(:\n")
    cache = tmp_path / "cache"
    code, cold, err = _run(["reach", "entry", "lonely", "--root", str(tree), "--cache-dir", str(cache), "--json"],
                           capsys)
    assert code == 1 and "skipping" in err and "bad.py" in err
    assert len(_records(cache, "nameindex")) == 1
    kinds = []
    real = cache_module.Cache.get

    def spy(self, kind, key):
        kinds.append(kind)
        return real(self, kind, key)

    monkeypatch.setattr(cache_module.Cache, "get", spy)
    argv = ["reach", "other", "lonely", "--root", str(tree), "--cache-dir", str(cache), "--json"]
    code, warm, err = _run(argv, capsys)
    assert code == 1 and json.loads(warm)["verdict"] == "unreachable"
    assert "nameindex" in kinds and "names" not in kinds, kinds
    assert "skipping" in err and "bad.py" in err
    (tree / "b.py").write_text(TREE["b.py"] + "\n\ndef run():\n    lonely()\n")  # x.run() may now lead there
    kinds.clear()
    code, after, _ = _run(argv, capsys)
    assert code == 2 and json.loads(after)["verdict"] == "unknown"
    assert "names" in kinds and len(_records(cache, "nameindex")) == 2


def test_a_record_written_piece_by_piece_is_the_encoded_record(tmp_path, monkeypatch):
    """Cache.put writes a record piece by piece (a whole-tree export's is 140 MB), its checksum
    put in the header last: the bytes are encode()'s, at any split depth, for any JSON value."""
    import io

    from callgraph import cache as cache_mod

    edges = [{"caller": f"m.f{i}", "callee": "m.g\u00e9\"", "via": [], "line": i, "ok": i % 2 == 0}
             for i in range(300)]
    values = [{"graph": {"edges": edges, "nodes": [], "empty": {}, "n": None, "x": 1.5},
               "read": {"/x.py": "ab" * 20}},
              {1: [True, {"2": [[], [3]]}], None: "z"}, [], {}, "text", 3, [{"a": {}}, []]]
    for depth in (0, 1, 3, 6):
        monkeypatch.setattr(cache_mod, "_SPLIT_DEPTH", depth)
        for value in values:
            fh = io.BytesIO()
            fh.write(b"before")
            cache_mod.write_record(fh, "export", value)
            assert fh.getvalue() == b"before" + cache_mod.encode("export", value), (depth, value)
