"""Samples from a JSONL file: pre-tokenized `{"input_ids", "loss_mask"}` or `{"text"}` lines.

A sample's id is its line number (0-based, blank lines counted), so ids stay stable across
reruns and resume can skip by id. Batches are right-padded; lengths travel with them.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
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


def read_samples(path: Path, tokenize: Callable[[str], list[int]] | None, max_len: int | None,
                 skip: set[int] = frozenset()) -> Iterator[tuple[int, list[int], list[int]]]:
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
            if "input_ids" in row:
                ids = row["input_ids"]
                mask = row.get("loss_mask", [1] * len(ids))
            elif "text" in row:
                if tokenize is None:
                    raise DataError(f"{where}: a text line needs the model directory's tokenizer")
                ids = tokenize(row["text"])
                mask = [1] * len(ids)
            else:
                raise DataError(f"{where}: expected 'input_ids' (+ 'loss_mask') or 'text'")
            if len(mask) != len(ids):
                raise DataError(f"{where}: loss_mask has {len(mask)} items, input_ids {len(ids)}")
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
