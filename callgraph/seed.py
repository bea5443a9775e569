"""The fixed string hash seed every command runs under (PYTHONHASHSEED=0)."""
from __future__ import annotations

import os
import sys


def reproducible() -> None:
    """Run again under a fixed string hash seed (PYTHONHASHSEED=0) unless one is set.

    The analysis iterates over sets of values, whose order follows string hashes, which
    Python salts afresh in every process; where inference stops at a depth limit, that order
    decides a few answers (docs/export.md, "Memo history"). Under a fixed seed two runs give
    the same graph, the same witness paths and the same rows. The re-run costs one exec
    before anything is imported; an explicit PYTHONHASHSEED (even "random") is respected."""
    if "PYTHONHASHSEED" in os.environ or not getattr(sys, "orig_argv", None):
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(sys.executable, sys.orig_argv, dict(os.environ, PYTHONHASHSEED="0"))
    except OSError:
        return  # run as we are: the results are as correct, only not byte-identical run to run
