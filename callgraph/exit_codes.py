"""The exit codes of every command, in one leaf module that anything may import.

A verdict and a failure must never share a code: a CI gate or a script reads the code alone, so
a crash that exited 1 would read as "unreachable". Verdicts use 0-2, a user's mistake 3, a bug
in callgraph 4, a gate that checked nothing 5 (pytest's "no tests ran"), an interrupt 130 (the
shell's 128 + SIGINT). docs/reach.md lists them.
"""
from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    REACHED = 0
    OK = 0
    UNREACHABLE = 1
    BROKEN = 1
    UNKNOWN = 2
    ERROR = 3  # bad input or environment: one line naming what to fix
    INTERNAL = 4  # an unexpected exception: a bug to report, never a verdict
    NOT_CHECKED = 5  # `check --patch` checked no function, or could not place a hunk
    INTERRUPTED = 130  # Ctrl-C


#: Every code a command may end with; the fuzz tests check nothing else comes out.
DOCUMENTED = frozenset(int(code) for code in ExitCode)
