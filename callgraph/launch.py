"""The process start of the console script and `python -m callgraph`: fix the string hash
seed first, then run the command line.

Kept apart from `cli.py` so that the re-run under PYTHONHASHSEED=0 happens before click and
the commands are imported: the first process only starts Python and execs itself (a warm
`reach` answer costs two interpreter starts, not two imports of the command line)."""
from __future__ import annotations

from .seed import reproducible


def entry() -> None:  # pragma: no cover - console script shim
    reproducible()
    from .cli import entry as run

    run()
