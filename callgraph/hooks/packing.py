"""Packed batches: several samples in one row, each attending only to itself (no padding computed).

A right-padded batch of mixed lengths computes its padding: every layer's matmuls run on
`samples x longest` tokens, and a padded batch needs a masked attention kernel. Packing puts the
samples of a batch end to end in one row of `sum(lengths)` tokens, restarts `position_ids` at 0
for each, and replaces the model's attention by one that attends within each sample only:
`torch.nn.attention.varlen.varlen_attn` (FlashAttention's variable-length kernel) on CUDA where
torch has it, else one causal `scaled_dot_product_attention` per sample. Nothing else in the
model sees the row's other samples: linear layers, norms and MLPs are per token.

It is registered with transformers' `AttentionInterface` (and an empty mask with
`AttentionMaskInterface`: each sample's causal mask is implied), so it works for models whose
attention goes through that interface. What would make packing silently wrong is refused:
- a forward that never calls it (attention outside the interface) raises `PackingUnsupported`;
- a sliding window, a logit softcap, attention sinks, a non-causal attention module, an extra
  mask (`or_mask_function` / `and_mask_function`, or any mask other than the plain causal one);
- and before the run, `self_test` runs a few samples packed and each alone with the model's own
  attention, and compares every captured layer's rows (the dump check's row error and tolerance).
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
import sys
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

import torch
import torch.nn.functional as F

from ..errors import CallgraphError
from .data import pad

NAME = "callgraph_packed"


class PackingUnsupported(CallgraphError):
    """The model cannot be run packed without changing its results: dump without --pack."""


@dataclass
class _Segments:
    lengths: list[int]
    cu: torch.Tensor | None    # int32 [n+1] on the device, for varlen_attn
    longest: int
    calls: int = 0


_CURRENT: contextvars.ContextVar[_Segments | None] = contextvars.ContextVar("packed", default=None)


@functools.lru_cache(maxsize=1)
def _varlen():
    """A causal variable-length attention call over [T, H, D] tensors, whatever torch's
    signature of varlen_attn (2.10: is_causal; 2.11+: window_size; enable_gqa only later),
    or None where torch has none."""
    try:
        from torch.nn.attention.varlen import varlen_attn
    except ImportError:
        return None
    params = inspect.signature(varlen_attn).parameters
    if "window_size" in params:
        causal = {"window_size": (-1, 0)}
    elif "is_causal" in params:
        causal = {"is_causal": True}
    else:
        return None
    native_gqa = "enable_gqa" in params

    def call(q, k, v, cu, longest, scale):
        extra = dict(causal)
        if q.shape[1] != k.shape[1]:
            if native_gqa:
                extra["enable_gqa"] = True
            else:   # each kv head serves q.shape[1] // k.shape[1] query heads, in order
                k, v = (t.repeat_interleave(q.shape[1] // t.shape[1], dim=1) for t in (k, v))
        return varlen_attn(q, k, v, cu, cu, longest, longest, scale=scale, **extra)
    return call


def _refuse(why: str):
    raise PackingUnsupported(f"--pack: {why}; packed samples would see each other or lose a "
                             f"mask the model relies on: dump without --pack")


def packed_attention(module, query, key, value, attention_mask, dropout: float = 0.0,
                     scaling: float | None = None, is_causal: bool | None = None, **kwargs):
    """transformers' attention signature: query [1, Hq, T, D], key/value [1, Hkv, T, D];
    returns ([1, T, Hq, D], None)."""
    seg = _CURRENT.get()
    if seg is None:
        _refuse("the packed attention ran outside a packed batch")
    for name in ("sliding_window", "softcap", "s_aux", "sinks"):
        if kwargs.get(name) is not None:
            _refuse(f"{type(module).__name__} uses {name}")
    if getattr(module, "is_causal", True) is False or is_causal is False:
        _refuse(f"{type(module).__name__} is not causal")
    if attention_mask is not None:
        _refuse(f"{type(module).__name__} was given a mask")
    if query.shape[0] != 1 or query.shape[2] != sum(seg.lengths) or key.shape[2] != query.shape[2]:
        _refuse(f"{type(module).__name__} saw {list(query.shape)} for a packed row of "
                f"{sum(seg.lengths)} tokens")
    seg.calls += 1
    gqa = query.shape[1] != key.shape[1]
    varlen = _varlen() if query.is_cuda else None
    if varlen is not None and query.dtype in (torch.float16, torch.bfloat16):
        q, k, v = (t[0].transpose(0, 1).contiguous() for t in (query, key, value))   # [T, H, D]
        return varlen(q, k, v, seg.cu, seg.longest, scaling).unsqueeze(0), None
    outs, start = [], 0
    for n in seg.lengths:
        part = slice(start, start + n)
        outs.append(F.scaled_dot_product_attention(
            query[:, :, part], key[:, :, part], value[:, :, part], is_causal=True, scale=scaling,
            enable_gqa=gqa))
        start += n
    return torch.cat(outs, dim=2).transpose(1, 2).contiguous(), None


def packed_mask(*args, use_vmap: bool = False, **kwargs):
    """No mask: each sample's causal mask is implied by its segment. Refuses any other mask."""
    caller = sys._getframe(1).f_code.co_name
    if caller != "create_causal_mask" or use_vmap:
        _refuse(f"the model builds a mask other than the plain causal one ({caller}"
                f"{' with an extra mask function' if use_vmap else ''})")
    return None


