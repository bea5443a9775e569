"""Run `callgraph check` in-process, from a chosen folder, on the session's analysis cache."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from gate_helpers import REPO

from callgraph.cli import main

@pytest.fixture
def check(capsys, analysis_cache):
    """`check(*args, cwd=folder) -> (exit code, stdout, stderr)`; one disk cache per session."""

    def run(*args: str, cwd: Path = REPO):
        before = os.getcwd()
        os.chdir(cwd)
        try:
            code = main(["check", "--cache-dir", str(analysis_cache), *map(str, args)])
        finally:
            os.chdir(before)
        out = capsys.readouterr()
        return code, out.out, out.err

    return run
