"""Layer ids with an explicit convention, so "layer 29" can never mean two things.

Two conventions are in use for the same capture point, one apart:
- ``output``: the output of decoder layer L (SpecForge's `aux_hidden_states_layers`, HF's
  `hidden_states[L + 1]`);
- ``input``: the input of decoder layer L, i.e. the output of layer L - 1 (SGLang's
  `set_eagle3_layers_to_capture`, which adds 1 to the ids it is given; vLLM's
  `eagle_aux_hidden_state_layer_ids`, whose id N, one past the last layer, names the last
  layer's output before the final norm: callgraph spells that layer as output id N - 1).

Passing one where the other is meant silently shifts the data by a layer, so a selection is
always stored as output ids plus the convention the user spoke in, and prints both spellings.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from ..errors import CallgraphError


class LayerSpecError(CallgraphError):
    """A --layers / --convention pair that names no decoder layer of the live model."""


class Convention(str, Enum):
    OUTPUT = "output"
    INPUT = "input"


def eagle3_output_ids(num_layers: int) -> tuple[int, ...]:
    """EAGLE-3's standard three: outputs of layers [1, N//2-1, N-4] (= inputs of [2, N//2, N-3])."""
    ids = (1, num_layers // 2 - 1, num_layers - 4)
    if num_layers < 6 or len(set(ids)) != 3:
        raise LayerSpecError(
            f"--layers eagle3 needs at least 6 decoder layers to pick three distinct ones; "
            f"the live model has {num_layers}"
        )
    return ids


@dataclass(frozen=True)
class LayerSelection:
    """The chosen layers, held as output ids (ascending) whatever convention named them."""

    output_ids: tuple[int, ...]
    convention: Convention
    num_layers: int
    spec: str  # what the user wrote, kept for the manifest

    @property
    def input_ids(self) -> tuple[int, ...]:
        return tuple(i + 1 for i in self.output_ids)

    @property
    def as_given(self) -> tuple[int, ...]:
        return self.output_ids if self.convention is Convention.OUTPUT else self.input_ids

    def describe(self) -> str:
        """Both spellings, to check against a trainer's or engine's config."""
        out = ",".join(map(str, self.output_ids))
        inp = ",".join(map(str, self.input_ids))
        return (
            f"capturing the residual stream at outputs of decoder layers [{out}] "
            f"(SpecForge / HF hidden_states[L+1] ids) = inputs of layers [{inp}] "
            f"(SGLang set_eagle3_layers_to_capture ids), of {self.num_layers} layers; "
            f"ids read as --convention {self.convention.value}"
        )

    def spellings(self) -> dict[str, list[int]]:
        """The same layers in each project's own config key (what to paste where).

        Input id N (the last layer's output) exists only in vLLM's spelling: SGLang captures
        before a layer runs and so cannot name it, and speculators' trainer takes it apart from
        its `--target-layer-ids` (its vLLM launcher appends it by itself).
        """
        out, inp = list(self.output_ids), list(self.input_ids)
        below_n = [i for i in inp if i < self.num_layers]
        return {
            "SpecForge aux_hidden_states_layers": out,
            "SGLang set_eagle3_layers_to_capture": below_n,
            "vLLM eagle_aux_hidden_state_layer_ids": inp,
            "speculators --target-layer-ids": below_n,
            "ModelOpt eagle_aux_hidden_state_layer_ids": out,
            # in transformers 5 the last entry (index N) is the final norm's output, not layer N-1's
            "transformers output_hidden_states indices": [i + 1 for i in out],
        }

    def to_json(self) -> dict:
        return {
            "spellings": self.spellings(),
            "spec": self.spec,
            "convention": self.convention.value,
            "as_given": list(self.as_given),
            "output_ids": list(self.output_ids),
            "input_ids": list(self.input_ids),
            "num_layers": self.num_layers,
        }


def select_layers(spec: str, convention: str | Convention | None, num_layers: int) -> LayerSelection:
    """Parse ``--layers`` ("eagle3" or "1,29,57") under an explicit ``--convention``."""
    spec = str(spec).strip()
    if spec == "eagle3":
        conv = Convention(convention) if convention else Convention.OUTPUT
        return LayerSelection(eagle3_output_ids(num_layers), conv, num_layers, spec)
    if convention is None:
        raise LayerSpecError(
            f"--layers {spec} needs --convention output|input: 'output' means the output of "
            f"decoder layer L (SpecForge), 'input' the input of layer L (SGLang); the two differ "
            f"by one layer, so callgraph never guesses"
        )
    conv = Convention(convention)
    try:
        given = [int(x) for x in spec.split(",") if x.strip()]
    except ValueError:
        raise LayerSpecError(f"--layers {spec!r}: expected 'eagle3' or comma-separated integers") from None
    if not given:
        raise LayerSpecError("--layers is empty")
    if len(set(given)) != len(given):
        raise LayerSpecError(f"--layers {spec}: a layer is named twice")
    if conv is Convention.OUTPUT:
        bad = [i for i in given if not 0 <= i < num_layers]
        hint = f"output ids run 0..{num_layers - 1}"
        out = given
    else:
        bad = [i for i in given if not 1 <= i < num_layers]
        hint = (f"input ids run 1..{num_layers - 1} (input of layer 0 is the embedding output, "
                f"which is no decoder layer's output)")
        out = [i - 1 for i in given]
    if bad:
        raise LayerSpecError(
            f"--layers {spec} --convention {conv.value}: {bad} out of range for a model of "
            f"{num_layers} decoder layers; {hint}"
        )
    return LayerSelection(tuple(sorted(out)), conv, num_layers, spec)
