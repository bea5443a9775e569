"""What the user sees when callgraph itself fails: one line, a log file, and never a verdict.

An unexpected exception is a bug in callgraph (or a resource running out), not an answer about
the tree, so `cli.main` ends it with exit 4 (`ExitCode.INTERNAL`) and the line
`callgraph: internal error: ...; please report`. The traceback goes to stderr under `--debug`,
otherwise to a log file that the line names, so the report can carry it.
"""
from __future__ import annotations

import os
import tempfile
import time
import traceback
from pathlib import Path

#: The longest exception text quoted on the one line; the log file has it whole.
MAX_MESSAGE = 200

_HINTS = {
    RecursionError: "the analysis went deeper than Python's recursion limit",
    MemoryError: "out of memory",
}


def summary(exc: BaseException) -> str:
    """`Type: message` on one line, cut to MAX_MESSAGE characters."""
    text = " ".join(str(exc).split())
    if len(text) > MAX_MESSAGE:
        text = text[:MAX_MESSAGE - 1] + "…"
    name = type(exc).__name__
    hint = next((h for cls, h in _HINTS.items() if isinstance(exc, cls)), None)
    head = f"{hint} ({name})" if hint else name
    return f"{head}: {text}" if text else head


def write_log(exc: BaseException, argv: list[str] | None) -> Path | None:
    """The traceback and command line in a fresh file; None when no folder takes it."""
    from .cache import default_dir

    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    body = (f"command: callgraph {' '.join(argv or [])}\n"
            + "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    for folder in (default_dir() / "crashes", Path(tempfile.gettempdir())):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"callgraph-crash-{stamp}-{os.getpid()}.log"
            path.write_text(body, encoding="utf-8")
            return path
        except (OSError, MemoryError):
            continue
    return None


def internal_error_line(exc: BaseException, argv: list[str] | None, debug: bool) -> str:
    """The one line; writes the log file unless the traceback is already on stderr."""
    where = ""
    if not debug:
        log = write_log(exc, argv)
        where = f" (traceback in {log})" if log else " (run with --debug for the traceback)"
    return f"callgraph: internal error: {summary(exc)}{where}; please report"
