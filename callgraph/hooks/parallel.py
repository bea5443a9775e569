"""Data parallelism through torch.distributed: which rank does what, and agreeing on failures.

`torchrun --nproc-per-node N -m callgraph.cli dump ...` starts N processes with RANK, WORLD_SIZE
and LOCAL_RANK set; each takes the batches k with k % N == rank of the run's plan (`data.plan`, a
function of the data file alone), so the shares are disjoint, deterministic, and together the
whole plan whatever N is. With `--tp K` the N ranks form N / K tensor-parallel groups of K
consecutive ranks (transformers' DistributedConfig: dp_replicate x tp); the shares go to the
groups, every rank of a group runs the same batches, and its first rank alone writes (the
residual stream is replicated in the group), while every rank's hooks confirm the proven path. Rank 0 alone cleans temporary files, writes the manifest and, once
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
    tp: int = 1      # ranks a tensor-parallel group: consecutive ranks, world // tp groups

    @property
    def primary(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world > 1

    @property
    def dp_rank(self) -> int:
        """Which data-parallel share (tensor-parallel group) this rank computes."""
        return self.rank // self.tp

    @property
    def dp_world(self) -> int:
        return self.world // self.tp

    @property
    def writes(self) -> bool:
        """One rank of each tensor-parallel group writes: its states are replicated in the group."""
        return self.rank % self.tp == 0

    def mine(self, plan: list) -> list:
        """This rank's batches: every rank of a tensor-parallel group runs the same ones."""
        return [b for k, b in enumerate(plan) if k % self.dp_world == self.dp_rank]


def from_env(tp: int = 1) -> Ranks:
    """The ranks torchrun set (WORLD_SIZE, RANK, LOCAL_RANK); one process when unset."""
    try:
        world = int(os.environ.get("WORLD_SIZE", "1"))
        rank = int(os.environ.get("RANK", "0"))
        local = int(os.environ.get("LOCAL_RANK", str(rank)))
    except ValueError as exc:
        raise CallgraphError(f"torchrun's environment is malformed ({exc})") from None
    if not (world >= 1 and 0 <= rank < world):
        raise CallgraphError(f"RANK={rank} and WORLD_SIZE={world} do not fit together")
    if tp > 1 and world % tp:
        raise CallgraphError(f"--tp {tp} needs a multiple of {tp} processes under torchrun "
                             f"(WORLD_SIZE={world}): e.g. torchrun --nproc-per-node {tp} -m "
                             f"callgraph.cli dump --tp {tp} ...")
    return Ranks(rank, world, local, tp)


def tensor_parallel_group(model) -> list[int] | None:
    """The global ranks the model's parameters are sharded over (its tensor-parallel mesh), or
    None when no parameter is a DTensor (transformers did not shard it)."""
    for p in model.parameters():
        mesh = getattr(p, "device_mesh", None)
        if mesh is None:
            continue
        if mesh.ndim > 1:   # (dp_replicate, tp): this rank's row of the tp dimension
            names = tuple(mesh.mesh_dim_names or ())
            if "tp" not in names:
                raise CallgraphError(f"the model's device mesh has dimensions {names or mesh.ndim} "
                                     f"and none named 'tp'")
            mesh = mesh["tp"]
        return sorted(int(r) for r in mesh.mesh.flatten().tolist())
    return None


def check_group(ranks: Ranks, model) -> None:
    """The model's tensor-parallel group must be this rank's share's group (consecutive ranks),
    or shares and writers would not line up with what the model computes."""
    want = list(range(ranks.dp_rank * ranks.tp, (ranks.dp_rank + 1) * ranks.tp))
    got = tensor_parallel_group(model)
    if got is None:
        raise CallgraphError(f"--tp {ranks.tp}: transformers did not shard "
                             f"{type(model).__name__} (no parameter is a DTensor; does the model "
                             f"have a tensor-parallel plan?)")
    if got != want:
        raise CallgraphError(f"--tp {ranks.tp}: rank {ranks.rank}'s model is sharded over ranks "
                             f"{got}, expected {want}")


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
