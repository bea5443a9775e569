"""Data parallelism through torch.distributed: which rank does what, and agreeing on failures.

`torchrun --nproc-per-node N -m callgraph.cli dump ...` starts N processes with RANK, WORLD_SIZE
and LOCAL_RANK set; each takes the batches k with k % N == rank of the run's plan (`data.plan`, a
function of the data file alone), so the shares are disjoint, deterministic, and together the
whole plan whatever N is. Rank 0 alone cleans temporary files, writes the manifest and, once
every rank is done, the format's index. A failure on one rank must not leave the others waiting
at a barrier: each phase ends with `agree`, an all-reduce of "did this rank succeed", and every
rank stops when any failed.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import torch

from ..errors import CallgraphError


class PeerFailed(CallgraphError):
    """Another rank failed; this one stops with it (that rank's own error names the cause)."""


@dataclass(frozen=True)
class Ranks:
    rank: int = 0
    world: int = 1
    local_rank: int = 0

    @property
    def primary(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world > 1

    def mine(self, plan: list) -> list:
        return [b for k, b in enumerate(plan) if k % self.world == self.rank]


def from_env() -> Ranks:
    """The ranks torchrun set (WORLD_SIZE, RANK, LOCAL_RANK); one process when unset."""
    try:
        world = int(os.environ.get("WORLD_SIZE", "1"))
        rank = int(os.environ.get("RANK", "0"))
        local = int(os.environ.get("LOCAL_RANK", str(rank)))
    except ValueError as exc:
        raise CallgraphError(f"torchrun's environment is malformed ({exc})") from None
    if not (world >= 1 and 0 <= rank < world):
        raise CallgraphError(f"RANK={rank} and WORLD_SIZE={world} do not fit together")
    return Ranks(rank, world, local)


def start(ranks: Ranks, device: str) -> str:
    """Join the process group (NCCL on GPUs, gloo on CPUs); the device this rank uses."""
    if not ranks.distributed:
        return device
    import torch.distributed as dist
    if device == "cuda":
        torch.cuda.set_device(ranks.local_rank)
        device = f"cuda:{ranks.local_rank}"
    if not dist.is_initialized():
        dist.init_process_group("nccl" if device.startswith("cuda") else "gloo")
    return device


def agree(ranks: Ranks, ok: bool) -> None:
    """Every rank reports whether its phase succeeded; raise PeerFailed on the healthy ones if
    any rank failed (the failed rank raises its own error)."""
    if not ranks.distributed:
        return
    import torch.distributed as dist
    device = f"cuda:{ranks.local_rank}" if dist.get_backend() == "nccl" else "cpu"
    flag = torch.tensor([1 if ok else 0], device=device)
    dist.all_reduce(flag, op=dist.ReduceOp.MIN)
    if ok and int(flag.item()) == 0:
        raise PeerFailed("another rank failed (its error is above); this rank stops too")


def phase(ranks: Ranks, step):
    """Run this rank's part of a phase, then agree with the others on how it went."""
    try:
        out = step()
    except BaseException:
        agree(ranks, False)
        raise
    agree(ranks, True)
    return out


def gather(ranks: Ranks, obj) -> list:
    """Every rank's `obj`, in rank order, on every rank."""
    if not ranks.distributed:
        return [obj]
    import torch.distributed as dist
    out = [None] * ranks.world
    dist.all_gather_object(out, obj)
    return out


def stop(ranks: Ranks) -> None:
    if ranks.distributed:
        import torch.distributed as dist
        if dist.is_initialized():
            dist.destroy_process_group()
