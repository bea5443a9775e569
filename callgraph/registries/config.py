"""A checkpoint's `config.json`: the keys the registries dispatch on.

The file names the architecture (`architectures`) and, per sub-config, the `model_type` the auto
classes look up (`text_config.model_type`, `vision_config.model_type`, nested ones). A factory
site names its config by an expression (`config.text_config`); the sub-configs it may be are
those whose path in the file ends with that expression's attributes. A bare `config` may be
any of them (a sub-module is often built from a sub-config and calls it `config`), so it
stands for every model_type in the file: more candidates, never fewer.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..errors import ModelConfigError


@dataclass(frozen=True)
class ModelConfig:
    path: str
    data: dict

    def model_types(self, chain: tuple[str, ...]) -> tuple[str, ...] | None:
        """The model_types of the sub-configs `chain` (attributes after the config object) may
        name; None when the file holds none there."""
        return self._values(chain, "model_type")

    def architectures(self, chain: tuple[str, ...] = ()) -> tuple[str, ...] | None:
        """The `architectures` listed at `chain` (the top level for `()`), in their order."""
        found = []
        for path, sub in _subconfigs(self.data):
            if path == chain:
                archs = sub.get("architectures")
                if isinstance(archs, list):
                    found += [a for a in archs if isinstance(a, str)]
        return tuple(dict.fromkeys(found)) or None

    def all_model_types(self) -> list[tuple[str, str]]:
        """(dotted path, model_type) of every sub-config that names one ('' for the top)."""
        return [(".".join(p), sub["model_type"]) for p, sub in _subconfigs(self.data)
                if isinstance(sub.get("model_type"), str)]

    def _values(self, chain: tuple[str, ...], key: str) -> tuple[str, ...] | None:
        found = []
        for path, sub in _subconfigs(self.data):
            if not chain or path[len(path) - len(chain):] == chain and len(path) >= len(chain):
                value = sub.get(key)
                if isinstance(value, str):
                    found.append(value)
        return tuple(dict.fromkeys(found)) or None

    def digest(self) -> str:
        return json.dumps(self.data, sort_keys=True)


def _subconfigs(data: dict, path: tuple[str, ...] = ()):
    yield path, data
    for k, v in data.items():
        if isinstance(v, dict):
            yield from _subconfigs(v, path + (k,))


def read_model_config(where: str | Path) -> ModelConfig:
    """A `config.json`, or the folder holding one; a clear error otherwise."""
    p = Path(where)
    if p.is_dir():
        p = p / "config.json"
    if not p.is_file():
        raise ModelConfigError(f"--model-config {where}: no config.json there")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelConfigError(f"--model-config {p}: cannot read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ModelConfigError(f"--model-config {p}: not JSON: {exc.msg} at line {exc.lineno}") from None
    if not isinstance(data, dict):
        raise ModelConfigError(f"--model-config {p}: expected a JSON object")
    return ModelConfig(str(p), data)
