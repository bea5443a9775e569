"""No failure may read as a verdict: every command maps an unexpected exception to exit 4 with
one line, Ctrl-C to 130, a full disk to 3 (callgraph/exit_codes.py, callgraph/crash.py)."""
from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from callgraph import cli as cli_module
from callgraph.cli import SUBCOMMANDS, ExitCode, cli, main
from callgraph.errors import NameNotFound
from callgraph.exit_codes import DOCUMENTED

REPO = Path(__file__).resolve().parent.parent

# Arguments that get past click's parsing to each command's body.
ARGV = {
    "reach": ["reach", "A", "B"],
    "graph": ["graph", "A", "-o", "out.svg"],
    "check": ["check"],
    "dump": ["dump", "--model", "m", "--data", "d.jsonl", "--out", "o"],
    "export": ["export", "-o", "out.json"],
    "callers": ["callers", "T"],
    "callees": ["callees", "E"],
    "cache": ["cache", "info"],
}


def _inject(monkeypatch, name: str, exc: BaseException) -> None:
    """Replace the body of command `name` (for a group: of the subcommand ARGV names, or of the
    group itself when ARGV runs it without one, as `dump --model ...` does)."""
    cmd = cli.get_command(None, name)
    if cmd is None:
        pytest.skip(f"{name}: not available here")
    if hasattr(cmd, "get_command") and not ARGV[name][1].startswith("-"):
        cmd = cmd.get_command(None, ARGV[name][1])

    def boom(*args, **kwargs):
        raise exc

    monkeypatch.setattr(cmd, "callback", boom)


def test_every_command_is_covered():
    assert set(SUBCOMMANDS) <= set(ARGV)


def test_internal_code_is_not_a_verdict():
    assert ExitCode.INTERNAL == 4 and ExitCode.INTERRUPTED == 130
    assert ExitCode.INTERNAL not in {ExitCode.REACHED, ExitCode.UNREACHABLE, ExitCode.UNKNOWN,
                                     ExitCode.ERROR}
    assert cli_module.ExitCode is ExitCode  # still importable from the CLI


@pytest.mark.parametrize("name", sorted(ARGV))
@pytest.mark.parametrize("exc", [RuntimeError("boom"), MemoryError(), RecursionError("deep"),
                                 KeyError("k"), OSError(errno.EIO, "I/O error")],
                         ids=["RuntimeError", "MemoryError", "RecursionError", "KeyError", "EIO"])
def test_unexpected_exception_exits_internal(name, exc, monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("CALLGRAPH_DEBUG", raising=False)
    _inject(monkeypatch, name, exc)
    code = main(ARGV[name])
    out, err = capsys.readouterr()
    assert code == ExitCode.INTERNAL, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("callgraph: internal error: "), err
    assert lines[0].endswith("; please report") and type(exc).__name__ in lines[0]
    assert "Traceback" not in err
    log = Path(lines[0].split("(traceback in ", 1)[1].split(")", 1)[0])
    assert log.parent == tmp_path / "callgraph" / "crashes"
    text = log.read_text()
    assert "Traceback" in text and f"callgraph {' '.join(ARGV[name])}" in text


@pytest.mark.parametrize("name", sorted(ARGV))
def test_debug_prints_the_traceback(name, monkeypatch, capsys):
    _inject(monkeypatch, name, ZeroDivisionError("injected"))
    code = main(["--debug", *ARGV[name]])
    err = capsys.readouterr().err
    assert code == ExitCode.INTERNAL
    assert "Traceback" in err and "ZeroDivisionError: injected" in err
    assert err.strip().splitlines()[-1].startswith("callgraph: internal error: ZeroDivisionError")
    assert "traceback in" not in err


@pytest.mark.parametrize("name", sorted(ARGV))
def test_ctrl_c_exits_130(name, monkeypatch, capsys):
    _inject(monkeypatch, name, KeyboardInterrupt())
    assert main(ARGV[name]) == 130
    assert capsys.readouterr().err.strip() == "callgraph: interrupted"


@pytest.mark.parametrize("name", sorted(ARGV))
@pytest.mark.parametrize("exc, code", [
    (OSError(errno.ENOSPC, "No space left on device", "/full/out.json"), ExitCode.ERROR),
    (NameNotFound("no function named X"), ExitCode.ERROR),
    (EOFError(), ExitCode.INTERNAL),  # click wraps it as an Abort; we never prompt
], ids=["ENOSPC", "CallgraphError", "EOFError"])
def test_environment_and_user_errors(name, exc, code, monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    _inject(monkeypatch, name, exc)
    assert main(ARGV[name]) == code
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    if isinstance(exc, OSError):
        assert err == "callgraph: error: /full/out.json: No space left on device"


def test_documented_codes():
    assert DOCUMENTED == {0, 1, 2, 3, 4, 5, 130}
    text = (REPO / "docs" / "reach.md").read_text()
    for code in DOCUMENTED:
        assert f"| {code} |" in text, code
    ci = (REPO / "docs" / "ci.md").read_text()  # the gate's table: every code check may end with
    for code in DOCUMENTED - {0}:
        assert f"| {code} |" in ci, code
    assert ExitCode.NOT_CHECKED not in {ExitCode.REACHED, ExitCode.UNREACHABLE, ExitCode.UNKNOWN,
                                        ExitCode.ERROR, ExitCode.INTERNAL}


def test_a_crash_deep_in_the_analysis(monkeypatch, capsys, tmp_path):
    """Not only a command's body: a failure inside the index (here: the parser) also exits 4."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text("def f():\n    g()\n\ndef g():\n    pass\n")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    import callgraph.index.project as project

    def broken(*args, **kwargs):
        raise AssertionError("an invariant of the index broke")

    monkeypatch.setattr(project, "compact", broken)
    for argv in (["reach", "f", "g"], ["export", "-o", str(tmp_path / "g.json")]):
        code = main([*argv, "--root", str(tmp_path / "pkg"), "--no-cache"])
        err = capsys.readouterr().err
        assert code == ExitCode.INTERNAL, err
        assert "callgraph: internal error: AssertionError: an invariant of the index broke" in err


def test_console_entry_point(tmp_path):
    """The installed entry point (`entry`, which leaves with os._exit) keeps the code."""
    env = dict(os.environ, PYTHONPATH=str(REPO), XDG_CACHE_HOME=str(tmp_path))
    env.pop("CALLGRAPH_DEBUG", None)
    script = ("import sys, callgraph.cli as c\n"
              "cmd = c.cli.get_command(None, 'reach')\n"
              "def boom(*a, **k): raise RuntimeError('injected')\n"
              "cmd.callback = boom\n"
              "sys.argv = ['callgraph', 'reach', 'A', 'B']\n"
              "c.entry()\n")
    run = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 4, run.stderr
    assert run.stderr.startswith("callgraph: internal error: RuntimeError: injected (traceback in ")
    assert "Traceback" not in run.stderr
