"""Find the proven target module inside a live model, and its decoder layers and final norm.

The static proof says which class's `forward` the data reaches and through which attributes
(`attribute_chain`, e.g. `language_model` then `model`). Here that chain is walked on the live
`nn.Module`, and the module found must have the class the proof names: a mismatch means the proof
was made for another model (or another version of it) and nothing is captured.
"""
from __future__ import annotations

from dataclasses import dataclass

from torch import nn

from ..errors import ProofError
from ..model import Proof, Verdict

# Where decoder stacks keep their layers and final norm, in the engines we know (HF, SGLang, vLLM).
LAYER_ATTRS = ("layers", "h", "blocks", "decoder_layers")
NORM_ATTRS = ("norm", "final_layernorm", "ln_f", "norm_f", "final_norm")


@dataclass(frozen=True)
class Target:
    """The live decoder stack: the module, its layers and its final norm, with their paths."""

    module: nn.Module
    path: str                       # "" for the root model itself
    layers: nn.ModuleList
    layers_path: str
    norm: nn.Module
    norm_path: str
    hidden_size: int
    found_by: str                   # "proof", "class" or "auto"

    def layer_path(self, index: int) -> str:
        return f"{self.layers_path}.{index}"


def class_of(qualname: str) -> str:
    """`pkg.mod.DeepseekV2Model.forward` -> `DeepseekV2Model`."""
    parts = qualname.split(".")
    if len(parts) >= 2 and parts[-1] == "forward":
        return parts[-2]
    return parts[-1]


def _class_names(module: nn.Module) -> list[str]:
    return [c.__name__ for c in type(module).__mro__ if c is not nn.Module and c is not object]


def _join(*parts: str) -> str:
    return ".".join(p for p in parts if p)


def locate(model: nn.Module, proof: Proof | None = None, class_name: str | None = None) -> Target:
    """The target by the proof's attribute chain, else by class name, else the one decoder stack."""
    if proof is not None:
        return _by_proof(model, proof)
    if class_name:
        return _by_class(model, class_name)
    return _auto(model)


def _by_proof(model: nn.Module, proof: Proof) -> Target:
    if proof.verdict is not Verdict.REACHED:
        raise ProofError(
            f"the proof's verdict is '{proof.verdict.value}', not 'reached': it does not show that "
            f"{proof.entry} reaches {proof.target}, so there is nothing proven to hook")
    entry_cls, target_cls = class_of(proof.entry), class_of(proof.target)
    if entry_cls not in _class_names(model):
        raise ProofError(
            f"proof/live mismatch: the proof's entry is {proof.entry} (class {entry_cls}) but the "
            f"live model is {type(model).__module__}.{type(model).__name__}"
        )
    module, path = model, ""
    for attr in proof.attribute_chain:
        child = getattr(module, attr, None)
        if not isinstance(child, nn.Module):
            raise ProofError(
                f"proof/live mismatch: attribute chain {'.'.join(proof.attribute_chain)}: "
                f"{type(module).__name__} at '{path or '<model>'}' has no submodule '{attr}' "
                f"(it has: {', '.join(n for n, _ in module.named_children()) or 'none'})"
            )
        module, path = child, _join(path, attr)
    if target_cls not in _class_names(module):
        raise ProofError(
            f"proof/live mismatch: expected {target_cls} at '{path or '<model>'}' "
            f"(the proof's target {proof.target}), found {type(module).__module__}.{type(module).__name__}"
        )
    return _stack(module, path, "proof")


def _by_class(model: nn.Module, class_name: str) -> Target:
    hits = [(p, m) for p, m in model.named_modules() if class_name in _class_names(m)]
    if not hits:
        raise ProofError(f"no module of class {class_name} in the live model {type(model).__name__}")
    if len(hits) > 1:
        listing = ", ".join(f"'{p or '<model>'}' ({type(m).__name__})" for p, m in hits[:8])
        raise ProofError(f"class {class_name} is ambiguous in the live model: {listing}; pass --proof")
    path, module = hits[0]
    return _stack(module, path, "class")


def _auto(model: nn.Module) -> Target:
    hits = [(p, m) for p, m in model.named_modules() if _find_layers(m) and _find_norm(m)]
    if len(hits) != 1:
        what = ", ".join(f"'{p or '<model>'}' ({type(m).__name__})" for p, m in hits) or "none"
        raise ProofError(
            f"cannot pick the decoder stack by shape (modules with a layer list and a final norm: "
            f"{what}); pass --proof FILE or --target-class NAME"
        )
    path, module = hits[0]
    return _stack(module, path, "auto")


def _find_layers(module: nn.Module):
    for attr in LAYER_ATTRS:
        child = getattr(module, attr, None)
        if isinstance(child, nn.ModuleList) and len(child) > 0:
            return attr, child
    return None


def _find_norm(module: nn.Module):
    for attr in NORM_ATTRS:
        child = getattr(module, attr, None)
        if isinstance(child, nn.Module):
            return attr, child
    return None


def _hidden_size(module: nn.Module, norm: nn.Module) -> int | None:
    config = getattr(module, "config", None)
    size = getattr(config, "hidden_size", None)
    if isinstance(size, int):
        return size
    weight = getattr(norm, "weight", None)
    if weight is not None and weight.dim() == 1:
        return int(weight.shape[0])
    return None


def _stack(module: nn.Module, path: str, found_by: str) -> Target:
    layers = _find_layers(module)
    if layers is None:
        raise ProofError(
            f"{type(module).__name__} at '{path or '<model>'}' has no decoder layer list "
            f"(looked for a non-empty nn.ModuleList named {', '.join(LAYER_ATTRS)})"
        )
    norm = _find_norm(module)
    if norm is None:
        raise ProofError(
            f"{type(module).__name__} at '{path or '<model>'}' has no final norm "
            f"(looked for a submodule named {', '.join(NORM_ATTRS)})"
        )
    size = _hidden_size(module, norm[1])
    if size is None:
        raise ProofError(
            f"cannot tell the hidden size of {type(module).__name__} at '{path or '<model>'}' "
            f"(no config.hidden_size, no 1-D norm weight)"
        )
    return Target(
        module=module, path=path, layers=layers[1], layers_path=_join(path, layers[0]),
        norm=norm[1], norm_path=_join(path, norm[0]), hidden_size=size, found_by=found_by,
    )
