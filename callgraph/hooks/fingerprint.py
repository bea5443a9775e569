"""What a dump was made from: the weights and the data, so that a resume cannot mix datasets.

A rerun into the same `--out` continues the dataset that is there. The manifest already refuses
other settings (`manifest.IDENTITY`); this adds what the settings do not show: weights changed
under the same folder name, and another data file (or the same one edited) whose lines no
longer hold the tokens the samples on disk were made from. Both are checked before the model
is loaded.

The weights' fingerprint reads little: each file's name and size, a safetensors file's header
(names, dtypes, shapes, offsets), and 16 chunks of 64 KiB spread over every file. Retrained or
re-initialised weights change almost every byte, so any chunk shows it; 1 MiB a file is read.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from ..errors import CallgraphError
from .atomic import atomic_json
from .formats import get_format
from .manifest import MANIFEST, ResumeMismatch

DIGESTS = "data_digests.json"
CHUNKS, CHUNK = 16, 1 << 16
_WEIGHTS = ("*.safetensors", "*.bin", "*.pt", "*.pth", "*.json")


def weights_fingerprint(model_dir: Path, random_init: bool, seed: int) -> str:
    h = hashlib.blake2b(digest_size=16)
    model_dir = Path(model_dir)
    files = sorted({p for pattern in _WEIGHTS for p in model_dir.glob(pattern) if p.is_file()})
    if random_init:   # the weights are the config's and the seed's; files on disk are not read
        files = [p for p in files if p.name == "config.json"]
        h.update(f"random-init seed={seed}".encode())
    for path in files:
        h.update(path.name.encode() + b"\0")
        try:
            with open(path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                h.update(str(size).encode())
                if path.suffix == ".json" or size <= CHUNKS * CHUNK:
                    h.update(f.read())
                    continue
                for k in range(CHUNKS):
                    f.seek(size * k // CHUNKS)
                    h.update(f.read(CHUNK))
        except OSError as exc:
            raise CallgraphError(f"{path}: cannot read ({exc.strerror})") from None
    return "blake2b:" + h.hexdigest()


def _old_manifest(out_dir: Path) -> dict | None:
    path = Path(out_dir) / MANIFEST
    if not path.exists():
        return None
    try:
        old = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise CallgraphError(f"{path}: cannot read the manifest of the dump there ({exc})") from None
    return old if isinstance(old, dict) else None


def check_resume(out_dir: Path, weights: str, digests: dict[int, str], data: Path, warn) -> None:
    """Refuse to resume onto other weights or onto samples made from other tokens."""
    old = _old_manifest(out_dir)
    if old is None:
        return
    if old.get("weights") not in (None, weights):
        raise ResumeMismatch(f"{Path(out_dir) / MANIFEST}: the dump there was made from other "
                             f"weights ({old['weights']} there, {weights} now); use another --out")
    try:
        on_disk = get_format(old.get("format", "safetensors"))(out_dir).done_ids()
    except KeyError:
        return   # an unknown format: the manifest check names it
    if not on_disk:
        return
    path = Path(out_dir) / DIGESTS
    try:
        kept = {int(k): v for k, v in json.loads(path.read_text())["digests"].items()}
    except FileNotFoundError:
        warn(f"{out_dir} has no {DIGESTS} (made before callgraph 0.1.1): the tokens of the "
             f"{len(on_disk)} samples there cannot be checked against {data}")
        return
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise CallgraphError(f"{path}: cannot read ({exc}); use another --out") from None
    other = [i for i in sorted(on_disk) if digests.get(i) is None or digests[i] != kept.get(i)]
    if other:
        lines = ", ".join(str(i + 1) for i in other[:8]) + (" ..." if len(other) > 8 else "")
        raise ResumeMismatch(f"{out_dir}: {len(other)} of the {len(on_disk)} samples there were made "
                             f"from other tokens than {data} now holds (lines {lines}); use "
                             f"another --out, or the data file the dump was made from")


def record_digests(out_dir: Path, data: Path, digests: dict[int, str]) -> None:
    atomic_json(Path(out_dir) / DIGESTS, {"data": str(data),
                                          "digests": {str(k): v for k, v in sorted(digests.items())}})
