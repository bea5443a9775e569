"""Move captured states off the GPU without stalling it.

Why each piece is here:
- a hook only *packs* the layer's output into a device staging buffer (one device-to-device copy
  on the compute stream, so a later in-place update of that tensor, as SGLang's fused add-norm
  does, cannot change what was captured; padding rows are dropped here);
- at the end of the forward one event is recorded; a side stream waits on it and copies the packed
  rows into a pinned host buffer with non-blocking copies, plus a per-token finite flag;
- the host buffers come from a bounded pool: when the writer falls behind, taking the next buffer
  blocks the caller (back-pressure) instead of growing host memory; nothing calls `.cpu()` or
  synchronizes the compute stream. Staging slots are double-buffered and reused only after their
  copy-out event, which the compute stream waits on (on the GPU, not the host).
On CPU the staging buffer *is* the host buffer and the same code runs without streams.
"""
from __future__ import annotations

import queue
from dataclasses import dataclass, field

import torch


@dataclass
class HostSlot:
    """One batch's worth of host memory: packed rows of every sample, trimmed of padding."""

    aux: torch.Tensor      # [capacity, K*H]
    final: torch.Tensor    # [capacity, H]
    bad: torch.Tensor      # [capacity] bool: token has a NaN/Inf in any captured state
    done: object = None    # torch.cuda.Event once the copy-out is queued; None on CPU

    def fits(self, ntok: int, width: int, hidden: int, dtype: torch.dtype) -> bool:
        return (self.aux.shape[0] >= ntok and self.aux.shape[1] == width
                and self.final.shape[1] == hidden and self.aux.dtype == dtype)


class HostPool:
    """A bounded pool of (pinned, on CUDA) host slots; `acquire` blocks while all are in use."""

    def __init__(self, slots: int, pin: bool):
        self.pin = pin
        self._free: queue.Queue = queue.Queue()
        for _ in range(max(1, slots)):
            self._free.put(None)   # lazily allocated, sized by the first batch that takes it
        self.bytes = 0

    def acquire(self, ntok: int, width: int, hidden: int, dtype: torch.dtype,
                timeout: float | None = None) -> HostSlot:
        slot = self._free.get(timeout=timeout)
        if slot is None or not slot.fits(ntok, width, hidden, dtype):
            if slot is not None:
                self.bytes -= _nbytes(slot)
            cap = max(ntok, slot.aux.shape[0] if slot is not None else 0)
            slot = HostSlot(
                aux=torch.empty(cap, width, dtype=dtype, pin_memory=self.pin),
                final=torch.empty(cap, hidden, dtype=dtype, pin_memory=self.pin),
                bad=torch.empty(cap, dtype=torch.bool, pin_memory=self.pin),
            )
            self.bytes += _nbytes(slot)
        slot.done = None
        return slot

    def release(self, slot: HostSlot) -> None:
        self._free.put(slot)


def _nbytes(slot: HostSlot) -> int:
    return sum(t.numel() * t.element_size() for t in (slot.aux, slot.final, slot.bad))


@dataclass
class Staging:
    """Where one batch's captured rows are packed on the device before they go to the host."""

    aux: torch.Tensor           # [ntok, K, H] view of the slot's device (or host) buffer
    final: torch.Tensor         # [ntok, H]
    ntok: int
    batch: int
    seqlen: int
    valid: torch.Tensor | None  # flat row indices of real tokens when the batch is padded
    host: HostSlot
    slot: "_StageSlot | None" = None


@dataclass
class _StageSlot:
    aux: torch.Tensor | None = None
    final: torch.Tensor | None = None
    copied: object = None       # event: the last copy-out from this slot finished
    extra: list = field(default_factory=list)


