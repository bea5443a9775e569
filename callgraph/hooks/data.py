"""Samples from a JSONL file: pre-tokenized `{"input_ids", "loss_mask"}` or `{"text"}` lines.

A sample's id is its line number (0-based, blank lines counted), so ids stay stable across
reruns and resume can skip by id. Batches are right-padded; lengths travel with them.
`scan` reads the whole file once before any model is loaded: every line is checked (JSON, ids
that are integers inside the vocabulary, a 0/1 mask of the same length), so a bad line 60,000
fails in a second, not after an hour, and each sample's digest is taken for resume.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import torch

from ..errors import CallgraphError


class DataError(CallgraphError):
    """A data line that is not a sample (names the file and line)."""


@dataclass
class Batch:
    ids: list[int]
    input_ids: torch.Tensor      # [B, T] int64, right-padded with 0
    attention_mask: torch.Tensor  # [B, T] int64
    loss_mask: torch.Tensor      # [B, T] int64
    lengths: list[int]

    @property
    def tokens(self) -> int:
        return sum(self.lengths)


@dataclass
class DataSummary:
    samples: int = 0
    tokens: int = 0                 # after truncation to --max-len
    longest: int = 0
    digests: dict[int, str] = field(default_factory=dict)   # sample id -> digest of its tokens
    lengths: dict[int, int] = field(default_factory=dict)   # sample id -> tokens
    offsets: dict[int, int] = field(default_factory=dict)   # sample id -> byte offset of its line


def digest(ids: list[int], mask: list[int]) -> str:
    """A sample's fingerprint: its (truncated) token ids and loss mask."""
    h = hashlib.blake2b(digest_size=8)
    h.update(json.dumps([ids, mask], separators=(",", ":")).encode())
    return h.hexdigest()


def scan(path: Path, tokenize, max_len: int | None, vocab_size: int | None) -> DataSummary:
    """Check every line of the data file; count, measure and fingerprint its samples."""
    out = DataSummary()
    for sid, offset, text in _lines(path):
        ids, mask = _parse(text, f"{path}:{sid + 1}", tokenize, max_len, vocab_size)
        out.samples += 1
        out.tokens += len(ids)
        out.longest = max(out.longest, len(ids))
        out.digests[sid] = digest(ids, mask)
        out.lengths[sid] = len(ids)
        out.offsets[sid] = offset
    if not out.samples:
        raise DataError(f"{path}: no samples (the file has no non-blank line)")
    return out


def rows(path: Path, summary: DataSummary, ids: list[int], tokenize, max_len: int | None):
    """The samples `ids` (in that order) as (id, input_ids, loss_mask), read by their offsets."""
    out = []
    try:
        with open(path, "rb") as f:
            for sid in ids:
                f.seek(summary.offsets[sid])
                text = _decode(f.readline(), f"{path}:{sid + 1}")
                out.append((sid, *_parse(text, f"{path}:{sid + 1}", tokenize, max_len, None)))
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror})") from None
    return out


def _lines(path: Path) -> Iterator[tuple[int, int, str]]:
    """(line number, byte offset, text) of every non-blank line."""
    path = Path(path)
    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror})") from None
    with handle:
        offset = 0
        for lineno, raw in enumerate(handle):
            start, offset = offset, offset + len(raw)
            text = _decode(raw, f"{path}:{lineno + 1}")
            if text.strip():
                yield lineno, start, text


