"""vLLM's hidden-states extraction and the `speculators` trainer: one `.safetensors` a request.

What vLLM's `ExampleHiddenStatesConnector` writes (vllm-project/vllm
`vllm/distributed/kv_transfer/kv_connector/v1/example_hidden_states_connector.py` at 015a95c8,
`_submit_async_write`) and what speculators reads (vllm-project/speculators c05b95b3:
`hs_connectors/src/hs_connectors/transfer.py` `FileTransfer.get_cached`, and
`src/speculators/train/data.py` `ArrowDataset._get_raw_data`):

    OUT/hs_{i}.safetensors      i = the sample's row (callgraph: its line of --data)
      hidden_states  [T, K+1, H]  model dtype; the K chosen layers ascending, then the last
                                  decoder layer's output *before* the final norm
      token_ids      [T]          int64

The trainer loads it with `safetensors.torch.load_file`, checks `token_ids` equal its dataset
row's `input_ids`, and takes `hidden_states[:, :-1].flatten(1)` as the aux states
`[T, K*H]` and `hidden_states[:, -1]` as `verifier_last_hidden_states` (to which it applies the
verifier's own norm). The layer ids are vLLM's `eagle_aux_hidden_state_layer_ids`: id k is the
residual stream entering layer k (= output of layer k-1) and id N is the last layer's output,
so speculators' default `[2, N//2, N-3, N]` is callgraph's output ids `[1, N//2-1, N-4, N-1]`:
this format adds the last decoder layer to the selection (`select_layers`) when it is missing.

One format, not two: vLLM and speculators store the same tensors under the same keys; they
differ only in the file's name (vLLM names it by request id, `{req_id}.safetensors`, which
carries no sample identity; speculators' data generation renames it `hs_{i}.safetensors`,
`FileTransfer.cache`). callgraph writes speculators' names, so `--format vllm` is the same.

Beside what vLLM writes, each file holds `loss_mask` [T] int64 (speculators reads the mask from
its Arrow dataset, never from this file; the key is ignored there and costs 8 bytes a token),
and its header's `__metadata__` names the sample. Each file appears whole (temp + fsync +
rename), and a temp name does not end in `.safetensors`, so resume (and speculators' own
`get_existing_hidden_state_indices`) can trust existence alone.
"""
from __future__ import annotations

import re
from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import load_file, save

from ..atomic import atomic_write
from ..layers import LayerSelection
from . import FilePerSample, Sample

_NAME = re.compile(r"^hs_(\d+)\.safetensors$")


def sample_path(out_dir: Path, idx: int) -> Path:
    return Path(out_dir) / f"hs_{idx}.safetensors"


class SpeculatorsFormat(FilePerSample):
    name = "speculators"
    sample_overhead = 280    # the safetensors header with its metadata, measured (safetensors 0.8)

    # ---- layers ----------------------------------------------------------------------------
    def select_layers(self, selection: LayerSelection) -> LayerSelection:
        last = selection.num_layers - 1
        if last in selection.output_ids:
            return selection
        return LayerSelection(selection.output_ids + (last,), selection.convention,
                              selection.num_layers, selection.spec)

    def describe_layers(self, selection: LayerSelection, manifest: dict) -> dict:
        n = selection.num_layers
        vllm_ids = [i + 1 for i in selection.output_ids]
        return {
            "hidden_state_path": manifest["layer_paths"][-1],
            "tensors": {
                "hidden_states": f"[T, {len(vllm_ids)}, H]: vLLM eagle_aux_hidden_state_layer_ids "
                                 f"{vllm_ids} in this order (id k = the residual stream entering "
                                 f"layer k; id {n} = the last layer's output before the final norm)",
                "token_ids": "[T] int64",
                "loss_mask": "[T] int64 (not read by speculators, which takes its Arrow dataset's)",
            },
            "speculators": {
                "train --target-layer-ids": vllm_ids[:-1],
                "launch_vllm --target-layer-ids": vllm_ids[:-1],
                "vllm eagle_aux_hidden_state_layer_ids": vllm_ids,
                "train --hidden-states-path": str(self.out_dir),
                "file": "hs_{row}.safetensors, row = the sample's line of --data (0-based)",
            },
        }

    # ---- writing ---------------------------------------------------------------------------
    def done_ids(self) -> set[int]:
        return {int(m.group(1)) for p in self.out_dir.glob("hs_*.safetensors")
                if (m := _NAME.match(p.name))}

    def _write_one(self, s: Sample) -> int:
        t, width = s.aux.shape
        h = s.final.shape[-1]
        data = {
            # the last aux block is the last decoder layer's output (select_layers saw to it)
            "hidden_states": s.aux.contiguous().view(t, width // h, h),
            "token_ids": s.input_ids.to(torch.int64).contiguous(),
            "loss_mask": s.loss_mask.to(torch.int64).contiguous(),
        }
        raw = save(data, metadata={"format": "callgraph-speculators-1", "sample": str(s.id)})
        return atomic_write(sample_path(self.out_dir, s.id), lambda f: f.write(raw))


    # ---- reading ---------------------------------------------------------------------------
    def read(self, sample_id: int) -> dict:
        """As speculators splits it, then shaped like a SpecForge record: `hidden_state` is
        `hidden_states[:, -1]` (before the final norm; the manifest's `hidden_state_path`) and
        `aux_hidden_state` holds every stacked layer, the last one included."""
        d = load_file(str(sample_path(self.out_dir, sample_id)))
        hs = d["hidden_states"]
        if hs.dim() != 3:
            raise ValueError(f"hidden_states is {list(hs.shape)}, expected [T, layers, H]")
        return {"input_ids": d["token_ids"], "loss_mask": d["loss_mask"],
                "hidden_state": hs[:, -1].unsqueeze(0), "aux_hidden_state": hs.flatten(1).unsqueeze(0)}

    def audit(self) -> list[str]:
        problems = []
        for p in sorted(self.out_dir.glob("hs_*.safetensors")):
            m = _NAME.match(p.name)
            if not m:
                continue
            try:
                with safe_open(str(p), framework="pt") as f:
                    meta, keys = f.metadata() or {}, set(f.keys())
            except Exception as exc:  # an unreadable header is the finding itself
                problems.append(f"{p.name}: unreadable header ({type(exc).__name__}: {exc})")
                continue
            if not {"hidden_states", "token_ids"} <= keys:
                problems.append(f"{p.name}: holds {sorted(keys)}, speculators needs hidden_states "
                                f"and token_ids")
            if meta.get("sample") not in (None, m.group(1)):
                problems.append(f"{p.name}: its header says sample {meta['sample']}")
        return problems
