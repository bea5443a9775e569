"""Output-shape adapters: how to read the residual stream out of what a live module returns.

Real engines return different things from a decoder layer; each shape is one small named adapter
below, tried in `ADAPTERS` order (an ordered registry, like jedi's plugins), so an engine-specific
capture point is one more entry. An adapter either vouches for the tensor it hands back or does not
match; when none matches, capture stops with an error that names the module and what it returned.
Which engines and versions each adapter covers is listed in docs/hooks.md.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import torch

from ..errors import CallgraphError
from .choices import ADAPTER_NAMES


class AdapterError(CallgraphError):
    """A live module's output the adapters cannot vouch for (unknown shape, wrong hidden size)."""


@dataclass(frozen=True)
class Adapter:
    name: str
    engines: str                                   # where this shape is known to occur
    matches: Callable[[Any, int], bool]            # (output, hidden_size) -> does this adapter apply
    extract: Callable[[Any], torch.Tensor]         # output -> the residual stream (a new or live tensor)


def _is_hidden(x: Any, hidden: int) -> bool:
    return (isinstance(x, torch.Tensor) and x.is_floating_point()
            and x.dim() in (2, 3) and x.shape[-1] == hidden)


def _is_pair(out: Any, hidden: int) -> bool:
    return (isinstance(out, (tuple, list)) and len(out) == 2
            and _is_hidden(out[0], hidden) and _is_hidden(out[1], hidden)
            and out[0].shape == out[1].shape and out[0].dtype == out[1].dtype)


def _is_first(out: Any, hidden: int) -> bool:
    # (hidden,), (hidden, attn_weights), (hidden, past_key_value): nothing else in it could be the
    # residual stream, so the first item is. A second same-shaped tensor would make it a pair.
    return (isinstance(out, (tuple, list)) and len(out) >= 1 and _is_hidden(out[0], hidden)
            and not any(isinstance(o, torch.Tensor) and o.shape == out[0].shape for o in out[1:]))


TENSOR = Adapter(
    "tensor", "transformers 5.x decoder layers (LlamaDecoderLayer returns a tensor; run here on "
    "5.17 and 5.23)",
    lambda out, h: _is_hidden(out, h), lambda out: out)
RESIDUAL_PAIR = Adapter(
    "residual-pair", "SGLang-style decoder layers returning (hidden_states, residual), e.g. SGLang's "
    "LlamaDecoderLayer; the residual stream is their sum, taken at once (the next layer's fused "
    "add-norm updates both in place)",
    _is_pair, lambda out: out[0] + out[1])
FIRST = Adapter(
    "first-of-tuple", "transformers 4.x decoder layers returning (hidden_states,) or "
    "(hidden_states, attn_weights / present_key_value)",
    _is_first, lambda out: out[0])

ADAPTERS: tuple[Adapter, ...] = (TENSOR, RESIDUAL_PAIR, FIRST)
BY_NAME = {a.name: a for a in ADAPTERS}
assert tuple(BY_NAME) == ADAPTER_NAMES, "keep choices.ADAPTER_NAMES in step with ADAPTERS"

# Final norms: a tensor, or SGLang's fused add-norm returning (normed, residual); the first is normed.
NORM_ADAPTERS: tuple[Adapter, ...] = (
    TENSOR,
    Adapter("norm-first", "SGLang / vLLM RMSNorm(x, residual) returning (normed, x + residual)",
            lambda out, h: isinstance(out, (tuple, list)) and len(out) >= 1 and _is_hidden(out[0], h),
            lambda out: out[0]),
)

# Layer classes whose output is known NOT to carry the residual stream, whatever its shape says:
# a plain hook on them captures the wrong tensor, so refuse and point at the engine's capture point.
REFUSED: dict[str, str] = {
    "sglang.srt.models.deepseek_v2.DeepseekV2DecoderLayer":
        "SGLang 0.5.23's DeepseekV2DecoderLayer returns (mlp_output, topk_indices) and keeps the "
        "residual stream outside the layer; use the engine's own capture point "
        "(set_eagle3_layers_to_capture) instead of a layer hook",
}


def describe(out: Any) -> str:
    """A short shape description for error messages: `tuple(Tensor[2, 5, 16] bfloat16, None)`."""
    if isinstance(out, torch.Tensor):
        return f"Tensor{list(out.shape)} {str(out.dtype).replace('torch.', '')}"
    if isinstance(out, (tuple, list)):
        inner = ", ".join(describe(o) for o in out[:4]) + (", ..." if len(out) > 4 else "")
        return f"{type(out).__name__}({inner})"
    return type(out).__name__


def refusal(module: torch.nn.Module) -> str | None:
    cls = type(module)
    return REFUSED.get(f"{cls.__module__}.{cls.__qualname__}")


def reader(hidden: int, norm_path: str, names: str | dict[str, str] = "auto") -> Callable[[str, Any], Any]:
    """`read(path, output) -> tensor`: a hooked module's output read as the capture reads it:
    the final norm (`norm_path`) through NORM_ADAPTERS, a layer through ADAPTERS, by the adapter
    `names` gives (one name for every layer, the norm then "auto"; or a name per path, as a
    manifest's `adapters` records them), as `Capture._adapt` chooses. The dump check and the
    --pack self-test read outputs through it, so they compare the rows the capture wrote."""
    def read(path: str, output: Any) -> Any:
        if isinstance(names, str):
            name = "auto" if path == norm_path else names
        else:
            name = names.get(path, "auto")
        registry = NORM_ADAPTERS if path == norm_path else ADAPTERS
        return choose(output, hidden, path, name, registry).extract(output)
    return read


def choose(out: Any, hidden: int, path: str, name: str = "auto",
           registry: tuple[Adapter, ...] = ADAPTERS) -> Adapter:
    """The adapter for this output: the named one (checked) or the first in the registry that fits."""
    if name != "auto":
        adapter = BY_NAME.get(name) or {a.name: a for a in registry}.get(name)
        if adapter is None:
            raise AdapterError(f"unknown adapter {name!r}; known: {', '.join(BY_NAME)}")
        if not adapter.matches(out, hidden):
            raise AdapterError(
                f"adapter {name} cannot vouch for the output of {path}: {describe(out)} "
                f"(hidden size {hidden})")
        return adapter
    for adapter in registry:
        if adapter.matches(out, hidden):
            return adapter
    raise AdapterError(
        f"no adapter vouches for the output of {path}: {describe(out)}; expected a tensor whose last "
        f"dimension is the model's hidden size {hidden}, a tuple starting with one, or a "
        f"(hidden_states, residual) pair")
