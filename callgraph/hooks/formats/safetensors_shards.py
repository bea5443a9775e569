"""callgraph's own format: safetensors shards of many samples, an index, a manifest beside them.

Each shard holds four tensors with the samples' tokens end to end (padding never stored):
`input_ids` [N] int64, `loss_mask` [N] int64, `hidden_state` [N, H], `aux_hidden_state` [N, K*H].
`index.json` maps a sample id to (shard, offset, length) in tokens, so one sample is read with
`safe_open(...).get_slice(name)[offset:offset + length]`, which reads only those bytes.
The shard's own header (`__metadata__["samples"]`) lists its samples too: a shard is committed by
one rename, and the index is rebuilt from the shards on resume, so no crash can make them disagree.
The shard is streamed out sample by sample (the header is computed first), with no concatenated copy.
"""
from __future__ import annotations

import json
import re
import struct
from pathlib import Path

import torch

from ...errors import CallgraphError
from ..atomic import atomic_json, atomic_write
from . import Format, Sample

INDEX = "index.json"
# shard-000000.safetensors (one process, before 0.1.1) or shard-RRR-000000.safetensors (rank RRR)
SHARD = re.compile(r"shard-(?:(\d{3})-)?(\d{6})\.safetensors$")
DEFAULT_SHARD_BYTES = 1 << 30
_DTYPES = {torch.bfloat16: "BF16", torch.float16: "F16", torch.float32: "F32",
           torch.int64: "I64", torch.bool: "BOOL"}
_FIELDS = (("input_ids", "input_ids"), ("loss_mask", "loss_mask"),
           ("hidden_state", "final"), ("aux_hidden_state", "aux"))


def _bytes(t: torch.Tensor) -> memoryview:
    t = t.contiguous()
    return memoryview(t.view(torch.uint8).numpy()) if t.numel() else memoryview(b"")


def read_header(path: Path) -> dict:
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        return json.loads(f.read(n))


