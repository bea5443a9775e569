"""Writing a picture to disk: DOT text directly, SVG and PNG through Graphviz's `dot`.

Atomic by construction: the output goes to a temporary file in the destination folder and is
renamed over the destination only when complete, so a failed or interrupted render never leaves
a partial picture (or clobbers a good one). Graphviz is looked up before any work, so a missing
binary is a one-line error saying how to install it, not a traceback.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import RenderError

if TYPE_CHECKING:  # pragma: no cover
    import pydot

# Output suffix -> Graphviz `-T` format (None: the DOT text itself, no Graphviz needed).
FORMATS = {".dot": None, ".gv": None, ".svg": "svg", ".png": "png"}
# PNG resolution: Graphviz's default 96 dpi blurs the 9-10 pt edge labels.
PNG_DPI = 144
# Longest a single Graphviz run may take; a capped picture renders in well under a second.
DOT_TIMEOUT_S = 120
INSTALL_HINT = ("install Graphviz (Debian/Ubuntu: apt-get install graphviz; macOS: brew install "
                "graphviz; conda: conda install graphviz) or write a .dot file instead")


def output_format(out: Path | str, dot_binary: str | None = None) -> str | None:
    """Check an output path before any analysis runs; return its Graphviz format (None: DOT).

    Raises RenderError for an unknown suffix, a missing folder, or (for .svg/.png) a missing
    Graphviz, so a long analysis is not wasted on a picture that cannot be written.
    """
    out = Path(out)
    suffix = out.suffix.lower()
    if suffix not in FORMATS:
        raise RenderError(f"{out}: unknown picture format {suffix or '(no suffix)'!r}; "
                          "use a file name ending in .dot, .svg or .png")
    if not out.parent.is_dir():
        raise RenderError(f"{out}: folder {out.parent} does not exist")
    fmt = FORMATS[suffix]
    if fmt is not None:
        find_dot(dot_binary)
    return fmt


def find_dot(dot_binary: str | None = None) -> str:
    """The Graphviz `dot` executable: `dot_binary` if given, else `dot` on $PATH."""
    found = shutil.which(dot_binary or "dot")
    if found is None:
        what = f"Graphviz binary {dot_binary!r}" if dot_binary else "Graphviz's `dot`"
        raise RenderError(f"{what} was not found on PATH, needed for .svg/.png; {INSTALL_HINT}")
    return found


def write(graph: "pydot.Dot", out: Path | str, dot_binary: str | None = None) -> Path:
    """Write `graph` to `out` (.dot, .gv, .svg or .png by suffix), atomically; return the path."""
    out = Path(out)
    fmt = output_format(out, dot_binary)
    text = graph.to_string()
    if fmt is None:
        return _atomic(out, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    binary = find_dot(dot_binary)
    return _atomic(out, lambda tmp: _graphviz(binary, fmt, text, tmp, out))


def _graphviz(binary: str, fmt: str, text: str, tmp: Path, out: Path) -> None:
    try:
        extra = [f"-Gdpi={PNG_DPI}"] if fmt == "png" else []
        run = subprocess.run([binary, f"-T{fmt}", *extra, "-o", str(tmp)],
                             input=text.encode("utf-8"), capture_output=True,
                             timeout=DOT_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise RenderError(f"{out}: Graphviz took over {DOT_TIMEOUT_S}s; "
                          "lower --max-nodes or write a .dot file") from None
    except OSError as exc:
        raise RenderError(f"{out}: could not run Graphviz ({binary}): {exc.strerror}") from None
    if run.returncode != 0:
        lines = run.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RenderError(f"{out}: Graphviz failed (exit {run.returncode})"
                          + (f": {lines[0]}" if lines else ""))


def _atomic(out: Path, produce) -> Path:
    """Run `produce(tmp)` on a temp file beside `out`, then rename it over `out`."""
    try:
        fd, name = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    except OSError as exc:
        raise RenderError(f"{out}: cannot write in {out.parent}: {exc.strerror}") from None
    os.close(fd)
    tmp = Path(name)
    try:
        produce(tmp)
        _umask_mode(tmp)
        os.replace(tmp, out)
    except OSError as exc:
        raise RenderError(f"{out}: cannot write: {exc.strerror}") from None
    finally:
        if tmp.exists():
            tmp.unlink()
    return out


def _umask_mode(path: Path) -> None:
    """mkstemp makes 0600 files; give the picture the mode a plain open() would have."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)
