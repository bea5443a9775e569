"""Where the analysed source lives, and what Python would call each file.

Real trees use namespace packages: SGLang's `sglang/srt` and its subfolders have no
`__init__.py`, so walking up `__init__.py` files cannot find the import root. The tree says it
itself: files under `.../sglang/srt` import `sglang.srt.…`. We pick the ancestor of the given
folder under which the most of those absolute imports exist as files.
"""
from __future__ import annotations

import ast
import collections
import importlib.util
import io
import itertools
import os
import re
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from .errors import RootError

# Ancestors above a given root that may be the import root, and files sampled to decide.
MAX_ROOT_CLIMB = 4
SAMPLE_FILES = 60
# Files larger than this are skipped with a warning. Memory grows with a file's size: a
# generated 5 MB file of 116k functions peaks at 1.07 GB in `export` (measured at bb6c576), a
# 50 MB one took 11.5 GB (issue 17), so 8 MB keeps one file under 2 GB; the largest file of
# SGLang, transformers and vLLM is 0.32 MB. --max-file-mb / `max_file_mb` change it.
MAX_FILE_MB = 8.0
SKIP_DIRS = {"__pycache__", ".git", ".hg", ".tox", ".venv", "venv", "node_modules", ".mypy_cache"}

_IMPORT_RE = re.compile(r"^\s*(?:from\s+([A-Za-z_][\w.]*)\s+import|import\s+([A-Za-z_][\w.]*))", re.M)


@dataclass(frozen=True)
class SourceRoot:
    """A folder given by the user (`scope`) and the import root its module names start from."""

    scope: Path
    import_root: Path

    def module_name(self, path: Path) -> str:
        rel = path.relative_to(self.import_root).with_suffix("")
        parts = list(rel.parts)
        if parts and parts[-1] == "__init__":
            parts.pop()
        return ".".join(parts)

    def display(self, path: Path) -> str:
        """A path relative to the import root, as call sites print it."""
        try:
            return path.relative_to(self.import_root).as_posix()
        except ValueError:
            return path.as_posix()


def too_big(path: Path, max_mb: float | None) -> str | None:
    """Why a file is skipped for its size, or None (also when it cannot be stat'ed: the read
    that follows says why)."""
    if max_mb is None:
        return None
    try:
        size = path.stat().st_size
    except OSError:
        return None
    if size <= max_mb * 1e6:
        return None
    return (f"{size / 1e6:.1f} MB is over the file-size limit of {max_mb:g} MB "
            f"(raise it with --max-file-mb, or max_file_mb in [callgraph])")


def python_files(folder: Path, skipped: Callable[[Path, str], None] | None = None,
                 max_mb: float | None = None) -> list[Path]:
    """Every .py file under folder, sorted, skipping caches and virtual environments.

    A folder that cannot be listed and a link that leads nowhere (a loop `a.py -> b.py ->
    a.py`, a dangling target) are skipped and handed to `skipped(path, why)` for a warning:
    each would otherwise fail later, at a `Path.resolve` or a read, far from the file's name."""
    return list(_walk_python_files(folder, skipped, max_mb))


def _walk_python_files(folder: Path, skipped: Callable[[Path, str], None] | None = None,
                       max_mb: float | None = None) -> Iterator[Path]:
    """`python_files` one at a time, in its order (a caller that needs the first few stops early)."""

    def unlisted(exc: OSError) -> None:
        if skipped is not None:
            skipped(Path(exc.filename), f"cannot list the folder ({exc.strerror or exc})")

    for dirpath, dirnames, filenames in os.walk(folder, onerror=unlisted):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        for f in sorted(filenames):
            if not f.endswith(".py"):
                continue
            path = Path(dirpath) / f
            if path.is_symlink():
                problem = _broken_link(path)
                if problem is not None:
                    if skipped is not None:
                        skipped(path, problem)
                    continue
            problem = too_big(path, max_mb)
            if problem is not None:
                if skipped is not None:
                    skipped(path, problem)
                continue
            yield path


def _broken_link(path: Path) -> str | None:
    try:
        path.resolve(strict=True)
    except RuntimeError:  # Python < 3.13 reports a loop so
        return "symbolic link loop"
    except OSError as exc:
        return f"symbolic link to nowhere ({exc.strerror or exc})"
    return None


def find_roots(roots: list[str] | tuple[str, ...], package: str | None) -> list[SourceRoot]:
    """Turn --root / --package / nothing into source roots, or raise RootError."""
    folders: list[Path] = [Path(r) for r in roots]
    if package:
        folders.append(_package_dir(package))
    if not folders:
        folders.append(Path.cwd())
    out = []
    for folder in folders:
        if not folder.exists():
            raise RootError(f"root {folder} does not exist")
        if folder.is_file():
            raise RootError(f"root {folder} is a file; give the folder that holds the source")
        folder = folder.resolve()
        out.append(SourceRoot(scope=folder, import_root=import_root_of(folder)))
    return out