class Mover:
    """Packs hook outputs into staging buffers and ships each finished batch to a host slot."""

    def __init__(self, device: torch.device, pool: HostPool, stage_slots: int = 2):
        self.device = torch.device(device)
        self.cuda = self.device.type == "cuda"
        self.pool = pool
        self.side = torch.cuda.Stream(device=self.device) if self.cuda else None
        self._slots = [_StageSlot() for _ in range(stage_slots)]
        self._next = 0

    def begin(self, lengths: list[int], seqlen: int, layers: int, hidden: int,
              dtype: torch.dtype, rows: torch.Tensor | None = None,
              packed: bool = False) -> Staging:
        """Take a host slot (may block: back-pressure) and a staging slot for one batch.

        `rows`: flat indices (into [B * T]) of the real tokens, sample by sample; by default the
        first `lengths[b]` positions of each row (right padding). `packed`: the samples are end
        to end in one row, every position a real token.
        """
        ntok = int(sum(lengths))
        host = self.pool.acquire(ntok, layers * hidden, hidden, dtype)
        valid = None
        if not packed and ntok != len(lengths) * seqlen:
            if rows is None:
                rows = torch.tensor([b * seqlen + t for b, n in enumerate(lengths) for t in range(n)],
                                    dtype=torch.long)
            valid = rows.to(self.device, non_blocking=True)
        if not self.cuda:
            return Staging(host.aux[:ntok].view(ntok, layers, hidden), host.final[:ntok],
                           ntok, len(lengths), seqlen, valid, host)
        slot = self._slots[self._next]
        self._next = (self._next + 1) % len(self._slots)
        if slot.copied is not None:   # the GPU waits for the last copy-out; the host does not
            torch.cuda.current_stream(self.device).wait_event(slot.copied)
        need = (ntok, layers * hidden)
        if (slot.aux is None or slot.aux.shape[0] < ntok or slot.aux.shape[1] != need[1]
                or slot.aux.dtype != dtype):
            cap = max(ntok, 0 if slot.aux is None else slot.aux.shape[0])
            slot.aux = torch.empty(cap, layers * hidden, dtype=dtype, device=self.device)
            slot.final = torch.empty(cap, hidden, dtype=dtype, device=self.device)
        return Staging(slot.aux[:ntok].view(ntok, layers, hidden), slot.final[:ntok],
                       ntok, len(lengths), seqlen, valid, host, slot)

    def pack(self, stage: Staging, hidden: torch.Tensor) -> torch.Tensor:
        """[B, T, H] or packed [ntok, H] -> [ntok, H] rows of real tokens (padding dropped)."""
        flat = hidden.reshape(-1, hidden.shape[-1])
        if hidden.dim() == 3 and stage.valid is not None:
            return flat.index_select(0, stage.valid)
        return flat

    def put_layer(self, stage: Staging, k: int, hidden: torch.Tensor) -> None:
        stage.aux[:, k].copy_(self.pack(stage, hidden))

    def put_final(self, stage: Staging, normed: torch.Tensor) -> None:
        stage.final.copy_(self.pack(stage, normed))

    def finish(self, stage: Staging) -> HostSlot:
        """Queue the copy-out; returns the host slot, whose `done` event the writer waits on."""
        host, n = stage.host, stage.ntok
        aux2d = stage.aux.reshape(n, -1)
        if not self.cuda:
            host.bad[:n] = _bad_rows(aux2d, stage.final)
            return host
        ready = torch.cuda.Event()
        ready.record(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(self.side):
            self.side.wait_event(ready)
            host.bad[:n].copy_(_bad_rows(aux2d, stage.final), non_blocking=True)
            host.aux[:n].copy_(aux2d, non_blocking=True)
            host.final[:n].copy_(stage.final, non_blocking=True)
            done = torch.cuda.Event(blocking=True)
            done.record(self.side)
        host.done = done
        stage.slot.copied = done
        return host


def _bad_rows(aux2d: torch.Tensor, final: torch.Tensor) -> torch.Tensor:
    return ~(torch.isfinite(aux2d).all(dim=-1) & torch.isfinite(final).all(dim=-1))