def register() -> None:
    """Make NAME a valid attn_implementation of transformers (idempotent)."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface

    AttentionInterface.register(NAME, packed_attention)
    AttentionMaskInterface.register(NAME, packed_mask)


def attention_of(model) -> str:
    return getattr(model.config, "_attn_implementation", None) or "eager"


def use(model, implementation: str) -> None:
    """Switch the live model's attention implementation."""
    try:
        model.set_attn_implementation(implementation)
    except (ValueError, KeyError, ImportError) as exc:
        raise PackingUnsupported(f"--pack: cannot switch {type(model).__name__}'s attention to "
                                 f"{implementation} ({exc})") from None


@dataclass
class PackedRow:
    input_ids: torch.Tensor      # [1, T]
    position_ids: torch.Tensor   # [1, T]: 0..n-1 for each sample
    loss_mask: torch.Tensor      # [1, T]
    lengths: list[int]


def pack(rows: Sequence[tuple[int, list[int], list[int]]]) -> PackedRow:
    """(id, input_ids, loss_mask) rows end to end in one row."""
    ids = torch.tensor([t for _, r, _ in rows for t in r], dtype=torch.int64).unsqueeze(0)
    mask = torch.tensor([m for _, _, ms in rows for m in ms], dtype=torch.int64).unsqueeze(0)
    pos = torch.cat([torch.arange(len(r), dtype=torch.int64) for _, r, _ in rows]).unsqueeze(0)
    return PackedRow(ids, pos, mask, [len(r) for _, r, _ in rows])


@contextlib.contextmanager
def segments(lengths: Sequence[int], device) -> Iterator[_Segments]:
    """Run the forward inside this block: the packed attention reads the samples' lengths here.
    Raises PackingUnsupported if no attention layer went through it."""
    lengths = [int(n) for n in lengths]
    cu = torch.tensor([0] + lengths, dtype=torch.int32).cumsum(0, dtype=torch.int32)
    seg = _Segments(lengths, cu.to(device, non_blocking=True), max(lengths))
    token = _CURRENT.set(seg)
    try:
        yield seg
    finally:
        _CURRENT.reset(token)
    if seg.calls == 0:
        _refuse("the model's attention does not go through transformers' AttentionInterface "
                "(the packed attention was never called)")


@dataclass
class Prepared:
    """One batch of the plan, ready to run: what `Capture.batch` is given (ids, input_ids,
    loss_mask, lengths), the model's inputs on the device, and the block the forward runs in."""
    capture: tuple
    inputs: dict
    packed: bool
    device: object

    def running(self):
        """The block the model's forward runs in: a packed row's segments, else nothing."""
        return segments(self.capture[3], self.device) if self.packed else contextlib.nullcontext()


def prepare(rows: Sequence[tuple[int, list[int], list[int]]], packed: bool, device) -> Prepared:
    """(id, input_ids, loss_mask) rows as one forward: packed end to end in one row (position
    ids restarting per sample), or right-padded with an attention mask. The one construction
    the command's loop and benchmarks/bench_dump.py both run."""
    if packed:
        r = pack(rows)
        return Prepared(([i for i, _, _ in rows], r.input_ids[0], r.loss_mask[0], r.lengths),
                        {"input_ids": r.input_ids.to(device, non_blocking=True),
                         "position_ids": r.position_ids.to(device, non_blocking=True)}, True, device)
    b = pad(rows)
    return Prepared((b.ids, b.input_ids, b.loss_mask, b.lengths),
                    {"input_ids": b.input_ids.to(device, non_blocking=True),
                     "attention_mask": b.attention_mask.to(device, non_blocking=True)}, False, device)


def self_test(model, rows, paths: Sequence[str], original: str, forward_kwargs: dict,
              tolerance: float, extract: Callable[[str, object], torch.Tensor]) -> float:
    """Run `rows` packed and each alone with the model's own attention `original`; compare the
    outputs of the modules at `paths` row by row, each read by `extract(path, output)` (the
    dump's own adapters, as the capture and the dump check read them). Returns the worst row
    error; raises PackingUnsupported above `tolerance`."""
    from .check import _relative

    device = next((p.device for p in model.parameters()), torch.device("cpu"))
    seen: dict[str, list[torch.Tensor]] = {p: [] for p in paths}

    def keep(path):
        def hook(module, args, output):
            out = extract(path, output)
            seen[path].append(out.detach().to("cpu", torch.float32).reshape(-1, out.shape[-1]))
        return hook

    handles = [model.get_submodule(p).register_forward_hook(keep(p)) for p in paths]
    try:
        with torch.no_grad():   # not inference_mode: a tensor-parallel model's DTensors refuse it
            row = pack(rows)
            with segments(row.lengths, device):
                model(input_ids=row.input_ids.to(device), position_ids=row.position_ids.to(device),
                      **forward_kwargs)
            use(model, original)
            try:
                for _, ids, _ in rows:
                    model(input_ids=torch.tensor([ids], device=device), **forward_kwargs)
            finally:
                use(model, NAME)
    finally:
        for h in handles:
            h.remove()
    worst = 0.0
    for path in paths:
        if len(seen[path]) != 1 + len(rows):
            _refuse(f"{path} ran {len(seen[path])} times for {1 + len(rows)} forwards")
        got, alone = seen[path][0], torch.cat(seen[path][1:])
        if got.shape != alone.shape:
            _refuse(f"{path} gave {list(got.shape)} packed, {list(alone.shape)} alone")
        worst = max(worst, _relative(got, alone))
    if not worst <= tolerance:
        _refuse(f"{len(rows)} samples run packed differ from the same samples run alone (worst "
                f"row error {worst:.2e}, tolerance {tolerance:g})")
    return worst