class SafetensorsFormat(Format):
    name = "safetensors"

    def __init__(self, out_dir: Path, shard_bytes: int = DEFAULT_SHARD_BYTES, rank: int = 0,
                 write_index: bool = True, **_):
        super().__init__(out_dir)
        self.shard_bytes = shard_bytes
        # each rank of a data-parallel run names its shards apart; only one writes the index
        self.rank, self.write_index = rank, write_index
        self.entries: dict[int, dict] = {}
        self.shards: dict[str, dict] = {}
        self._pending: list[Sample] = []
        self._pending_bytes = 0
        self._seq = 0
        self.damaged: dict[str, str] = {}          # shard -> why its header cannot be read
        self.duplicates: list[tuple[int, str, str]] = []
        for path in sorted(self.out_dir.glob("shard-*.safetensors")):
            m = SHARD.search(path.name)
            if not m:
                continue
            self._seq = max(self._seq, int(m.group(2)) + 1)
            try:
                samples = json.loads(read_header(path)["__metadata__"]["samples"])
                size = path.stat().st_size
            except (OSError, ValueError, KeyError, TypeError, struct.error) as exc:
                self.damaged[path.name] = f"{type(exc).__name__}: {exc}"   # its samples are redone
                continue
            self._record(path.name, samples, size)

    def _record(self, shard: str, samples: list, size: int) -> None:
        for sid, off, n in samples:
            if int(sid) in self.entries:
                self.duplicates.append((int(sid), self.entries[int(sid)]["shard"], shard))
            self.entries[int(sid)] = {"shard": shard, "offset": off, "length": n}
        self.shards[shard] = {"samples": len(samples), "tokens": sum(s[2] for s in samples),
                              "bytes": size}

    def done_ids(self) -> set[int]:
        return set(self.entries)

    def write(self, samples: list[Sample]) -> int:
        """Add the samples to the open shard; a shard is written as soon as it is full.

        A shard may close in the middle of a batch. What is still waiting when this returns
        is copied out of the batch's host slot, which the writer reuses for a later batch.
        """
        written, borrowed = 0, len(self._pending)   # entries from `borrowed` on are views
        for s in samples:
            self._pending.append(s)
            self._pending_bytes += s.state_bytes()
            if self._pending_bytes >= self.shard_bytes:
                written += self._flush()
                borrowed = 0
        self._pending[borrowed:] = [s.owned() for s in self._pending[borrowed:]]
        return written

    def _flush(self) -> int:
        if not self._pending:
            return 0
        samples, self._pending, self._pending_bytes = self._pending, [], 0
        header, listing, offset = {}, [], 0
        tokens = 0
        for s in samples:
            listing.append([s.id, tokens, int(s.input_ids.shape[0])])
            tokens += int(s.input_ids.shape[0])
        for name, attr in _FIELDS:
            first = getattr(samples[0], attr)
            dtype = torch.int64 if name in ("input_ids", "loss_mask") else first.dtype
            width = list(first.shape[1:])
            size = tokens * dtype.itemsize * (width[0] if width else 1)
            header[name] = {"dtype": _DTYPES[dtype], "shape": [tokens] + width,
                            "data_offsets": [offset, offset + size]}
            offset += size
        header["__metadata__"] = {"format": "callgraph-dump-1", "samples": json.dumps(listing)}
        raw = json.dumps(header, separators=(",", ":")).encode()
        raw += b" " * (-len(raw) % 8)

        def write(f):
            f.write(struct.pack("<Q", len(raw)))
            f.write(raw)
            for name, attr in _FIELDS:
                for s in samples:
                    t = getattr(s, attr)
                    if name in ("input_ids", "loss_mask"):
                        t = t.to(torch.int64)
                    f.write(_bytes(t))

        name = f"shard-{self.rank:03d}-{self._seq:06d}.safetensors"
        self._seq += 1
        self.out_dir.mkdir(parents=True, exist_ok=True)
        size = atomic_write(self.out_dir / name, write)
        self._record(name, listing, size)
        return size

    def read(self, sample_id: int) -> dict:
        return read_sample(self.out_dir, sample_id, self.entries)

    def audit(self) -> list[str]:
        problems = [f"{name}: unreadable header ({why})" for name, why in self.damaged.items()]
        problems += [f"sample {sid} is in {a} and in {b}" for sid, a, b in self.duplicates]
        try:
            index = load_index(self.out_dir)
        except (CallgraphError, OSError, ValueError, KeyError, AttributeError) as exc:
            return problems + [f"{INDEX}: {exc}"]
        if index != self.entries:
            lost = sorted(set(self.entries) - set(index))
            ghost = sorted(set(index) - set(self.entries))
            moved = sorted(k for k in set(index) & set(self.entries) if index[k] != self.entries[k])
            problems.append(f"{INDEX} disagrees with the shards: {len(lost)} samples missing from it "
                            f"{lost[:10]}, {len(ghost)} listed but in no shard {ghost[:10]}, "
                            f"{len(moved)} with other places {moved[:10]}")
        return problems

    def close(self) -> int:
        n = self._flush()
        if self.write_index:
            write_index(self.out_dir, self.entries, self.shards)
        return n


def write_index(out_dir: Path, entries: dict, shards: dict) -> None:
    atomic_json(Path(out_dir) / INDEX, {
        "format": "callgraph-dump-1",
        "samples": {str(k): v for k, v in sorted(entries.items())},
        "shards": shards,
    })


def load_index(out_dir: Path) -> dict[int, dict]:
    path = Path(out_dir) / INDEX
    if not path.exists():
        raise CallgraphError(f"{path}: no index (was the dump finished?)")
    return {int(k): v for k, v in json.loads(path.read_text())["samples"].items()}


def read_sample(out_dir: Path, sample_id: int, index: dict[int, dict] | None = None) -> dict:
    """One sample, shaped like a SpecForge record, reading only its own bytes."""
    from safetensors import safe_open

    index = load_index(out_dir) if index is None else index
    if sample_id not in index:
        raise CallgraphError(f"{out_dir}: no sample {sample_id} in {INDEX}")
    e = index[sample_id]
    lo, hi = e["offset"], e["offset"] + e["length"]
    with safe_open(str(Path(out_dir) / e["shard"]), framework="pt") as f:
        data = {name: f.get_slice(name)[lo:hi] for name, _ in _FIELDS}
    data["hidden_state"] = data["hidden_state"].unsqueeze(0)
    data["aux_hidden_state"] = data["aux_hidden_state"].unsqueeze(0)
    return data
