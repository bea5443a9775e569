"""The one reader of the analysed source: each file listed, read, hashed and decoded once.

griffe's loader reads a module once and hands the same model to every consumer; here the
index (`project.py`), the name summaries (`relevance.py`), the cache keys (`api.py`), Jedi
(`jedi_oracle.py`), the gate's references (`gate/frontier.py`) and the pycg writer
(`output/pycg.py`) all read through this module, so a file is read from disk once per analysis
and every reader meets a hostile file the same way: the encoding Python would use
(`roots.decoded`: BOM, PEP 263 cookie, else UTF-8), a file that cannot be read, decoded or
parsed skipped with one warning naming it and why (`roots.parse_bytes`), never a crash.

The contents are taken to stay put while an analysis runs (the index keeps its parsed modules
for as long): a cached answer is re-checked against the disk with `read_file`, which never
memoises.
"""
from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..roots import SourceRoot, decoded, parse_text, python_files


@dataclass(frozen=True, slots=True)
class Source:
    """One file as read: the sha1 of its bytes, and its text as Python decodes it."""

    path: Path
    digest: str
    text: str | None      # None: it cannot be decoded (`problem` says why)
    problem: str | None = None
    loose: str | None = None  # undecodable bytes as UTF-8 with replacements, for name searches

    @property
    def searchable(self) -> str:
        """The text to grep for names: the decoded text, else the bytes with replacements."""
        return self.text if self.text is not None else (self.loose or "")

    def parse(self) -> tuple[ast.Module | None, str | None]:
        """The module's tree, or None and the reason in the words every warning uses."""
        if self.text is None:
            return None, self.problem
        return parse_text(self.text, str(self.path))


def read_file(path: Path) -> Source | str:
    """Read and decode `path` now (no memo): the Source, or why it cannot be read."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        return f"cannot read: {exc.strerror or exc}"
    digest = hashlib.sha1(data).hexdigest()
    text, problem = decoded(data)
    if text is None:
        return Source(path, digest, None, problem, data.decode("utf-8", errors="replace"))
    return Source(path, digest, text)


def file_digest(path: Path) -> str | None:
    """The sha1 of the file's bytes now (no memo, nothing decoded: the cache keys and the
    re-check of a cached answer need no text), or None when it cannot be read."""
    try:
        return hashlib.sha1(path.read_bytes()).hexdigest()
    except OSError:
        return None


class Sources:
    """The files of the roots' scopes. Each file's digest is computed once; its text is kept
    once a name search has asked for the texts (and then also parsed from), not otherwise: a
    whole-tree export parses every file and would hold its source twice. `warn(path, problem)`
    hears about each file that cannot be used (the index says it once per file)."""

    def __init__(self, roots: list[SourceRoot], warn: Callable[[Path, str], None], unlisted: Callable[[Path, str], None],
                 max_file_mb: float | None = None):
        self.roots = roots
        self.max_file_mb = max_file_mb  # larger files are not listed; `unlisted` hears why
        self._warn = warn
        self._unlisted = unlisted
        self._files: list[Path] | None = None
        self._digests: dict[Path, str | None] = {}
        self._kept: dict[Path, Source | str] = {}  # read for texts(): kept for the analysis

    def files(self) -> list[Path]:
        """Every .py file of the scopes, in `python_files` order, each once."""
        if self._files is None:
            seen: dict[Path, None] = {}
            for root in self.roots:
                for p in python_files(root.scope, self._unlisted, self.max_file_mb):
                    seen.setdefault(p, None)
            self._files = list(seen)
        return self._files

    def _read(self, path: Path, keep: bool) -> Source | str:
        found = self._kept.get(path)
        if found is None:
            found = read_file(path)
            if keep:
                self._kept[path] = found
            self._digests[path] = found.digest if isinstance(found, Source) else None
        return found

    def digest(self, path: Path) -> str | None:
        """The sha1 of the file's bytes (read once), or None when it cannot be read."""
        if path not in self._digests:
            self._digests[path] = file_digest(path)
        return self._digests[path]

    def texts(self) -> list[tuple[Path, str]]:
        """(path, text) of every scope file that can be read; one that cannot is warned about,
        an undecodable one searched with replacement characters (a name search must not miss it)."""
        out = []
        for p in self.files():
            src = self._read(p, keep=True)
            if isinstance(src, str):
                self._warn(p, src)
                continue
            if src.text is None:
                self._warn(p, src.problem or "cannot decode")
            out.append((p, src.searchable))
        return out

    def forget_texts(self) -> None:
        """Drop the files kept for texts(); their digests stay."""
        self._kept.clear()

    def text(self, path: Path) -> str | None:
        """The decoded text (read now unless kept), or None when it cannot be read or decoded."""
        src = self._read(path, keep=False)
        return src.text if isinstance(src, Source) else None

    def parse(self, path: Path) -> tuple[Source | None, ast.Module | None, str | None]:
        """(the file as read, its tree, why there is none); the caller warns."""
        src = self._read(path, keep=False)
        if isinstance(src, str):
            return None, None, src
        tree, problem = src.parse()
        return src, tree, problem
