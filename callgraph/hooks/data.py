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


def digest(ids: list[int], mask: list[int]) -> str:
    """A sample's fingerprint: its (truncated) token ids and loss mask."""
    h = hashlib.blake2b(digest_size=8)
    h.update(json.dumps([ids, mask], separators=(",", ":")).encode())
    return h.hexdigest()


def scan(path: Path, tokenize, max_len: int | None, vocab_size: int | None) -> DataSummary:
    """Check every line of the data file; count and fingerprint its samples."""
    out = DataSummary()
    for sid, ids, mask in read_samples(path, tokenize, max_len, vocab_size=vocab_size):
        out.samples += 1
        out.tokens += len(ids)
        out.longest = max(out.longest, len(ids))
        out.digests[sid] = digest(ids, mask)
        out.lengths[sid] = len(ids)
    if not out.samples:
        raise DataError(f"{path}: no samples (the file has no non-blank line)")
    return out


def _int_list(value, what: str, where: str) -> list[int]:
    if not isinstance(value, list) or not all(type(v) is int for v in value):
        bad = next((v for v in value if type(v) is not int), None) if isinstance(value, list) else value
        raise DataError(f"{where}: {what} must be a list of integers (found {bad!r})")
    return value


def read_samples(path: Path, tokenize: Callable[[str], list[int]] | None, max_len: int | None,
                 skip: set[int] = frozenset(), vocab_size: int | None = None,
                 ) -> Iterator[tuple[int, list[int], list[int]]]:
    path = Path(path)
    try:
        handle = open(path, encoding="utf-8")
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror})") from None
    with handle:
        for lineno, line in enumerate(handle):
            if not line.strip() or lineno in skip:
                continue
            where = f"{path}:{lineno + 1}"
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
            yield lineno, ids, mask


def batches(samples, batch_size: int) -> Iterator[Batch]:
    chunk = []
    for s in samples:
        chunk.append(s)
        if len(chunk) == batch_size:
            yield _pad(chunk)
            chunk = []
    if chunk:
        yield _pad(chunk)


def _pad(chunk) -> Batch:
    t = max(len(ids) for _, ids, _ in chunk)
    ids = torch.zeros(len(chunk), t, dtype=torch.int64)
    att = torch.zeros_like(ids)
    mask = torch.zeros_like(ids)
    for b, (_, row, m) in enumerate(chunk):
        ids[b, :len(row)] = torch.tensor(row, dtype=torch.int64)
        mask[b, :len(row)] = torch.tensor(m, dtype=torch.int64)
        att[b, :len(row)] = 1
    return Batch([i for i, _, _ in chunk], ids, att, mask, [len(r) for _, r, _ in chunk])
