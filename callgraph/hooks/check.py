"""Check a dump against the model it came from: recompute samples one at a time and compare.

A fast dump that writes wrong data must never pass for a result (the safetensors format of
callgraph 0.1.0 wrote other samples' states, with exit 0). `check_dump` picks samples that are on
disk at random (seeded, so a failure can be replayed), runs each alone through the live model
(a batch of one: no padding, no neighbour to be confused with) with plain forward hooks at the
layer and norm paths the manifest names, and compares with what the format wrote.

The error is measured row by row (token by token): the L2 distance of a written row from the
recomputed one, relative to the recomputed row's norm, and the worst row counts. A row of another
sample is off by about 1.4 (two unrelated vectors of like norm), however few such rows there are;
a padded batch and a one-sample forward differ by ~1e-6 in float32 and, in bfloat16 on an 8B
random-init Llama on an H200 (masked and unmasked attention kernels), by up to ~0.05 at the
single largest element, which is why the error is not taken elementwise.
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import torch

from ..errors import CallgraphError
from . import adapters
from .formats import get_format
from .manifest import MANIFEST

# Largest row error allowed (L2 of the difference over L2 of the recomputed row).
TOLERANCE = {"float32": 1e-4, "float16": 0.25, "bfloat16": 0.25}


class DumpCheckFailed(CallgraphError):
    """Recomputed samples differ from what the dump holds: the data is wrong."""

    exit_code = 1


@dataclass
class CheckReport:
    checked: list[int] = field(default_factory=list)
    worst: float = 0.0            # the largest row error seen
    worst_id: int | None = None
    tolerance: float = 0.0
    problems: list[str] = field(default_factory=list)

    def summary(self) -> str:
        head = (f"checked {len(self.checked)} samples against one-sample forwards: worst row "
                f"error {self.worst:.2e}" + (f" (sample {self.worst_id})" if self.worst_id is not None
                                             else "") + f", tolerance {self.tolerance:g}")
        return head + (f"; {len(self.problems)} wrong" if self.problems else "; all match")


def _relative(got: torch.Tensor, want: torch.Tensor) -> float:
    """The worst row's L2 error relative to its recomputed row's L2 norm (NaN counts as wrong)."""
    diff = torch.linalg.vector_norm(got.float() - want, dim=-1)
    norm = torch.linalg.vector_norm(want, dim=-1).clamp_min(1e-12)
    err = diff / norm
    return float("inf") if bool(torch.isnan(err).any()) else err.max().item()


def check_dump(model: torch.nn.Module, out_dir: Path, count: int, seed: int = 0,
               tokens: Callable[[list[int]], dict[int, list[int]]] | None = None,
               forward_kwargs: dict | None = None) -> CheckReport:
    """Recompute `count` random samples of the dump in `out_dir` with `model` and compare.

    `tokens(ids)` (sample id -> input ids, e.g. read from the data file) also checks that each
    sample was made from the tokens it should have been made from.
    """
    out_dir = Path(out_dir)
    try:
        manifest = json.loads((out_dir / MANIFEST).read_text())
    except (OSError, ValueError) as exc:
        raise CallgraphError(f"{out_dir / MANIFEST}: cannot read the dump's manifest ({exc})") from None
    fmt = get_format(manifest["format"])(out_dir)
    on_disk = sorted(fmt.done_ids())
    report = CheckReport(tolerance=TOLERANCE.get(manifest.get("dtype"), 0.25))
    pick = sorted(random.Random(seed).sample(on_disk, min(count, len(on_disk))))
    if not pick:
        return report
    expected = tokens(pick) if tokens is not None else None
    # hidden_state is the final norm's output unless the format stores another (speculators)
    paths = list(manifest["layer_paths"]) + [manifest.get("hidden_state_path", manifest["norm_path"])]
    chosen = manifest.get("adapters") or {}
    hidden = int(manifest["hidden_size"])
    device = next((p.device for p in model.parameters()), torch.device("cpu"))
    seen: dict[str, torch.Tensor] = {}

    read = adapters.reader(hidden, manifest["norm_path"], chosen)

    def keep(path: str):
        def hook(module, args, output):
            seen[path] = read(path, output).detach().to("cpu", torch.float32).clone()
        return hook

    handles = []
    try:
        for path in paths:
            handles.append(model.get_submodule(path).register_forward_hook(keep(path)))
        with torch.no_grad():
            for sid in pick:
                _check_one(model, fmt.read(sid), sid, paths, seen, device, expected,
                           forward_kwargs or {}, report)
    finally:
        for h in handles:
            h.remove()
    return report


def _check_one(model, record, sid, paths, seen, device, tokens, kwargs, report) -> None:
    ids = record["input_ids"]
    if tokens is not None and ids.tolist() != tokens.get(sid):
        report.problems.append(f"sample {sid}: its input_ids are not those of the data file's "
                               f"line {sid + 1}")
    seen.clear()
    model(input_ids=ids.to(device).unsqueeze(0), **kwargs)
    missing = [p for p in paths if p not in seen]
    if missing:
        report.problems.append(f"sample {sid}: {', '.join(missing)} did not run in its forward")
        return
    want_aux = torch.cat([seen[p].reshape(-1, seen[p].shape[-1]) for p in paths[:-1]], -1)
    want_final = seen[paths[-1]].reshape(-1, seen[paths[-1]].shape[-1])
    got_aux, got_final = record["aux_hidden_state"][0], record["hidden_state"][0]
    if got_aux.shape != want_aux.shape or got_final.shape != want_final.shape:
        report.problems.append(f"sample {sid}: shapes {list(got_aux.shape)}/{list(got_final.shape)}, "
                               f"recomputed {list(want_aux.shape)}/{list(want_final.shape)}")
        return
    err = max(_relative(got_aux, want_aux), _relative(got_final, want_final))
    report.checked.append(sid)
    if err >= report.worst:
        report.worst, report.worst_id = err, sid
    if not err <= report.tolerance:   # NaN counts as wrong
        report.problems.append(f"sample {sid}: row error {err:.2e} against its own forward "
                               f"(tolerance {report.tolerance:g})")