def _package_dir(name: str) -> Path:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError) as exc:
        raise RootError(f"package {name!r} cannot be found: {exc}") from None
    if spec is None:
        raise RootError(f"package {name!r} is not installed in this Python ({os.sys.executable})")
    locations = list(spec.submodule_search_locations or [])
    if locations:
        return Path(locations[0])
    if spec.origin:
        return Path(spec.origin).parent
    raise RootError(f"package {name!r} has no source folder")


def import_root_of(folder: Path) -> Path:
    """The folder that module names are relative to, found from the tree's own imports."""
    candidates = [folder]
    for _ in range(MAX_ROOT_CLIMB):
        if candidates[-1].parent == candidates[-1]:
            break
        candidates.append(candidates[-1].parent)
    regular = _above_regular_packages(folder)
    names = collections.Counter(_sample_imports(folder))  # each name looked up once a candidate
    best, best_score = regular, -1
    for cand in candidates:
        base = str(cand)
        score = sum(count for n, count in names.items() if _module_exists(base, n))
        # Prefer the deeper candidate on ties: fewer surprises than climbing.
        if score > best_score:
            best, best_score = cand, score
    if best_score <= 0:
        return regular
    return best


def _above_regular_packages(folder: Path) -> Path:
    cur = folder
    while (cur / "__init__.py").exists() and cur.parent != cur:
        cur = cur.parent
    return cur


def _sample_imports(folder: Path) -> list[str]:
    names: list[str] = []
    for path in itertools.islice(_walk_python_files(folder), SAMPLE_FILES):  # not the whole tree's walk
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for m in _IMPORT_RE.finditer(text):
            name = m.group(1) or m.group(2)
            if name and "." in name:
                names.append(name)
    return names


def _module_exists(base: str, dotted: str) -> bool:
    parts = dotted.split(".")
    here = os.path.join(base, *parts)  # os.path, not pathlib: 2,190 lookups were 0.34 s
    return os.path.isfile(here + ".py") or os.path.isfile(os.path.join(here, "__init__.py")) or (
        len(parts) > 1 and os.path.isdir(here)
    )


# PEP 695 (Python 3.12): `type X = ...`, `def f[T](...)`, `class C[T]:`; older parsers say
# only "invalid syntax" there.
_PEP695 = re.compile(r"^\s*(?:type\s+\w+\s*(?:\[[^\]]*\])?\s*=|(?:async\s+)?def\s+\w+\s*\[|class\s+\w+\s*\[)")


def _newer_syntax(exc: SyntaxError) -> str:
    """A hint where a file uses syntax newer than the Python running callgraph."""
    if sys.version_info < (3, 12) and exc.text and _PEP695.match(exc.text):
        return (f" (type parameter syntax, PEP 695, needs Python 3.12; callgraph runs on "
                f"{sys.version_info.major}.{sys.version_info.minor})")
    return ""


def decode_source(data: bytes) -> str:
    """Source bytes as Python reads them: a BOM or a PEP 263 coding cookie (`# -*- coding:
    latin-1 -*-`) names the encoding, else UTF-8. Raises UnicodeDecodeError, or SyntaxError
    for an unknown encoding name."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return data.decode("utf-8-sig" if encoding == "utf-8-sig" else encoding)


def parse_bytes(data: bytes, filename: str = "<unknown>") -> tuple[ast.Module | None, str | None]:
    """Parse source bytes; the reason comes back in the words every warning uses.

    Any failure is the file's, never the run's: besides syntax errors, CPython's parser raises
    MemoryError on deep nesting (100k unary minus, `lambda:` 3,000 times), RecursionError,
    ValueError (null bytes before 3.12) and LookupError (an unknown codec)."""
    text, problem = decoded(data)
    if text is None:
        return None, problem
    return parse_text(text, filename)


def decoded(data: bytes) -> tuple[str | None, str | None]:
    """`decode_source`, with the reason in the words every warning uses instead of a raise."""
    try:
        return decode_source(data), None
    except UnicodeDecodeError as exc:
        return None, f"cannot decode as {exc.encoding} (byte {exc.start})"
    except (SyntaxError, LookupError) as exc:  # an unknown or malformed coding cookie
        return None, f"bad encoding declaration: {getattr(exc, 'msg', None) or exc}"


def parse_text(text: str, filename: str = "<unknown>") -> tuple[ast.Module | None, str | None]:
    """Parse decoded source (`parse_bytes` after decoding); the reason as every warning says it."""
    try:
        return ast.parse(text, filename=filename), None
    except SyntaxError as exc:
        where = f" at line {exc.lineno}" if exc.lineno else ""
        return None, f"syntax error{where}: {exc.msg}{_newer_syntax(exc)}"
    except MemoryError:
        return None, "too deeply nested for Python's parser (MemoryError)"
    except RecursionError:
        return None, "too deeply nested for Python's parser (RecursionError)"
    except Exception as exc:  # noqa: BLE001 - ValueError and whatever a parser may raise
        return None, f"cannot parse ({type(exc).__name__}: {exc})"
