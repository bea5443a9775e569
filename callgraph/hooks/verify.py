"""`callgraph dump verify OUT`: is a dump whole, and does it hold what its manifest says?

Read back the way a trainer reads it: every sample on disk is loaded through its format, its
tensors' shapes and dtypes are checked against the manifest, and NaN/Inf is looked for. With the
data file, every sample of it must be on disk exactly once (or listed in `nan_skipped`), and none
other. The format adds its own bookkeeping (an index that must match the shards, files in their
places). Numbers are not recomputed here: `check.check_dump` does that where the model is at hand.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable, Iterable

import torch

from ..errors import CallgraphError
from .formats import get_format
from .manifest import MANIFEST


def read_manifest(out_dir: Path) -> dict:
    path = Path(out_dir) / MANIFEST
    try:
        manifest = json.loads(path.read_text())
    except FileNotFoundError:
        raise CallgraphError(f"{path}: no manifest: {out_dir} is not a callgraph dump") from None
    except (OSError, ValueError) as exc:
        raise CallgraphError(f"{path}: cannot read the manifest ({exc})") from None
    missing = [k for k in ("format", "hidden_size", "output_layer_ids", "dtype") if k not in manifest]
    if not isinstance(manifest, dict) or missing:
        raise CallgraphError(f"{path}: not a dump manifest (missing {', '.join(missing)})")
    return manifest


def data_ids(path: Path) -> list[int]:
    """Sample ids of a data file: the numbers (0-based) of its non-blank lines."""
    try:
        with open(path, encoding="utf-8") as f:
            return [i for i, line in enumerate(f) if line.strip()]
    except (OSError, UnicodeDecodeError) as exc:
        raise CallgraphError(f"{path}: cannot read the data file ({exc})") from None


def verify_dump(out_dir: Path, expected_ids: Iterable[int] | None = None,
                progress: Callable[[int], None] | None = None) -> list[str]:
    """Every problem of the dump in `out_dir`, one line each; an empty list when it is clean."""
    out_dir = Path(out_dir)
    manifest = read_manifest(out_dir)
    fmt = get_format(manifest["format"])(out_dir)
    problems = list(fmt.audit())
    if not manifest.get("complete"):
        problems.append(f"{MANIFEST}: the dump did not finish (complete is not true); rerun the "
                        f"same command to resume it")
    hidden, width = int(manifest["hidden_size"]), len(manifest["output_layer_ids"]) * int(manifest["hidden_size"])
    dtype = getattr(torch, str(manifest["dtype"]), None)
    skipped = set(manifest.get("nan_skipped") or [])
    on_disk = sorted(fmt.done_ids())
    for sid in on_disk:
        try:
            record = fmt.read(sid)
        except Exception as exc:  # any failure to read a sample back is the finding itself
            problems.append(f"sample {sid}: cannot be read back ({type(exc).__name__}: {exc})")
            continue
        problems += [f"sample {sid}: {p}" for p in _record_problems(record, hidden, width, dtype)]
        if sid in skipped:
            problems.append(f"sample {sid}: listed in nan_skipped but on disk")
        if progress:
            progress(1)
    if expected_ids is not None:
        expected = set(expected_ids)
        missing = sorted(expected - set(on_disk) - skipped)
        extra = sorted(set(on_disk) - expected)
        if missing:
            problems.append(f"{len(missing)} samples of the data file are not on disk: {_few(missing)}")
        if extra:
            problems.append(f"{len(extra)} samples on disk are not in the data file: {_few(extra)}")
    return problems


def _record_problems(record: dict, hidden: int, width: int, dtype) -> list[str]:
    want = {"input_ids", "loss_mask", "hidden_state", "aux_hidden_state"}
    if not isinstance(record, dict) or set(record) != want:
        keys = sorted(record) if isinstance(record, dict) else type(record).__name__
        return [f"holds {keys}, expected {sorted(want)}"]
    ids, mask, final, aux = (record[k] for k in ("input_ids", "loss_mask", "hidden_state",
                                                "aux_hidden_state"))
    if not all(isinstance(t, torch.Tensor) for t in (ids, mask, final, aux)):
        return ["holds something other than tensors"]
    n = ids.shape[0] if ids.dim() == 1 else -1
    out = []
    if ids.dim() != 1 or ids.dtype != torch.int64 or n == 0:
        out.append(f"input_ids is {_shape(ids)}, expected [T] int64 with T > 0")
    if tuple(mask.shape) != (n,) or mask.dtype != torch.int64:
        out.append(f"loss_mask is {_shape(mask)}, expected [{n}] int64")
    for name, t, w in (("hidden_state", final, hidden), ("aux_hidden_state", aux, width)):
        if tuple(t.shape) != (1, n, w) or (dtype is not None and t.dtype != dtype):
            out.append(f"{name} is {_shape(t)}, expected [1, {n}, {w}] {str(dtype).replace('torch.', '')}")
        elif t.is_floating_point() and not bool(torch.isfinite(t).all()):
            out.append(f"{name} holds NaN or Inf")
    return out


def _shape(t: torch.Tensor) -> str:
    return f"{list(t.shape)} {str(t.dtype).replace('torch.', '')}"


def _few(ids: list[int], n: int = 10) -> str:
    return ", ".join(map(str, ids[:n])) + (f", ... ({len(ids) - n} more)" if len(ids) > n else "")
