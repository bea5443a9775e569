"""Issue 17: a file over the size limit is skipped with a clear message, and the limit is
configurable (--max-file-mb, `max_file_mb` in the config). A generated 50 MB file took 11.5 GB
to analyse; here a small generated file and a low limit stand in for it. Skipping a file must
never make a verdict unsound: what it may call still counts."""
from __future__ import annotations

import pytest

from callgraph.cli import main

N = 3000  # functions in the generated file: about 0.1 MB


@pytest.fixture
def tree(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "main.py").write_text("from pkg.big import helper\n\n\ndef entry():\n    helper()\n")
    (pkg / "other.py").write_text("def target():\n    pass\n")
    body = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(N))
    (pkg / "big.py").write_text("from pkg.other import target\n\n\ndef helper():\n    target()\n\n\n" + body)
    return tmp_path


def _reach(tree, *extra):
    return main(["reach", "pkg.main.entry", "pkg.other.target", "--root", str(tree), "--no-cache", *extra])


def test_under_the_limit_the_file_is_analysed(tree, capsys):
    assert _reach(tree) == 0
    assert "size limit" not in capsys.readouterr().err


def test_over_the_limit_it_is_skipped_with_a_message_and_the_verdict_stays_honest(tree, capsys):
    size = (tree / "pkg" / "big.py").stat().st_size / 1e6
    assert 0.1 < size < 0.2
    assert _reach(tree, "--max-file-mb", "0.05") == 2  # unknown: never "unreachable"
    got = capsys.readouterr()
    assert (f"callgraph: warning: skipping pkg/big.py: {size:.1f} MB is over the file-size limit "
            f"of 0.05 MB (raise it with --max-file-mb, or max_file_mb in [callgraph])") in got.err
    assert got.err.count("skipping pkg/big.py") == 1
    assert "helper()" in got.out


def test_the_limit_from_the_config_and_in_every_command(tree, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tree)
    (tree / "setup.cfg").write_text("[callgraph]\nroots = .\nmax_file_mb = 0.05\n")
    assert main(["export", "-o", str(tmp_path / "g.json"), "--no-cache"]) == 0
    assert "skipping pkg/big.py" in capsys.readouterr().err
    assert "pkg.big.f1" not in (tmp_path / "g.json").read_text()
    assert main(["export", "-o", str(tmp_path / "g.json"), "--no-cache", "--max-file-mb", "1"]) == 0
    assert "size limit" not in capsys.readouterr().err  # the option overrides the config
    assert "pkg.big.f1" in (tmp_path / "g.json").read_text()
    (tree / "setup.cfg").write_text(
        "[callgraph]\nroots = .\nmax_file_mb = 0.05\n[callgraph:contract:c]\n"
        "entry = pkg.main.entry\ntarget = pkg.other.target\nexpect = reached\n")
    assert main(["check", "--no-cache"]) == 2  # the gate says unknown, not broken or kept
    assert "skipping pkg/big.py" in capsys.readouterr().err


def test_a_skipped_file_of_any_kind_keeps_the_verdict_honest(tree, capsys):
    """The same holds for a file skipped because it does not parse: its functions are neither
    external calls nor forgotten by the name bound, so the call into it stays unresolved."""
    big = tree / "pkg" / "big.py"
    big.write_text(big.read_text() + "x = (\n")
    assert _reach(tree) == 2
    out = capsys.readouterr().out
    assert "helper()" in out and "pkg/big.py was skipped (syntax error" in out


def test_the_default_limit_skips_a_file_that_would_cost_gigabytes(tree, tmp_path, capsys):
    """By default (roots.MAX_FILE_MB, 8 MB: a generated 5 MB file peaks at 1 GB) a 9 MB file
    is skipped unread."""
    from callgraph.roots import MAX_FILE_MB

    assert MAX_FILE_MB == 8
    (tree / "pkg" / "huge.py").write_text("# padding\n" * 900_000)
    assert main(["export", "--root", str(tree), "--no-cache", "-o", str(tmp_path / "g.json")]) == 0
    assert "skipping pkg/huge.py: 9.0 MB is over the file-size limit of 8 MB" in capsys.readouterr().err
