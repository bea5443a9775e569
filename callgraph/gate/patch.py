"""Patch mode: which functions does a unified diff touch in the analysed (unpatched) tree?

The gate runs *before* `git apply`, so the tree is the diff's old side: removed lines are old
line numbers, and an insertion is placed between two old lines. A touched function is the
innermost def containing a removed line, or the def both neighbours of an inserted block belong
to (an indented block appended at the end of a body counts for that body; a new `def`/`class`
between two functions touches neither).

Paths are read as `git apply` does (`-p1`: git's `a/` and `b/` prefixes are stripped), then
matched to the analysed files whatever the diff's base folder was: a diff written from the
upstream repository root (`python/sglang/srt/models/x.py`) and one written inside the tree
(`models/x.py`) both find `sglang/srt/models/x.py`. Each hunk is placed by its content, as
`patch` does: at its stated line when the old side matches there, else at the nearest line
where it does (the tree moved on since the diff was written); a hunk whose old side is nowhere
in the file is reported as not checked, never guessed.
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
class Hunk:
    """One @@ hunk, by its old side: where it says it starts, and the lines it expects there."""

    start: int                                   # the old side's first line, as the header says
    old: list[str] = field(default_factory=list)  # context and removed lines, in order
    removed: list[int] = field(default_factory=list)   # offsets into `old`
    inserted: list[tuple[int, str]] = field(default_factory=list)  # (offset of the next old line, first line)


@dataclass
class FileChange:
    """The hunks of one file; `removed`/`inserted` are old-side lines where the header puts them."""

    old_path: str | None                         # None for a new file
    new_path: str | None
    hunks: list[Hunk] = field(default_factory=list)

    @property
    def removed(self) -> list[int]:
        return [h.start + k for h in self.hunks for k in h.removed]

    @property
    def inserted(self) -> list[tuple[int, int, str]]:  # (prev, next, first line)
        return [(h.start + k - 1, h.start + k, text) for h in self.hunks for k, text in h.inserted]


@dataclass
class Touched:
    """What a patch touches: {qualname: [site "path:line", ...]}, notes, and what was not checked."""

    functions: dict[str, list[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)  # hunks that could not be placed


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
            hunk = Hunk(int(m[1]))
            i = _hunk(lines, i + 1, int(m[2] or 1), int(m[4] or 1), hunk)
            changes[-1].hunks.append(hunk)
            continue
        i += 1
    return changes


def _hunk(lines: list[str], i: int, old_left: int, new_left: int, h: Hunk) -> int:
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
            _flush(block, len(h.old), h)
            block = []
            if tag == "-":
                h.removed.append(len(h.old))
            elif tag not in (" ", ""):
                break
            else:
                new_left -= 1
            h.old.append(line[1:])
            old_left -= 1
        i += 1
    _flush(block, len(h.old), h)
    return i


def _flush(block: list[str], next_old: int, h: Hunk) -> None:
    text = next((b for b in block if b.strip()), None)
    if text is not None:
        h.inserted.append((next_old, text))


def _path(header: str) -> str | None:
    """The path as `git apply -p1` reads it: git's a/ and b/ prefixes stripped."""
    name = header.split("\t")[0].strip()
    if name == "/dev/null":
        return None
    if name.startswith(("a/", "b/")):
        return name[2:]
    return name


def touched_functions(changes: list[FileChange], an: Any, cwd: Path) -> Touched:
    out = Touched()
    files = _analysed_files(an)
    for fc in changes:
        if fc.old_path is None:
            out.notes.append(f"{fc.new_path}: new file; nothing in the analysed tree to reach")
            continue
        found = _match(fc.old_path, files, cwd)
        if isinstance(found, list):
            out.notes.append(f"{fc.old_path}: matches {len(found)} analysed files "
                             f"({', '.join(found[:3])}{', ...' if len(found) > 3 else ''}); skipped")
            if fc.old_path.endswith(".py"):
                out.unchecked.append(f"{fc.old_path}: ambiguous path")
            continue
        if found is None:
            out.notes.append(f"{fc.old_path}: not under the analysed roots; skipped")
            continue
        rel, absolute = found
        lines, outside = _lines(fc, an, rel, _read_lines(absolute), out)
        for line in sorted(set(lines) | set(outside)):
            q = an.function_at(rel, line) if line in lines else None
            if q is None:
                out.notes.append(f"{rel}:{line}: change outside any function")
            else:
                out.functions.setdefault(q, []).append(f"{rel}:{line}")
    return out


