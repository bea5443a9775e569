"""NVIDIA ModelOpt's offline EAGLE-3 data: one `torch.save` dict a conversation.

What ModelOpt's `examples/speculative_decoding/collect_hidden_states/compute_hidden_states_hf.py`
writes and its `OfflineSupervisedDataset` reads (NVIDIA/Model-Optimizer a2fbac7b:
`modelopt/torch/speculative/eagle/utils.py`; the files are listed by
`Path(offline_data_path).rglob("*.pt")` in `examples/speculative_decoding/eagle_utils.py`):

    OUT/{conversation_id}.pt    conversation_id = the sample's id (its line of --data)
      input_ids          [T]      int64
      hidden_states      [T, H]   model dtype; after the final norm (HF `hidden_states[-1]`)
      aux_hidden_states  [T, K*H] model dtype; the chosen layers' outputs concatenated ascending
      loss_mask          [T]      int64 (read when training with answer_only_loss)
      conversation_id    int

The layer ids are ModelOpt's `eagle_aux_hidden_state_layer_ids`: 0-based, the *output* of
decoder layer k (the dump takes HF `hidden_states[k + 1]`; training hooks `layers[k]`), i.e.
callgraph's output ids; its default `{1, N//2-1, N-4}` is `--layers eagle3`. `hidden_states` is
post-norm, which the loader assumes unless the file says `hidden_states_prenorm` (never written
here). Unlike ModelOpt's script, each file appears whole (temp + fsync + rename; the temp name
does not end in `.pt`, so the loader's `rglob("*.pt")` never sees a torn file) and holds only its
own sample.
"""
from __future__ import annotations

import re
from pathlib import Path

import torch

from ..atomic import atomic_torch_save
from ..layers import LayerSelection
from . import FilePerSample, Sample

_NAME = re.compile(r"^(\d+)\.pt$")


def sample_path(out_dir: Path, idx: int) -> Path:
    return Path(out_dir) / f"{idx}.pt"


class ModelOptFormat(FilePerSample):
    name = "modelopt"
    sample_overhead = 2200   # torch.save's zip container and pickle, measured on torch 2.13

    def describe_layers(self, selection: LayerSelection, manifest: dict) -> dict:
        return {"modelopt": {
            "eagle_aux_hidden_state_layer_ids": list(selection.output_ids),
            "offline_data_path": str(self.out_dir),
            "file": "{conversation_id}.pt, conversation_id = the sample's line of --data (0-based)",
        }}

    def done_ids(self) -> set[int]:
        return {int(m.group(1)) for p in self.out_dir.glob("*.pt") if (m := _NAME.match(p.name))}

    def _write_one(self, s: Sample) -> int:
        data = {
            "input_ids": s.input_ids.to(torch.int64).clone(),
            # clone: torch.save stores a view's whole storage, i.e. the whole batch buffer
            "hidden_states": s.final.clone(),
            "aux_hidden_states": s.aux.clone(),
            "loss_mask": s.loss_mask.to(torch.int64).clone(),
            "conversation_id": s.id,
        }
        return atomic_torch_save(sample_path(self.out_dir, s.id), data)


    def read(self, sample_id: int) -> dict:
        d = torch.load(sample_path(self.out_dir, sample_id), weights_only=True)
        if d.get("conversation_id") != sample_id:
            raise ValueError(f"holds conversation_id {d.get('conversation_id')!r}")
        return {"input_ids": d["input_ids"], "loss_mask": d["loss_mask"],
                "hidden_state": d["hidden_states"].unsqueeze(0),
                "aux_hidden_state": d["aux_hidden_states"].unsqueeze(0)}

    def audit(self) -> list[str]:
        """ModelOpt trains on every `*.pt` below the folder, so any other one is a problem."""
        return [f"{p.relative_to(self.out_dir)}: a .pt file ModelOpt's loader would train on, "
                f"but no sample of this dump" for p in sorted(self.out_dir.rglob("*.pt"))
                if not (p.parent == self.out_dir and _NAME.match(p.name))]
