"""Patch mode: which functions does a unified diff touch in the analysed (unpatched) tree?

The gate runs *before* `git apply`, so the tree is the diff's old side: removed lines are old
line numbers, and an insertion is placed between two old lines. A touched function is the
innermost def containing a removed line, or the def both neighbours of an inserted block belong
to (an indented block appended at the end of a body counts for that body; a new `def`/`class`
between two functions touches neither). Diff paths are matched to the roots whatever the diff's
base folder was (`git diff` from the upstream repo root writes `a/python/sglang/...`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import CallgraphError

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_NEW_DEF = re.compile(r"^\s*(?:async\s+def|def|class)\s|^\s*@")


class PatchError(CallgraphError):
    """A --patch file that cannot be read or holds no unified diff."""


@dataclass
class FileChange:
    """Touched old-side lines of one file: removed lines and insertion points."""

    old_path: str | None                         # None for a new file
    new_path: str | None
    removed: list[int] = field(default_factory=list)
    inserted: list[tuple[int, int, str]] = field(default_factory=list)  # (prev, next, first line)


def read_patch(path: Path) -> list[FileChange]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise PatchError(f"{path}: cannot read the patch: {exc.strerror}") from None
    changes = parse_diff(text)
    if not changes:
        raise PatchError(f"{path}: no unified diff found (expected ---/+++ file headers and @@ hunks)")
    return changes


def parse_diff(text: str) -> list[FileChange]:
    changes: list[FileChange] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            changes.append(FileChange(_path(line[4:]), _path(lines[i + 1][4:])))
            i += 2
            continue
        m = _HUNK.match(line)
        if m and changes:
            i = _hunk(lines, i + 1, int(m[1]), int(m[2] or 1), int(m[4] or 1), changes[-1])
            continue
        i += 1
    return changes


def _hunk(lines: list[str], i: int, old: int, old_left: int, new_left: int, fc: FileChange) -> int:
    block: list[str] = []
    while i < len(lines) and (old_left > 0 or new_left > 0):
        line = lines[i]
        tag = line[:1]
        if tag == "\\":            # "\ No newline at end of file"
            i += 1
            continue
        if tag == "+":
            block.append(line[1:])
            new_left -= 1
        else:
            _flush(block, old, fc)
            block = []
            if tag == "-":
                fc.removed.append(old)
            elif tag not in (" ", ""):
                break
            else:
                new_left -= 1
            old += 1
            old_left -= 1
        i += 1
    _flush(block, old, fc)
    return i


def _flush(block: list[str], next_old: int, fc: FileChange) -> None:
    text = next((b for b in block if b.strip()), None)
    if text is not None:
        fc.inserted.append((next_old - 1, next_old, text))


def _path(header: str) -> str | None:
    name = header.split("\t")[0].strip()
    return None if name == "/dev/null" else name


def touched_functions(changes: list[FileChange], an: Any, cwd: Path):
    """-> ({qualname: [site "path:line", ...]}, [notes about what was skipped])."""
    touched: dict[str, list[str]] = {}
    notes: list[str] = []
    roots = [Path(r) for r in getattr(an, "roots", ())]
    for fc in changes:
        if fc.old_path is None:
            notes.append(f"{fc.new_path}: new file; nothing in the analysed tree to reach")
            continue
        rel = _match(fc.old_path, roots, cwd)
        if rel is None:
            notes.append(f"{fc.old_path}: not under the analysed roots; skipped")
            continue
        lines, outside = _lines(fc, an, rel)
        notes += [f"{rel}:{line}: change outside any function" for line in outside]
        for line in lines:
            q = an.function_at(rel, line)
            if q is None:
                notes.append(f"{rel}:{line}: change outside any function")
            else:
                touched.setdefault(q, []).append(f"{rel}:{line}")
    return touched, notes


def _lines(fc: FileChange, an: Any, rel: str) -> tuple[list[int], list[int]]:
    """-> (old lines whose function is touched, insertion points outside any function)."""
    out = list(fc.removed)
    outside = []
    for prev, nxt, first in fc.inserted:
        before = an.function_at(rel, prev) if prev >= 1 else None
        after = an.function_at(rel, nxt)
        if before is not None and before == after:
            out.append(prev)
        elif before is not None and not _NEW_DEF.match(first) and first[:1].isspace():
            out.append(prev)       # an indented block appended at the end of a body
        else:
            outside.append(max(prev, 1))
    return sorted(set(out)), sorted(set(outside))


def _match(diff_path: str, roots: list[Path], cwd: Path) -> str | None:
    """The diff path relative to an import root: as given or minus a/ b/, else by longest suffix."""
    parts = Path(diff_path).parts
    for k in range(len(parts)):
        candidate = Path(*parts[k:])
        if k < 2 and (cwd / candidate).is_file():
            absolute = (cwd / candidate).resolve()
            for root in roots:
                if absolute.is_relative_to(root.resolve()):
                    return absolute.relative_to(root.resolve()).as_posix()
        for root in roots:
            if (root / candidate).is_file():
                return candidate.as_posix()
    return None