def _read_lines(path: Path) -> list[str] | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None


def _place(h: Hunk, text: list[str] | None) -> int | None:
    """The old line the hunk starts at in this file: as stated if its old side is there, else
    the nearest start where it is (trailing whitespace ignored); None if it is nowhere."""
    if text is None or not h.old:
        return h.start
    want = [w.rstrip() for w in h.old]
    have = [t.rstrip() for t in text]

    def fits(start: int) -> bool:
        return have[start - 1:start - 1 + len(want)] == want

    if h.start >= 1 and fits(h.start):
        return h.start
    starts = [s for s in range(1, len(have) - len(want) + 2) if fits(s)]
    return min(starts, key=lambda s: (abs(s - h.start), s)) if starts else None


def _lines(fc: FileChange, an: Any, rel: str, text: list[str] | None, out: Touched):
    """-> (old lines whose function is touched, insertion points outside any function)."""
    lines, outside = [], []
    for h in fc.hunks:
        start = _place(h, text)
        if start is None:
            out.unchecked.append(f"{rel}: hunk @@ -{h.start} @@ does not match the tree "
                                 f"(its old lines are nowhere in the file)")
            continue
        if start != h.start:
            out.notes.append(f"{rel}: hunk @@ -{h.start} @@ found at line {start} "
                             f"(offset {start - h.start:+d})")
        lines += [start + k for k in h.removed]
        for k, first in h.inserted:
            prev, nxt = start + k - 1, start + k
            before = an.function_at(rel, prev) if prev >= 1 else None
            after = an.function_at(rel, nxt)
            if before is not None and before == after:
                lines.append(prev)
            elif before is not None and not _NEW_DEF.match(first) and first[:1].isspace():
                lines.append(prev)       # an indented block appended at the end of a body
            else:
                outside.append(max(prev, 1))
    return sorted(set(lines)), sorted(set(outside) - set(lines))


def _analysed_files(an: Any) -> list[tuple[str, Path]]:
    """(path relative to its import root, absolute path) of every Python file analysed."""
    roots = sorted((Path(r).resolve() for r in getattr(an, "roots", ())), key=lambda p: -len(p.parts))
    project = getattr(an, "project", None)
    if project is not None:
        paths = [p.resolve() for p in project.scope_files()]
    else:
        paths = [p.resolve() for r in roots for p in r.rglob("*.py")]
    out = []
    for p in paths:
        root = next((r for r in roots if p.is_relative_to(r)), None)
        if root is not None:
            out.append((p.relative_to(root).as_posix(), p))
    return out


def _match(diff_path: str, files: list[tuple[str, Path]], cwd: Path):
    """(rel, absolute) of the analysed file the diff path names; a list of rel paths when
    several match equally well; None when none does. The diff path is first read from the
    working folder; else the file whose path shares the longest tail with it wins."""
    here = (cwd / diff_path).resolve()
    for rel, absolute in files:
        if absolute == here:
            return rel, absolute
    parts = Path(diff_path).parts
    best, best_n = [], 0
    for rel, absolute in files:
        rparts = Path(rel).parts
        n = 0
        while n < min(len(parts), len(rparts)) and parts[-1 - n] == rparts[-1 - n]:
            n += 1
        # a whole side must match: the diff path ends with the file's path, or the reverse
        if n < min(len(parts), len(rparts)) or n == 0:
            continue
        if n > best_n:
            best, best_n = [(rel, absolute)], n
        elif n == best_n:
            best.append((rel, absolute))
    if len(best) == 1:
        return best[0]
    return sorted(rel for rel, _ in best) or None
