"""SpecForge's offline EAGLE-3 layout: one `torch.save` dict a sample.

What SpecForge's `scripts/prepare_hidden_states.py` writes and `OfflineEagle3Dataset` reads
(`torch.load`, files listed by the `.ckpt` suffix): `rows_{g}-{g+2000}/data_{idx}.ckpt` holding
`input_ids` [T] int64, `loss_mask` [T] int64, `hidden_state` [1, T, H] (after the final norm) and
`aux_hidden_state` [1, T, 3H] (three layers concatenated, ascending). Unlike that script, padding
is never stored and each file appears whole (temp + fsync + rename), so resume can trust
existence alone.
"""
from __future__ import annotations

import re
from pathlib import Path

import torch

from ..atomic import atomic_torch_save
from . import FilePerSample, Sample

GROUP = 2000
_NAME = re.compile(r"data_(\d+)\.ckpt$")


def sample_path(out_dir: Path, idx: int, group: int = GROUP) -> Path:
    g = (idx // group) * group
    return Path(out_dir) / f"rows_{g}-{g + group}" / f"data_{idx}.ckpt"


class SpecForgeFormat(FilePerSample):
    name = "specforge"
    sample_overhead = 2400   # torch.save's zip container and pickle, measured on torch 2.13

    def done_ids(self) -> set[int]:
        return {int(m.group(1)) for p in self.out_dir.glob("rows_*/data_*.ckpt")
                if (m := _NAME.search(p.name))}

    def _write_one(self, s: Sample) -> int:
        data = {
            "input_ids": s.input_ids.to(torch.int64).clone(),
            "loss_mask": s.loss_mask.to(torch.int64).clone(),
            # clone: torch.save stores a view's whole storage, i.e. the whole batch buffer
            "hidden_state": s.final.clone().unsqueeze(0),
            "aux_hidden_state": s.aux.clone().unsqueeze(0),
        }
        path = sample_path(self.out_dir, s.id)
        path.parent.mkdir(parents=True, exist_ok=True)
        return atomic_torch_save(path, data)

    def audit(self) -> list[str]:
        return [f"{p.relative_to(self.out_dir)}: not where sample {m.group(1)} belongs "
                f"({sample_path(self.out_dir, int(m.group(1))).relative_to(self.out_dir)})"
                for p in sorted(self.out_dir.glob("rows_*/data_*.ckpt"))
                if (m := _NAME.search(p.name)) and p != sample_path(self.out_dir, int(m.group(1)))]

    def read(self, sample_id: int) -> dict:
        return torch.load(sample_path(self.out_dir, sample_id), weights_only=True)
