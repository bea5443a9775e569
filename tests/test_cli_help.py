"""Issue 16: help text on every option, `python -m callgraph` works."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click

from callgraph.cli import SUBCOMMANDS, cli

REPO = Path(__file__).resolve().parent.parent


def _walk(cmd: click.Command, path: tuple[str, ...] = ()):
    yield path, cmd
    if isinstance(cmd, click.Group):
        ctx = click.Context(cmd)
        for name in cmd.list_commands(ctx):
            yield from _walk(cmd.get_command(ctx, name), path + (name,))


def test_every_command_and_option_has_help():
    seen, missing = set(), []
    for path, cmd in _walk(cli):
        seen.add(path[:1])
        where = " ".join(("callgraph",) + path)
        if not (cmd.help or cmd.short_help):
            missing.append(f"{where}: no help")
        for p in cmd.params:
            if isinstance(p, click.Option) and not p.hidden and not (p.help or "").strip():
                missing.append(f"{where} {'/'.join(p.opts)}: no help")
    assert not missing, "\n".join(missing)
    assert {(name,) for name in SUBCOMMANDS} <= seen  # every command was walked (dump included)


def test_python_dash_m_callgraph():
    env = dict(os.environ, PYTHONPATH=str(REPO))
    got = subprocess.run([sys.executable, "-m", "callgraph", "reach", "KimiK25ForConditionalGeneration",
                          "DeepseekV2Model", "--root",
                          str(REPO / "fixtures" / "trees" / "sglang_mini" / "python" / "sglang" / "srt"),
                          "--no-cache"], capture_output=True, text=True, env=env, timeout=120)
    assert got.returncode == 0, got.stderr
    assert got.stdout.startswith("reached: KimiK25ForConditionalGeneration.forward → DeepseekV2Model.forward")
    bad = subprocess.run([sys.executable, "-m", "callgraph", "nosuchcommand"], capture_output=True,
                         text=True, env=env, timeout=60)
    assert bad.returncode == 3 and "Traceback" not in bad.stderr
