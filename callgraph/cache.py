"""The on-disk cache: small JSON records keyed by content hash and tool version.

Invalidation is by hash, never by time: a per-file record is keyed by the file's sha1, a query
answer by the hashes of every file in scope and every file it read. Writes are atomic (temp +
rename), so a killed run never leaves a half-written record, and concurrent runs are harmless.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from . import __version__


def default_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "callgraph"


class Cache:
    def __init__(self, directory: Path | None, enabled: bool = True):
        self.enabled = enabled
        self.dir = Path(directory) if directory else default_dir()

    def _path(self, kind: str, key: str) -> Path:
        return self.dir / engine_fingerprint() / kind / key[:2] / f"{key}.json"

    def get(self, kind: str, key: str) -> Any | None:
        if not self.enabled:
            return None
        try:
            with open(self._path(kind, key), encoding="utf-8") as fh:
                return json.load(fh)
        except (OSError, ValueError):
            return None

    def put(self, kind: str, key: str, value: Any) -> None:
        if not self.enabled:
            return
        path = self._path(kind, key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(json.dumps(value, separators=(",", ":")))  # one C-encoder call; dump() writes chunk by chunk
            os.replace(tmp, path)
        except OSError:
            # A read-only or full cache directory must not fail the query.
            try:
                os.unlink(tmp)  # type: ignore[possibly-undefined]
            except (OSError, NameError):
                pass


_FINGERPRINT: list[str] = []


def engine_fingerprint() -> str:
    """The tool version plus a hash of the analysis source: a changed rule never reads old
    answers, even before the version number moves (development trees, local patches)."""
    if not _FINGERPRINT:
        here = Path(__file__).parent
        h = hashlib.sha1(__version__.encode())
        for path in sorted(here.rglob("*.py")):
            if "hooks" in path.relative_to(here).parts or "render" in path.relative_to(here).parts:
                continue
            h.update(path.relative_to(here).as_posix().encode())
            h.update(path.read_bytes())
        _FINGERPRINT.append(f"{__version__}-{h.hexdigest()[:12]}")
    return _FINGERPRINT[0]


def sha1_bytes(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


def key_of(*parts: Any) -> str:
    return hashlib.sha1(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()
