"""Output formats, one module each, behind one small interface (`Format`).

A format is told which samples exist already (resume), is handed finished samples whose tensors
are views into a host buffer that is reused once `write` returns (keep `Sample.owned()` copies of
what outlives the call), and is closed once. Registry order is the `--format` choice list; the first is the default.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import torch

from ..choices import FORMAT_NAMES  # noqa: F401  (re-exported)
from ..layers import LayerSelection


@dataclass
class Sample:
    """One captured sample, trimmed of padding.

    Its tensors are views of a host slot that the writer hands to the next batch once `write`
    returns: a format that keeps a sample past `write` keeps `sample.owned()`. (Whether a
    tensor is a view cannot be read off the tensor: under `torch.inference_mode()` a view's
    `_base` is None. So the rule is unconditional.)
    """

    id: int
    input_ids: torch.Tensor   # [T] int64
    loss_mask: torch.Tensor   # [T] int64
    aux: torch.Tensor         # [T, K*H], the K layers concatenated in ascending order
    final: torch.Tensor       # [T, H], last layer's output after the final norm

    def owned(self) -> "Sample":
        """A copy whose tensors own their memory (safe to keep after `write` returns)."""
        return Sample(self.id, self.input_ids.clone(), self.loss_mask.clone(), self.aux.clone(),
                      self.final.clone())

    def state_bytes(self) -> int:
        """Bytes of the hidden states (what dominates a sample's size on disk)."""
        return sum(t.numel() * t.element_size() for t in (self.aux, self.final))


class Format:
    name = ""
    # bytes a sample costs on disk beyond its tensors' own (file headers, pickling); `--dry-run`
    sample_overhead = 0

    def __init__(self, out_dir: Path):
        self.out_dir = Path(out_dir)

    def select_layers(self, selection: LayerSelection) -> LayerSelection:
        """The layers to capture for this format: the user's, unless its layout needs more
        (vLLM's stacks the last decoder layer's own output after the chosen ones)."""
        return selection

    def describe_layers(self, selection: LayerSelection, manifest: dict) -> dict:
        """Manifest entries this format adds: where each layer sits in its files and in which
        project's ids. `manifest` is what is described so far (layer paths, norm path)."""
        return {}

    def done_ids(self) -> set[int]:
        raise NotImplementedError

    def write(self, samples: list[Sample]) -> int:
        """Write (or buffer) the samples; returns bytes put on disk by this call."""
        raise NotImplementedError

    def close(self) -> int:
        return 0

    def read(self, sample_id: int) -> dict:
        """One sample on disk, shaped like a SpecForge record: `input_ids` [T], `loss_mask` [T],
        `hidden_state` [1, T, H], `aux_hidden_state` [1, T, K*H]. `hidden_state` is the output
        of the manifest's `hidden_state_path` (the final norm unless the format says otherwise)."""
        raise NotImplementedError

    def audit(self) -> list[str]:
        """Problems of the format's own bookkeeping (index, headers), one line each."""
        return []


class FilePerSample(Format):
    """A format of one file a sample: the files of a batch are written by a small thread pool
    (the disk works on several at once), each by `_write_one`, before `write` returns."""

    def __init__(self, out_dir: Path, io_threads: int = 8, **_):
        super().__init__(out_dir)
        self._pool = ThreadPoolExecutor(max_workers=io_threads) if io_threads > 1 else None

    def _write_one(self, sample: Sample) -> int:
        raise NotImplementedError

    def write(self, samples: list[Sample]) -> int:
        self.out_dir.mkdir(parents=True, exist_ok=True)
        if self._pool is None or len(samples) < 2:
            return sum(self._write_one(s) for s in samples)
        return sum(self._pool.map(self._write_one, samples))

    def close(self) -> int:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
        return 0


def get_format(name: str):
    from .modelopt import ModelOptFormat
    from .safetensors_shards import SafetensorsFormat
    from .specforge import SpecForgeFormat
    from .speculators import SpeculatorsFormat
    formats = {f.name: f for f in (SafetensorsFormat, SpecForgeFormat, SpeculatorsFormat,
                                   ModelOptFormat)}
    formats["vllm"] = SpeculatorsFormat     # one layout: see speculators.py for why
    return formats[name]


