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
# What a run confirms about the whole dataset, carried into a resume's manifest (carry_over).
CARRIED = ("fired", "fired_paths", "adapters", "skipped_forwards", "nan_skipped")
EARLIER = "earlier_runs"   # the carried results while a resume runs; folded in when it closes


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
        # a resume that was itself killed never folded its earlier runs in: take theirs
        earlier = old.get(EARLIER) or {k: old[k] for k in CARRIED if k in old}
    else:
        earlier = {}
    data = dict(fresh, tool_version=__version__, complete=False)
    if earlier:   # a resume: what the earlier runs confirmed stays on record (carry_over)
        data[EARLIER] = earlier
    atomic_json(path, data)
    return data


def carry_over(earlier: dict | None, now: dict) -> dict:
    """This run's results with the earlier runs' confirmations kept: on a resume the manifest
    says what fired, through which adapter, over the whole dataset's making (folded as the
    ranks' results are), not only over this run's forwards, which are none when every sample
    was already on disk. `samples_written`, `tokens_written` and `bytes_written` stay this
    run's; `samples_on_disk` is the dataset's."""
    if not earlier:
        return now
    return dict(now, **_fold([earlier, now]))


def read_manifest(out_dir: Path, fresh: dict) -> dict:
    """The manifest another process (rank 0) wrote for this run; it must be this run's."""
    path = Path(out_dir) / MANIFEST
    try:
        old = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise CallgraphError(f"{path}: cannot read the run's manifest ({exc})") from None
    a, b = identity(old), identity(fresh)
    if a != b:
        raise ResumeMismatch(f"{path}: written for other settings than this rank's "
                             f"({ {k: (a[k], b[k]) for k in IDENTITY if a[k] != b[k]} })")
    old.pop(EARLIER, None)   # carried over once, by rank 0's own results
    return old


RESULT_KEYS = ("fired", "fired_paths", "adapters", "skipped_forwards", "samples_written",
               "samples_on_disk", "tokens_written", "bytes_written", "nan_skipped")


def _fold(results: list[dict]) -> dict:
    """The CARRIED results of several ranks or runs as one: counts summed, paths and skipped
    ids united, adapters merged (a later one's name wins)."""
    fired: dict[str, int] = {}
    for r in results:
        for path, n in r.get("fired", {}).items():
            fired[path] = fired.get(path, 0) + n
    return {
        "fired": dict(sorted(fired.items())),
        "fired_paths": sorted({p for r in results for p in r.get("fired_paths", [])}),
        "adapters": dict(sorted({k: v for r in results for k, v in r.get("adapters", {}).items()}.items())),
        "skipped_forwards": sum(r.get("skipped_forwards", 0) for r in results),
        "nan_skipped": sorted({i for r in results for i in r.get("nan_skipped", [])}),
    }


def merge_results(results: list[dict], on_disk: int) -> dict:
    """Every rank's `Capture` results as one (counts summed, paths and skipped ids united)."""
    return {
        **_fold(results),
        "samples_written": sum(r["samples_written"] for r in results),
        "samples_on_disk": on_disk,
        "tokens_written": sum(r["tokens_written"] for r in results),
        "bytes_written": sum(r["bytes_written"] for r in results),
        "ranks": len(results),
    }


def close_manifest(out_dir: Path, data: dict) -> None:
    atomic_json(Path(out_dir) / MANIFEST, dict(data, complete=True))
