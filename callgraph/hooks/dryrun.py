"""`callgraph dump --dry-run`: how big the run will be, before any model is loaded.

From the data file's scan and the config alone: samples and tokens after truncation, what is on
disk already, the batches and the padding they compute, the bytes each format would write, and
the time the disk alone needs for them at its measured speed (a short fsync'd write beside --out).
"""
from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import torch

from .choices import FORMAT_NAMES
from .data import DataSummary
from .formats import get_format
from .layers import select_layers
from .load import config_int

PROBE_BYTES = 256 << 20
INDEX_BYTES = 16   # input_ids and loss_mask, int64 each, a token


def disk_speed(folder: Path, total: int = PROBE_BYTES, chunk: int = 16 << 20) -> float:
    """Sequential write with fsync into `folder` (or its nearest existing parent), bytes/s."""
    folder = Path(folder)
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    buf = os.urandom(chunk)
    fd, name = tempfile.mkstemp(prefix=".callgraph-probe-", dir=folder)
    try:
        t0 = time.perf_counter()
        written = 0
        while written < total:
            written += os.write(fd, buf)
        os.fsync(fd)
        return written / (time.perf_counter() - t0)
    finally:
        os.close(fd)
        os.unlink(name)


def _size(n: float) -> str:
    return f"{n / 1e9:,.2f} GB" if n >= 1e9 else f"{n / 1e6:,.2f} MB"


def describe(summary: DataSummary, plan: list[list[int]], config, layers: str,
             convention: str | None, dtype: torch.dtype, out_dir: Path, fmt: str,
             packed: bool = False) -> list[str]:
    hidden = config_int(config, "hidden_size")
    depth = config_int(config, "num_hidden_layers")
    k = len(select_layers(layers, convention, depth).output_ids) if depth else None
    done = get_format(fmt)(out_dir).done_ids() if Path(out_dir).is_dir() else set()
    todo = [i for i in summary.lengths if i not in done]
    tokens = sum(summary.lengths[i] for i in todo)
    # a packed batch computes its real tokens only (the done ones of a part-done batch too)
    padded = sum((sum(summary.lengths[i] for i in b) if packed
                  else len(b) * max(summary.lengths[i] for i in b)) for b in plan
                 if not set(b) <= done)
    lines = [f"samples: {summary.samples} ({len(done)} on disk already, {len(todo)} to do)",
             f"tokens after truncation: {summary.tokens:,} ({tokens:,} to do; longest "
             f"{summary.longest})",
             (f"batches: {len(plan)}, packed (--pack): {padded:,} tokens computed, no padding"
              if packed else f"batches: {len(plan)}; computed with padding: {padded:,} tokens "
              f"({(padded - tokens) / padded:.1%} padding)") if padded else f"batches: {len(plan)}"]
    if not (hidden and k):
        return lines + ["bytes: unknown (config.json states no hidden_size / num_hidden_layers)"]
    per_token = (k + 1) * hidden * dtype.itemsize + INDEX_BYTES
    speed = disk_speed(out_dir)
    lines.append(f"each token: {k} layers + the final norm x {hidden} x {dtype.itemsize} bytes "
                 f"+ {INDEX_BYTES} = {per_token:,} bytes")
    lines.append(f"disk: {speed / 1e9:.2f} GB/s sequential write with fsync "
                 f"({PROBE_BYTES >> 20} MiB probe beside {out_dir})")
    for name in FORMAT_NAMES:
        size = tokens * per_token + len(todo) * get_format(name).sample_overhead
        mark = " (chosen)" if name == fmt else ""
        lines.append(f"{name}{mark}: {_size(size)}, {size / speed:,.1f} s of disk alone")
    return lines
