"""The manifest beside a dump: what was captured, how, and from where, so data can be checked later.

It is written when a dump starts (so a resumed run can refuse to mix different settings into one
folder) and again when it ends, with what fired and what was written.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .. import __version__
from ..errors import CallgraphError
from ..model import Proof
from .atomic import atomic_json

MANIFEST = "manifest.json"
# Settings that must not change between a run and its resume: they change the data's meaning.
IDENTITY = ("format", "model", "output_layer_ids", "dtype", "hidden_size", "num_layers", "target_path")


# Releases whose dumps in a format hold wrong data: (format, tool_version) -> what went wrong.
KNOWN_BAD = {
    ("safetensors", "0.1.0"): "callgraph 0.1.0's safetensors format wrote other samples' hidden "
                              "states for samples that waited for their shard (docs/hooks.md, "
                              "'Dumps written with wrong data')",
}


class ResumeMismatch(CallgraphError):
    """--out holds a dump made with other settings; resuming would mix two datasets."""


def proof_hash(proof: Proof | None) -> str | None:
    """sha256 of the proof's canonical JSON (sorted keys), stable across whitespace and key order."""
    if proof is None:
        return None
    text = json.dumps(proof.to_json(), sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def identity(manifest: dict) -> dict:
    return {k: manifest.get(k) for k in IDENTITY}


def open_manifest(out_dir: Path, fresh: dict) -> dict:
    """Check an existing manifest against this run's settings, then write this run's."""
    path = Path(out_dir) / MANIFEST
    if path.exists():
        old = json.loads(path.read_text())
        bad = KNOWN_BAD.get((old.get("format"), old.get("tool_version")))
        if bad:
            raise ResumeMismatch(f"{path}: the dump there cannot be resumed: {bad}; delete it "
                                 f"and dump again")
        a, b = identity(old), identity(fresh)
        diff = {k: (a[k], b[k]) for k in IDENTITY if a[k] != b[k]}
        if diff:
            what = "; ".join(f"{k}: {x!r} there, {y!r} now" for k, (x, y) in diff.items())
            raise ResumeMismatch(f"{path}: the dump there was made with other settings ({what}); "
                                 f"use another --out")
    data = dict(fresh, tool_version=__version__, complete=False)
    atomic_json(path, data)
    return data


def close_manifest(out_dir: Path, data: dict) -> None:
    atomic_json(Path(out_dir) / MANIFEST, dict(data, complete=True))
