"""The Python API: a context manager that hooks a live model and dumps what it proves.

    with Capture(model, "eagle3", out_dir="dump/", proof=proof) as cap:
        for ids, input_ids, loss_mask, lengths in my_batches():
            with cap.batch(ids, input_ids, loss_mask, lengths):
                model(input_ids=input_ids.cuda(), attention_mask=mask.cuda())   # prefill

Only the first forward of the target inside a `batch` block is captured (the prefill); later ones
(decode steps of `generate`) are counted and skipped. Forwards outside a block are never captured.
A block whose forward never reaches the target raises `HooksNeverFired`: the static proof and the
live model disagree.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import torch

from ..errors import ProofError
from ..model import Proof
from . import adapters
from .formats import Format, get_format
from .layers import LayerSelection, select_layers
from .locate import Target, locate
from .manifest import EARLIER, carry_over, close_manifest, open_manifest, proof_hash, read_manifest
from .atomic import clean_temps
from .transfer import HostPool, Mover, Staging
from .writer import Job, Writer


class HooksNeverFired(ProofError):
    """The target (or one of its layers) never ran: the proof and the live model disagree."""


@dataclass
class _Armed:
    ids: list[int]
    lengths: list[int]
    seqlen: int
    input_ids: list[torch.Tensor]
    loss_mask: list[torch.Tensor]
    stage: Staging
    forwards: int = 0
    fired: dict = field(default_factory=dict)
    submitted: bool = False
    keep: frozenset | None = None
    packed: bool = False


def _rows(x, lengths: Sequence[int]) -> list[torch.Tensor]:
    if isinstance(x, torch.Tensor):
        x = x.detach().to("cpu", torch.int64)
        if x.dim() == 1:   # packed
            return list(torch.split(x, list(lengths)))
        return [x[b, :n].clone() for b, n in enumerate(lengths)]
    return [r[:n].to(torch.int64).clone() if isinstance(r, torch.Tensor)
            else torch.as_tensor(list(r)[:n], dtype=torch.int64) for r, n in zip(x, lengths)]


class Capture:
    def __init__(self, model: torch.nn.Module, layers: str | LayerSelection = "eagle3",
                 convention: str | None = None, *, out_dir: str | Path,
                 format: str | Format = "safetensors", proof: Proof | None = None,
                 target_class: str | None = None, adapter: str = "auto", on_nan: str = "fail",
                 host_slots: int = 3, writer_depth: int = 2, model_name: str = "",
                 dtype: torch.dtype | None = None, warn: Callable[[str], None] | None = None,
                 format_options: dict | None = None, provenance: dict | None = None,
                 primary: bool = True, finish: bool = True):
        # primary: this process cleans --out and writes the manifest (False on the other ranks
        # of a data-parallel run, which read it); finish: __exit__ completes the manifest (a
        # data-parallel run completes it on rank 0 with every rank's results instead).
        self.primary, self.finish = primary, finish
        self.model, self.proof, self.adapter_name = model, proof, adapter
        self.out_dir = Path(out_dir)
        self.on_nan, self.warn = on_nan, warn
        self.target: Target = locate(model, proof, target_class)
        n = len(self.target.layers)
        self.selection = (layers if isinstance(layers, LayerSelection)
                          else select_layers(layers, convention, n))
        if self.selection.num_layers != n:
            raise ProofError(f"layer selection made for {self.selection.num_layers} layers; "
                             f"the live model has {n}")
        self.dtype = dtype or next((p.dtype for p in model.parameters() if p.is_floating_point()),
                                   torch.float32)
        self.device = next((p.device for p in self.target.module.parameters()), torch.device("cpu"))
        self.fmt = (format if isinstance(format, Format)
                    else get_format(format)(self.out_dir, **(format_options or {})))
        self.selection = self.fmt.select_layers(self.selection)   # a format may need more layers
        self.model_name = model_name or type(model).__name__
        self.provenance = dict(provenance or {})   # e.g. weights and data fingerprints
        self.host_slots, self.writer_depth = host_slots, writer_depth
        self.firings: dict[str, int] = {}
        self.adapters_used: dict[str, str] = {}
        self.skipped_forwards = 0
        self._armed: _Armed | None = None
        self._capturing = False
        self._handles: list = []
        self._done: set[int] = set()
        self._manifest: dict = {}
        self.writer: Writer | None = None

    # ---- lifecycle -------------------------------------------------------------------------
    def __enter__(self) -> "Capture":
        for i in self.selection.output_ids:
            refused = adapters.refusal(self.target.layers[i])
            if refused:
                raise adapters.AdapterError(f"{self.target.layer_path(i)}: {refused}")
        if self.fmt.name == "specforge" and len(self.selection.output_ids) != 3 and self.warn:
            self.warn(f"SpecForge's EAGLE-3 trainer expects 3 aux layers; aux_hidden_state will "
                      f"hold {len(self.selection.output_ids)}")
        if self.primary:
            self.out_dir.mkdir(parents=True, exist_ok=True)   # only once nothing can be refused
            clean_temps(self.out_dir)
            self._manifest = open_manifest(self.out_dir, self._describe())
        else:
            self._manifest = read_manifest(self.out_dir, self._describe())
        self._done = self.fmt.done_ids()
        self.pool = HostPool(self.host_slots, pin=self.device.type == "cuda")
        self.mover = Mover(self.device, self.pool)
        self.writer = Writer(self.fmt, self.pool, self.on_nan, self.writer_depth, self.warn)
        t = self.target
        self._handles.append(t.module.register_forward_pre_hook(self._target_pre))
        self._handles.append(t.module.register_forward_hook(self._target_post))
        for k, i in enumerate(self.selection.output_ids):
            self._handles.append(t.layers[i].register_forward_hook(self._layer_hook(k, i)))
        self._handles.append(t.norm.register_forward_hook(self._norm_hook))
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        for h in self._handles:
            h.remove()
        self._handles.clear()
        stats = None
        try:
            stats = self.writer.close()
        except BaseException:
            if exc_type is None:
                raise
        if exc_type is None and stats is not None:
            self._manifest.update(carry_over(self._manifest.pop(EARLIER, None), self._results(stats)))
            if self.primary and self.finish:
                close_manifest(self.out_dir, self._manifest)

    def drain(self) -> None:
        """Block until every captured batch so far has left host memory for its format."""
        self.writer.drain()

    @property
    def done_ids(self) -> set[int]:
        """Sample ids already on disk (from an earlier run): skip them."""
        return set(self._done)

    @property
    def manifest(self) -> dict:
        return dict(self._manifest)

    @property
    def stats(self):
        return self.writer.stats

    # ---- one batch -------------------------------------------------------------------------
    @contextlib.contextmanager
    def batch(self, ids: Sequence[int], input_ids, loss_mask, lengths: Sequence[int] | None = None,
              attention_mask: torch.Tensor | None = None, write: Sequence[int] | None = None):
        """Arm capture for one prefill of `len(ids)` samples.

        Padding is told by `lengths` (right padding, or packed 1-D `input_ids`: the samples end
        to end, which the model sees as one row [1, sum(lengths)]) or by a CPU
        `attention_mask` [B, T] (any padding side: its ones mark the real tokens). `write`: the
        ids to write (default all), e.g. when a resumed batch holds samples already on disk and
        is run whole so that the others see the same batch as in the first run.
        """
        if self._armed is not None:
            raise ProofError("Capture.batch blocks do not nest")
        rows = None
        if attention_mask is not None:
            mask = attention_mask.detach().to("cpu").bool()
            rows = mask.reshape(-1).nonzero().flatten()
            lengths = mask.sum(1).tolist()
            input_ids = [r[m] for r, m in zip(torch.as_tensor(input_ids).cpu(), mask)]
            loss_mask = [r[m] for r, m in zip(torch.as_tensor(loss_mask).cpu(), mask)]
            seqlen = int(mask.shape[1])
        elif lengths is None:
            lengths = [len(r) for r in input_ids] if not isinstance(input_ids, torch.Tensor) \
                else [input_ids.shape[-1]] * len(ids)
        lengths = [int(n) for n in lengths]
        # packed: the samples end to end in one row (1-D input_ids); the model sees [1, sum]
        packed = isinstance(input_ids, torch.Tensor) and input_ids.dim() == 1
        if attention_mask is None:
            seqlen = (int(input_ids.shape[-1]) if isinstance(input_ids, torch.Tensor)
                      and input_ids.dim() == 2 else sum(lengths) if packed else max(lengths))
        self.writer.check()
        stage = self.mover.begin(lengths, seqlen, len(self.selection.output_ids),
                                 self.target.hidden_size, self.dtype, rows, packed=packed)
        self._armed = _Armed(list(map(int, ids)), lengths, seqlen, _rows(input_ids, lengths),
                             _rows(loss_mask, lengths), stage,
                             keep=None if write is None else frozenset(map(int, write)),
                             packed=packed)
        try:
            yield self
            armed = self._armed
            if armed.forwards == 0:
                raise HooksNeverFired(self._never_fired())
        finally:
            armed, self._armed, self._capturing = self._armed, None, False
            if not armed.submitted:
                if armed.stage.host.done is not None:   # a copy-out may still be landing
                    armed.stage.host.done.synchronize()
                self.pool.release(armed.stage.host)

    # ---- hooks -----------------------------------------------------------------------------
    def _target_pre(self, module, args):
        armed = self._armed
        self._count(self.target.path or "<model>")
        if armed is None:
            return
        armed.forwards += 1
        self._capturing = armed.forwards == 1
        if not self._capturing:
            self.skipped_forwards += 1

    def _target_post(self, module, args, output):
        if not self._capturing:
            return
        self._capturing = False
        armed = self._armed
        want = [self.target.layer_path(i) for i in self.selection.output_ids] + [self.target.norm_path]
        missing = [p for p in want if armed.fired.get(p) != 1]
        if missing:
            raise HooksNeverFired(
                f"the static proof and the live model disagree: {self.target.path or '<model>'} ran "
                f"but {', '.join(missing)} fired {[armed.fired.get(p, 0) for p in missing]} times "
                f"(expected once each) in one forward")
        slot = self.mover.finish(armed.stage)
        self.writer.submit(Job(slot, armed.ids, armed.lengths, armed.input_ids, armed.loss_mask,
                               armed.keep))
        armed.submitted = True

    def _layer_hook(self, k: int, index: int):
        path = self.target.layer_path(index)

        def hook(module, args, output):
            self._count(path)
            if not self._capturing:
                return
            hidden = self._adapt(path, output, adapters.ADAPTERS, self.adapter_name)
            self.mover.put_layer(self._armed.stage, k, hidden)
            self._armed.fired[path] = self._armed.fired.get(path, 0) + 1
        return hook

    def _norm_hook(self, module, args, output):
        path = self.target.norm_path
        self._count(path)
        if not self._capturing:
            return
        normed = self._adapt(path, output, adapters.NORM_ADAPTERS, "auto")
        self.mover.put_final(self._armed.stage, normed)
        self._armed.fired[path] = self._armed.fired.get(path, 0) + 1

    def _adapt(self, path, output, registry, name) -> torch.Tensor:
        adapter = adapters.choose(output, self.target.hidden_size, path, name, registry)
        self.adapters_used[path] = adapter.name
        hidden = adapter.extract(output)
        a = self._armed
        ntok = sum(a.lengths)
        rows = (1, ntok) if a.packed else (len(a.lengths), a.seqlen)
        ok = ((hidden.dim() == 3 and tuple(hidden.shape[:2]) == rows)
              or (hidden.dim() == 2 and hidden.shape[0] in (ntok, rows[0] * rows[1])))
        if not ok:
            raise adapters.AdapterError(
                f"{path} returned {adapters.describe(output)}: expected [batch={rows[0]}, "
                f"tokens={rows[1]}, {self.target.hidden_size}] or packed [{ntok}, "
                f"{self.target.hidden_size}] for the armed batch")
        return hidden

    def _count(self, path: str) -> None:
        self.firings[path] = self.firings.get(path, 0) + 1

    # ---- reporting -------------------------------------------------------------------------
    def _never_fired(self) -> str:
        t = self.target
        how = {"proof": f"by the proof's attribute chain {'.'.join(self.proof.attribute_chain) or '<entry>'}"
                        if self.proof else "by the proof",
               "class": "by class name", "auto": "by shape"}[t.found_by]
        return (f"the static proof and the live model disagree: the target "
                f"{type(t.module).__name__} at '{t.path or '<model>'}' (found {how}) never ran "
                f"during the forward, so no hook fired and nothing was captured")

    def _describe(self) -> dict:
        t, sel = self.target, self.selection
        described = {
            "format": self.fmt.name,
            "model": self.model_name,
            "model_class": f"{type(self.model).__module__}.{type(self.model).__name__}",
            "target_path": t.path,
            "target_class": f"{type(t.module).__module__}.{type(t.module).__name__}",
            "target_found_by": t.found_by,
            "layers": sel.to_json(),
            "output_layer_ids": list(sel.output_ids),
            "convention": sel.convention.value,
            "layer_paths": [t.layer_path(i) for i in sel.output_ids],
            "norm_path": t.norm_path,
            "num_layers": sel.num_layers,
            "hidden_size": t.hidden_size,
            "dtype": str(self.dtype).replace("torch.", ""),
            "proof": None if self.proof is None else {
                "hash": proof_hash(self.proof), "entry": self.proof.entry,
                "target": self.proof.target, "attribute_chain": list(self.proof.attribute_chain)},
            "on_nan": self.on_nan,
            **self.provenance,
            "tensors": {"hidden_state": "last layer's output after the final norm",
                        "aux_hidden_state": "outputs of the chosen layers, concatenated ascending"},
        }
        described.update(self.fmt.describe_layers(sel, described))
        return described

    def _results(self, stats) -> dict:
        want = set(self._manifest["layer_paths"]) | {self._manifest["norm_path"]}
        return {
            "fired": {p: n for p, n in sorted(self.firings.items())},
            "fired_paths": sorted(p for p in self.firings if p in want),
            "adapters": dict(sorted(self.adapters_used.items())),
            "skipped_forwards": self.skipped_forwards,
            "samples_written": stats.samples,
            "samples_on_disk": len(self.fmt.done_ids()),
            "tokens_written": stats.tokens,
            "bytes_written": stats.bytes,
            "nan_skipped": sorted(stats.nan_skipped),
        }
