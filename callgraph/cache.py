"""The on-disk cache: small JSON records keyed by content hash and tool version.

Invalidation is by hash, never by time: a per-file record is keyed by the file's sha1, a query
answer by the hashes of every file in scope and every file it read. Writes are atomic (temp +
rename), so a killed run never leaves a half-written record, and concurrent runs are harmless.

A record is believed only when it proves itself: its first line names the format, the kind and
the sha1 of the JSON below it, and the JSON must have its kind's shape (records.py). An edited,
truncated or misshapen record is discarded with a one-line note and the answer is rebuilt:
before, `{"proof": null}` crashed every later run and an edited verdict was printed as proven.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from . import __version__
from .records import CHECKS, RecordError

FORMAT = b"callgraph-cache/2"
#: Damaged records noted one by one; past this many, the rest are discarded without a line each.
MAX_NOTES = 5
ENGINE_DIR = re.compile(r"^\d[\w.+]*-[0-9a-f]{12}$")  # engine_fingerprint()'s names
CRASHES = "crashes"


def default_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "callgraph"


def _stderr_note(line: str) -> None:
    print(f"callgraph: note: {line}", file=sys.stderr)


class Cache:
    def __init__(self, directory: Path | None, enabled: bool = True,
                 note: Callable[[str], None] | None = None):
        self.enabled = enabled
        self.dir = Path(directory) if directory else default_dir()
        self.note = note or _stderr_note
        self.discarded = 0

    def _path(self, kind: str, key: str) -> Path:
        return self.dir / engine_fingerprint() / kind / key[:2] / f"{key}.json"

    def get(self, kind: str, key: str) -> Any | None:
        if not self.enabled:
            return None
        path = self._path(kind, key)
        try:
            raw = path.read_bytes()
        except OSError:
            return None
        try:
            return decode(raw, kind)
        except RecordError as exc:
            self._discard(path, str(exc))
            return None

    def _discard(self, path: Path, why: str) -> None:
        try:
            path.unlink()
        except OSError:
            pass
        self.discarded += 1
        if self.discarded <= MAX_NOTES:
            more = "; further ones are discarded without a note" if self.discarded == MAX_NOTES else ""
            self.note(f"discarded a damaged cache record ({why}): {path}; rebuilding it{more}")

    def put(self, kind: str, key: str, value: Any) -> None:
        if not self.enabled:
            return
        path = self._path(kind, key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
            with os.fdopen(fd, "wb") as fh:
                if kind in STREAMED:
                    write_record(fh, kind, value)
                else:  # small: one C-encoder call, not thousands of pieces
                    fh.write(encode(kind, value))
            os.replace(tmp, path)
        except OSError:
            # A read-only or full cache directory must not fail the query.
            try:
                os.unlink(tmp)  # type: ignore[possibly-undefined]
            except (OSError, NameError):
                pass

    # -- callgraph cache info / clear --------------------------------------------------------
    def info(self) -> "CacheInfo":
        out = CacheInfo(self.dir, engine_fingerprint())
        for engine in self._engine_dirs():
            for path in engine.rglob("*.json"):
                if path.name.startswith(".tmp-"):
                    continue
                kind = path.relative_to(engine).parts[0]
                row = out.engines.setdefault(engine.name, {})
                row[kind] = row.get(kind, 0) + 1
                out.bytes += _size(path)
        out.crash_logs = len(self._crash_logs())
        out.bytes += sum(_size(p) for p in self._crash_logs())
        return out

    def clear(self) -> tuple[int, int]:
        """Remove every record (all engine versions) and crash log; (files, bytes) removed.
        Only names callgraph writes are touched, so a --cache-dir pointed at a shared folder
        loses nothing else."""
        files = size = 0
        for engine in self._engine_dirs():
            for path in engine.rglob("*"):
                if path.is_file():
                    files, size = files + 1, size + _size(path)
            shutil.rmtree(engine, ignore_errors=True)
        for log in self._crash_logs():
            files, size = files + 1, size + _size(log)
            log.unlink(missing_ok=True)
        return files, size

    def _engine_dirs(self) -> list[Path]:
        try:
            return sorted(p for p in self.dir.iterdir() if p.is_dir() and ENGINE_DIR.match(p.name))
        except OSError:
            return []

    def _crash_logs(self) -> list[Path]:
        return sorted((self.dir / CRASHES).glob("callgraph-crash-*.log"))


@dataclass
class CacheInfo:
    location: Path
    engine: str  # this callgraph's engine directory; the others are older versions
    engines: dict[str, dict[str, int]] = field(default_factory=dict)  # engine -> kind -> records
    bytes: int = 0
    crash_logs: int = 0


#: Record kinds written piece by piece (`write_record`): a whole-tree graph runs to 140 MB. The
#: others (a file's name summary, a reach answer, the name index) are written in one piece:
#: cold, a query writes one summary per file of the tree, and made in pieces those 2,141
#: records of SGLang's `srt` took seconds of the query's time.
STREAMED = frozenset({"export"})


def encode(kind: str, value: Any) -> bytes:
    body = json.dumps(value, separators=(",", ":")).encode()  # one C-encoder call; dump() writes chunk by chunk
    return b"%s %s %s\n" % (FORMAT, kind.encode(), hashlib.sha1(body).hexdigest().encode()) + body


def write_record(fh, kind: str, value: Any) -> None:
    """`encode(kind, value)` written to `fh` (a seekable file) without the record's whole text
    or bytes in memory: a whole-tree export's record is 140 MB, and its text, its bytes, then
    header and bytes joined were three copies at the export's peak. The text is made in pieces
    (`_compact_pieces`), each written as it comes and added to the checksum, which goes into
    the header last, over a placeholder of its own length."""
    head = b"%s %s " % (FORMAT, kind.encode())
    start = fh.tell()
    fh.write(head + b"0" * 40 + b"\n")
    digest = hashlib.sha1()
    for piece in _compact_pieces(value, _SPLIT_DEPTH):
        data = piece.encode()
        digest.update(data)
        fh.write(data)
    end = fh.tell()
    fh.seek(start)
    fh.write(head + digest.hexdigest().encode())
    fh.seek(end)


# Levels of dicts and lists made piece by piece (an export: the record, the graph, its lists of
# edges and rows); below, each value is one json.dumps call.
_SPLIT_DEPTH = 3


def _compact_pieces(value: Any, depth: int):
    """The text `json.dumps(value, separators=(",", ":"))` gives, in pieces: the C encoder
    writes a dict or list as its members' own texts between brackets and separators, so the
    pieces joined are that text, byte for byte (tests/test_cache.py checks it)."""
    if depth > 0 and isinstance(value, dict) and value:
        sep = "{"
        for k, v in value.items():
            yield sep + (json.dumps(k) if isinstance(k, str) else _key_text(k)) + ":"
            yield from _compact_pieces(v, depth - 1)
            sep = ","
        yield "}"
    elif depth > 0 and isinstance(value, list) and value:
        sep = "["
        for v in value:
            yield sep
            yield from _compact_pieces(v, depth - 1)
            sep = ","
        yield "]"
    else:
        yield json.dumps(value, separators=(",", ":"))


def _key_text(k: Any) -> str:
    """A non-string dict key as json writes it, quoted (`1` -> `"1"`, True -> `"true"`)."""
    return json.dumps({k: 0}, separators=(",", ":"))[1:-3]


def decode(raw: bytes, kind: str) -> Any:
    """The record's value, or RecordError saying what is wrong with it."""
    head, sep, body = raw.partition(b"\n")
    parts = head.split(b" ")
    if not sep or len(parts) != 3 or parts[0] != FORMAT:
        raise RecordError("no callgraph-cache header")
    if parts[1] != kind.encode():
        raise RecordError(f"a {parts[1].decode(errors='replace')} record where {kind} belongs")
    if hashlib.sha1(body).hexdigest().encode() != parts[2]:
        raise RecordError("checksum mismatch: the record was changed or cut short")
    try:
        value = json.loads(body)
    except ValueError as exc:
        raise RecordError(f"not JSON: {exc}") from None
    check = CHECKS.get(kind)
    return check(value) if check else value


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


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


def key_of(*parts: Any) -> str:
    return hashlib.sha1(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()
