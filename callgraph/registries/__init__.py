"""Framework registries read statically as data, and the model config that picks their keys.

Real model code builds its towers through registries (transformers' auto classes, SGLang's
`EntryClass` modules, vLLM's registry tables). Each framework is one adapter module here, found
by what the tree contains; `Registries` asks them about a call site only when its callee's last
name is one of theirs (cheap: most sites are never asked), reads each tree's tables once, and
remembers the sites it could not decide, so an unknown answer can say which keys would reach.
"""
from __future__ import annotations

import ast

from ..errors import ModelConfigError
from ..index.project import Project
from ..index.scopes import dotted_text
from .adapter import Adapter, Site
from .config import ModelConfig, read_model_config
from .sglang import FACTORIES as SGLANG_FACTORIES, SGLang
from .transformers import FACTORY_METHODS, Transformers
from .vllm import FACTORIES as VLLM_FACTORIES, VLLM

ADAPTERS = (Transformers, SGLang, VLLM)
_NAMES = frozenset(FACTORY_METHODS + SGLANG_FACTORIES + VLLM_FACTORIES)


class Registries:
    def __init__(self, project: Project, config: ModelConfig | None = None):
        self.project = project
        self.config = config
        self._adapters: tuple[Adapter, ...] | None = None
        self.undecided: dict[str, tuple[Site, Adapter]] = {}  # "path:line:col" -> a site no key decided

    def with_config(self, config: ModelConfig | None) -> "Registries":
        """The same tables (read once per tree) under another model config."""
        other = Registries(self.project, config)
        other._adapters = self._adapters
        return other

    @property
    def adapters(self) -> tuple[Adapter, ...]:
        if self._adapters is None:
            self._adapters = tuple(a for a in (cls.find(self.project) for cls in ADAPTERS) if a is not None)
        return self._adapters

    def site(self, node: ast.Call) -> tuple[Site, Adapter] | None:
        f = node.func
        last = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        if last not in _NAMES:
            return None
        text = dotted_text(f)
        if text is None:
            return None
        for adapter in self.adapters:
            found = adapter.site(node, text, self.config)
            if found is not None:
                return found, adapter
        return None

    def entry_class(self) -> str:
        """The class of the model config's architecture (`architectures[0]`), by the first
        registry of the tree that knows it."""
        archs = self.config.architectures(()) if self.config else None
        if not archs:
            raise ModelConfigError(f"--model-config {self.config.path if self.config else ''}: no `architectures` "
                                   "to take the entry from; name ENTRY")
        for arch in archs:
            for adapter in self.adapters:
                found = adapter.architecture(arch)
                if found is not None:
                    return found
        raise ModelConfigError(f"--model-config {self.config.path}: architecture {archs[0]} is not in the tree's "
                               f"registries ({self._names()})")

    def validate(self) -> None:
        """A config naming a model_type (or, with no model_type table, an architecture) the
        tree's registries do not know is the user's mistake: said before any analysis."""
        if self.config is None:
            return
        if not self.adapters:
            raise ModelConfigError(f"--model-config {self.config.path}: the tree holds no registry callgraph reads "
                                   "(transformers' auto mappings, SGLang's EntryClass, vLLM's registry)")
        typed = [a for a in self.adapters if a.knows_model_type("") is not None]
        for path, model_type in self.config.all_model_types():
            if typed and not any(a.knows_model_type(model_type) for a in typed):
                where = f"{path}.model_type" if path else "model_type"
                raise ModelConfigError(f"--model-config {self.config.path}: {where} {model_type!r} is not in the "
                                       f"tree's registry ({typed[0].framework} CONFIG_MAPPING_NAMES)")
        if not typed:
            archs = self.config.architectures(())
            if archs and not any(a.architecture(x) for x in archs for a in self.adapters):
                raise ModelConfigError(f"--model-config {self.config.path}: architecture {archs[0]!r} is not in the "
                                       f"tree's registry ({self._names()})")

    def _names(self) -> str:
        return ", ".join(a.framework for a in self.adapters) or "none found"


__all__ = ["ADAPTERS", "Adapter", "ModelConfig", "Registries", "Site", "read_model_config"]