def _decode(raw: bytes, where: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{where}: not UTF-8 ({exc.reason} at byte {exc.start})") from None


def _int_list(value, what: str, where: str) -> list[int]:
    if not isinstance(value, list) or not all(type(v) is int for v in value):
        bad = next((v for v in value if type(v) is not int), None) if isinstance(value, list) else value
        raise DataError(f"{where}: {what} must be a list of integers (found {bad!r})")
    return value


def read_samples(path: Path, tokenize: Callable[[str], list[int]] | None, max_len: int | None,
                 skip: set[int] = frozenset(), vocab_size: int | None = None,
                 ) -> Iterator[tuple[int, list[int], list[int]]]:
    """Every sample of the file in line order, as (id, input_ids, loss_mask)."""
    for lineno, _, text in _lines(path):
        if lineno not in skip:
            yield (lineno, *_parse(text, f"{path}:{lineno + 1}", tokenize, max_len, vocab_size))


def _parse(line: str, where: str, tokenize, max_len: int | None, vocab_size: int | None):
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise DataError(f"{where}: not JSON ({exc.msg})") from None
    if not isinstance(row, dict):
        raise DataError(f"{where}: expected a JSON object, found {type(row).__name__}")
    if "input_ids" in row:
        ids = _int_list(row["input_ids"], "input_ids", where)
        mask = _int_list(row.get("loss_mask", [1] * len(ids)), "loss_mask", where)
    elif "text" in row:
        if not isinstance(row["text"], str):
            raise DataError(f"{where}: text must be a string")
        if tokenize is None:
            raise DataError(f"{where}: a text line needs the model directory's tokenizer")
        ids = tokenize(row["text"])
        mask = [1] * len(ids)
    else:
        raise DataError(f"{where}: expected 'input_ids' (+ 'loss_mask') or 'text'")
    if len(mask) != len(ids):
        raise DataError(f"{where}: loss_mask has {len(mask)} items, input_ids {len(ids)}")
    if any(m not in (0, 1) for m in mask):
        raise DataError(f"{where}: loss_mask must hold only 0 and 1")
    if vocab_size is not None:
        bad = next((t for t in ids if not 0 <= t < vocab_size), None)
        if bad is not None:
            raise DataError(f"{where}: token id {bad} is outside the model's vocabulary "
                            f"(0..{vocab_size - 1})")
    if max_len:
        ids, mask = ids[:max_len], mask[:max_len]
    if not ids:
        raise DataError(f"{where}: empty sample")
    return ids, mask


def plan(summary: DataSummary, batch_size: int | None, max_tokens: int | None,
         packed: bool = False) -> list[list[int]]:
    """The run's batches, as lists of sample ids: a function of the data file alone.

    Not of what is already on disk, nor of the number of ranks: a resumed run and every rank
    of a data-parallel run compute the very same batches, so each sample is computed in the
    same company (same padding, same shapes) and its states are the same to the bit.
    Without `max_tokens`: `batch_size` samples at a time, in line order. With it: samples
    sorted by length, longest first (an out-of-memory shows at once), packed while the padded
    batch (samples x longest) stays within `max_tokens`, and at most `batch_size` samples.
    `packed` (the samples of a batch end to end in one row, `--pack`): the budget counts real
    tokens; each batch takes the longest samples left, then fills what room is left with the
    shortest ones (a sample longer than the budget is a batch of its own).
    """
    ids = sorted(summary.lengths)
    if not max_tokens:
        size = batch_size or 1
        return [ids[i:i + size] for i in range(0, len(ids), size)]
    order = sorted(ids, key=lambda i: (-summary.lengths[i], i))
    if packed:
        return _packed_plan(order, summary.lengths, max_tokens, batch_size)
    out, current, longest = [], [], 0
    for sid in order:
        n = summary.lengths[sid]
        wider = max(longest, n)
        if current and (wider * (len(current) + 1) > max_tokens
                        or (batch_size and len(current) >= batch_size)):
            out.append(current)
            current, wider = [], n
        current.append(sid)
        longest = wider
    if current:
        out.append(current)
    return out


def _packed_plan(order: list[int], lengths: dict[int, int], budget: int,
                 cap: int | None) -> list[list[int]]:
    out, head, tail = [], 0, len(order) - 1
    while head <= tail:
        current, used = [], 0
        while head <= tail and (not current or used + lengths[order[head]] <= budget) \
                and not (cap and len(current) >= cap):
            used += lengths[order[head]]
            current.append(order[head])
            head += 1
        while head <= tail and used + lengths[order[tail]] <= budget \
                and not (cap and len(current) >= cap):
            used += lengths[order[tail]]
            current.append(order[tail])
            tail -= 1
        out.append(current)
    return out


def batches(samples, batch_size: int) -> Iterator[Batch]:
    chunk = []
    for s in samples:
        chunk.append(s)
        if len(chunk) == batch_size:
            yield pad(chunk)
            chunk = []
    if chunk:
        yield pad(chunk)


def pad(chunk) -> Batch:
    """Right-pad (id, input_ids, loss_mask) rows into one batch."""
    t = max(len(ids) for _, ids, _ in chunk)
    ids = torch.zeros(len(chunk), t, dtype=torch.int64)
    att = torch.zeros_like(ids)
    mask = torch.zeros_like(ids)
    for b, (_, row, m) in enumerate(chunk):
        ids[b, :len(row)] = torch.tensor(row, dtype=torch.int64)
        mask[b, :len(row)] = torch.tensor(m, dtype=torch.int64)
        att[b, :len(row)] = 1
    return Batch([i for i, _, _ in chunk], ids, att, mask, [len(r) for _, r, _ in chunk])
