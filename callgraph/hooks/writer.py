"""The background writer: waits for each batch's copy-out, checks it, hands samples to a format.

The queue is bounded, and host slots return to the pool only after their samples are written, so
host memory stays bounded and a slow disk slows the producer down instead of filling RAM.
An error in the writer thread is kept and raised again in the caller's thread at the next
`submit` or at `close`, so a failed write never passes silently.
"""
from __future__ import annotations

import queue
import threading
from dataclasses import dataclass, field
from typing import Callable

import torch

from ..errors import CallgraphError
from .choices import ON_NAN
from .formats import Format, Sample
from .transfer import HostPool, HostSlot


class NonFiniteSample(CallgraphError):
    """A captured sample holds NaN or Inf and the policy is to fail."""


@dataclass
class Job:
    slot: HostSlot
    ids: list[int]
    lengths: list[int]
    input_ids: list[torch.Tensor]   # per sample, trimmed, CPU
    loss_mask: list[torch.Tensor]
    keep: frozenset | None = None   # ids to write (None: all); the others are on disk already


@dataclass
class WriterStats:
    samples: int = 0
    tokens: int = 0
    bytes: int = 0
    nan_skipped: list[int] = field(default_factory=list)


class Writer:
    def __init__(self, fmt: Format, pool: HostPool, on_nan: str = "fail", depth: int = 2,
                 warn: Callable[[str], None] | None = None):
        if on_nan not in ON_NAN:
            raise CallgraphError(f"--on-nan {on_nan!r}: expected one of {', '.join(ON_NAN)}")
        self.fmt, self.pool, self.on_nan, self.warn = fmt, pool, on_nan, warn
        self.stats = WriterStats()
        self._q: queue.Queue = queue.Queue(maxsize=max(1, depth))
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="callgraph-writer", daemon=True)
        self._thread.start()

    def submit(self, job: Job) -> None:
        self.check()
        self._q.put(job)   # blocks when full: back-pressure on the producer

    def check(self) -> None:
        if self._error is not None:
            err, self._error = self._error, None
            raise err

    def drain(self) -> None:
        """Wait until every submitted batch is written (or buffered by its format)."""
        self._q.join()
        self.check()

    def close(self) -> WriterStats:
        self._q.put(None)
        self._thread.join()
        self.check()
        return self.stats

    def _run(self) -> None:
        while True:
            job = self._q.get()
            if job is None:
                self._q.task_done()
                break
            try:
                if self._error is None:
                    self._write(job)
            except BaseException as exc:  # kept for the caller's thread
                self._error = exc
            finally:
                self.pool.release(job.slot)
                self._q.task_done()
        try:
            if self._error is None:
                self.stats.bytes += self.fmt.close()
        except BaseException as exc:
            self._error = exc

    def _write(self, job: Job) -> None:
        slot = job.slot
        if slot.done is not None:
            slot.done.synchronize()
        samples, off = [], 0
        for sid, n, ids, mask in zip(job.ids, job.lengths, job.input_ids, job.loss_mask):
            lo, hi = off, off + n
            off = hi
            if job.keep is not None and sid not in job.keep:
                continue
            if bool(slot.bad[lo:hi].any()):
                msg = f"sample {sid} has NaN/Inf in its captured hidden states"
                if self.on_nan == "fail":
                    raise NonFiniteSample(
                        f"{msg} (--on-nan fail); rerun with --on-nan skip to leave it out and "
                        f"list it in the manifest")
                self.stats.nan_skipped.append(sid)
                if self.warn:
                    self.warn(f"{msg}: skipped (--on-nan skip), listed in the manifest")
                continue
            samples.append(Sample(sid, ids, mask, slot.aux[lo:hi], slot.final[lo:hi]))
        self.stats.bytes += self.fmt.write(samples)
        self.stats.samples += len(samples)
        self.stats.tokens += sum(int(s.input_ids.shape[0]) for s in samples)
