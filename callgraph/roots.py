"""Where the analysed source lives, and what Python would call each file.

Real trees use namespace packages: SGLang's `sglang/srt` and its subfolders have no
`__init__.py`, so walking up `__init__.py` files cannot find the import root. The tree says it
itself: files under `.../sglang/srt` import `sglang.srt.…`. We pick the ancestor of the given
folder under which the most of those absolute imports exist as files.
"""
from __future__ import annotations

import ast
import importlib.util
import os
import re
from dataclasses import dataclass
from pathlib import Path

from .errors import RootError

# Ancestors above a given root that may be the import root, and files sampled to decide.
MAX_ROOT_CLIMB = 4
SAMPLE_FILES = 60
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


def python_files(folder: Path) -> list[Path]:
    """Every .py file under folder, sorted, skipping caches and virtual environments."""
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        out.extend(Path(dirpath) / f for f in sorted(filenames) if f.endswith(".py"))
    return out


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
    names = _sample_imports(folder)
    best, best_score = regular, -1
    for cand in candidates:
        score = sum(1 for n in names if _module_exists(cand, n))
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
    for path in python_files(folder)[:SAMPLE_FILES]:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for m in _IMPORT_RE.finditer(text):
            name = m.group(1) or m.group(2)
            if name and "." in name:
                names.append(name)
    return names


def _module_exists(base: Path, dotted: str) -> bool:
    rel = Path(*dotted.split("."))
    return (base / rel).with_suffix(".py").is_file() or (base / rel / "__init__.py").is_file() or (
        (base / rel).is_dir() and len(rel.parts) > 1
    )


def parse_bytes(data: bytes, filename: str = "<unknown>") -> tuple[ast.Module | None, str | None]:
    """Parse source bytes; the reason comes back in the words every warning uses."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 (byte {exc.start})"
    try:
        return ast.parse(text, filename=filename), None
    except SyntaxError as exc:
        return None, f"syntax error at line {exc.lineno}: {exc.msg}"
    except (ValueError, RecursionError) as exc:
        return None, f"cannot parse: {exc}"
