"""A hostile file never stops the run: it is skipped with a warning naming it (or, where only
one call cannot be finished, that call is left unresolved), and the rest of the tree is analysed."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from callgraph.cli import main
from callgraph.explore import TOO_DEEP

GOOD = "def leaf():\n    return 1\n\n\ndef top():\n    return leaf()\n"

# name -> bytes of a file that Python itself cannot parse (each raised out of `ast.parse` before)
UNPARSABLE = {
    "unary": b"x = " + b"-" * 100_000 + b"1\n",                   # MemoryError
    "nots": b"x = " + b"not " * 100_000 + b"1\n",                 # MemoryError
    "lambdas": b"f = " + b"lambda: " * 3000 + b"1\n",             # MemoryError
    "elifs": b"if x == 0:\n    pass\n" + b"".join(b"elif x == %d:\n    pass\n" % i for i in range(1, 10_000)),
    "nul": b"def f():\n    return 1\x00\n",                        # ValueError before 3.12
    "cookie": b"# -*- coding: no-such-codec -*-\nx = 1\n",
    "undecodable": b"x = '\xff\xfe'\n",
}


def _tree(tmp_path: Path, files: dict[str, bytes | str]) -> Path:
    root = tmp_path / "src"
    root.mkdir()
    for name, body in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        (path.write_bytes if isinstance(body, bytes) else path.write_text)(body)
    return root


def _export(root: Path, tmp_path: Path, capsys) -> tuple[int, dict, str]:
    out = tmp_path / "graph.json"
    code = main(["export", "--root", str(root), "--no-cache", "-o", str(out)])
    err = capsys.readouterr().err
    return code, (json.loads(out.read_text()) if out.exists() else {}), err


def _edges(graph: dict) -> set[tuple[str, str]]:
    return {(e["caller"], e["callee"]) for e in graph["edges"]}


@pytest.mark.parametrize("name", sorted(UNPARSABLE))
def test_unparsable_file_is_skipped(name, tmp_path, capsys):
    root = _tree(tmp_path, {"good.py": GOOD, f"{name}.py": UNPARSABLE[name],
                            "user.py": f"import {name}\nfrom good import leaf\n\ndef entry():\n"
                                       f"    {name}.anything()\n    leaf()\n"})
    code, graph, err = _export(root, tmp_path, capsys)
    assert code == 0, err
    assert f"callgraph: warning: skipping {name}.py: " in err, err
    assert ("good.top", "good.leaf") in _edges(graph)
    # a query whose closure imports the file
    code = main(["reach", "entry", "leaf", "--root", str(root), "--no-cache"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "Traceback" not in err and "internal error" not in err


def test_pep263_latin1_file_is_read_as_python_reads_it(tmp_path, capsys):
    source = ("# -*- coding: latin-1 -*-\ndef caf\u00e9():\n    return 'd\u00e9j\u00e0'\n\n"
              "def entry():\n    return caf\u00e9()\n")
    root = _tree(tmp_path, {"latin.py": source.encode("latin-1")})
    code, graph, err = _export(root, tmp_path, capsys)
    assert code == 0 and "skipping" not in err, err
    assert ("latin.entry", "latin.caf\u00e9") in _edges(graph)
    assert main(["reach", "entry", "caf\u00e9", "--root", str(root), "--no-cache"]) == 0


def test_symlink_loop_is_skipped(tmp_path, capsys):
    root = _tree(tmp_path, {"good.py": GOOD})
    os.symlink("b.py", root / "a.py")
    os.symlink("a.py", root / "b.py")
    os.symlink("missing.py", root / "dangling.py")
    code, graph, err = _export(root, tmp_path, capsys)
    assert code == 0, err
    assert "skipping a.py: symbolic link loop" in err and "skipping b.py: symbolic link loop" in err
    assert "skipping dangling.py: symbolic link to nowhere" in err
    assert ("good.top", "good.leaf") in _edges(graph)


def test_unreadable_folder_is_named(tmp_path, capsys, monkeypatch):
    root = _tree(tmp_path, {"good.py": GOOD, "locked/hidden.py": GOOD})
    real = os.scandir

    def scandir(path="."):  # as a chmod 000 folder answers a non-root user
        if Path(path) == root / "locked":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    code, graph, err = _export(root, tmp_path, capsys)
    assert code == 0, err
    assert "skipping locked: cannot list the folder (Permission denied)" in err
    assert ("good.top", "good.leaf") in _edges(graph)


def test_call_too_deep_is_left_unresolved_and_the_export_goes_on(tmp_path, capsys):
    deep = "from good import leaf\n\ndef g():\n    return g\n\ndef deep():\n    return g" + "()" * 2500 + "\n"
    root = _tree(tmp_path, {"good.py": GOOD, "deep.py": deep})
    code, graph, err = _export(root, tmp_path, capsys)
    assert code == 0, err
    assert f"deep.py:7:11: {TOO_DEEP}; left unresolved" in err
    assert err.count("left unresolved") == 1  # one warning a site, however many calls nest there
    rows = [u for u in graph["unresolved"] if u["caller"] == "deep.deep"]
    assert rows and all(u["why"] == TOO_DEEP for u in rows)
    assert ("good.top", "good.leaf") in _edges(graph)


def test_name_too_deep_never_reads_as_unreachable(tmp_path, capsys):
    """600 alternating `y = x; x = y` overflow the flow walk; the call `x()` is not analysed, so
    the verdict must not be unreachable (the name bound alone would dismiss a local's call)."""
    body = "".join("    y = x\n    x = y\n" for _ in range(600))
    root = _tree(tmp_path, {"m.py": f"def leaf():\n    pass\n\ndef top():\n    x = leaf\n{body}    x()\n"
                                    f"\n\ndef other():\n    leaf()\n"})
    code = main(["reach", "top", "leaf", "--root", str(root), "--no-cache", "--json"])
    out, err = capsys.readouterr()
    assert code == 2, err
    proof = json.loads(out)
    assert [u["why"] for u in proof["unresolved"]] == [TOO_DEEP]
    code, graph, err = _export(root, tmp_path, capsys)
    assert code == 0, err
    assert ("m.other", "m.leaf") in _edges(graph)
    assert any(u["why"] == TOO_DEEP for u in graph["unresolved"])


@pytest.mark.parametrize("line", ["type Alias = list[int]", "def first[T](xs: list[T]) -> T: ...",
                                  "class Box[T]: ..."])
def test_newer_syntax_is_named(line, tmp_path, capsys):
    """PEP 695 syntax on a Python before 3.12: the warning says why, not only 'invalid syntax'."""
    import sys

    root = _tree(tmp_path, {"good.py": GOOD, "new.py": line + "\n"})
    code, graph, err = _export(root, tmp_path, capsys)
    assert code == 0, err
    if sys.version_info < (3, 12):
        assert "skipping new.py: syntax error at line 1: " in err, err
        assert "(type parameter syntax, PEP 695, needs Python 3.12; callgraph runs on 3." in err, err
    else:
        assert "skipping new.py" not in err, err
