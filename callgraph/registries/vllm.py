"""vLLM's model registry: `init_vllm_registered_model(..., architectures=["DeepseekV2ForCausalLM"])`
builds the class the registry tables name for the first architecture they know.

Read from the tree: the module whose module-level dicts map architecture names to
`(module, class)` pairs (`model_executor/models/registry.py`'s `_TEXT_GENERATION_MODELS`,
`_MULTIMODAL_MODELS`... merged into `_VLLM_MODELS`). A module name is relative to the registry's
package unless it starts with the top package (`vllm.models.deepseek_v32`), as
`_resolve_module_name` does. The architectures are a literal at the site, else those of the
`hf_config` it is given (`hf_config=config.text_config`), read from --model-config.
"""
from __future__ import annotations

import ast
import re

from ..index.project import Project
from .adapter import Adapter, Site, argument, config_chain
from .config import ModelConfig
from .literals import Table, read_tables, strings

FACTORIES = ("init_vllm_registered_model",)
_MARKER = re.compile(r"^_[A-Z_]*MODELS\s*=\s*\{", re.M)


class VLLM(Adapter):
    framework = "vllm"

    def __init__(self, project: Project, registry_module: str, table: Table):
        super().__init__(project)
        self.package = registry_module.rsplit(".", 1)[0]
        self.top = registry_module.split(".", 1)[0]
        self.table = table  # architecture -> (module, class)

    @classmethod
    def find(cls, project: Project) -> "VLLM | None":
        for path, text in project.texts():
            if "MODELS = {" not in text or not _MARKER.search(text):
                continue
            try:
                tables = read_tables(ast.parse(text))
            except SyntaxError:
                continue
            pairs = {name: t for name, t in tables.items()  # architecture -> (module, Class)
                     if len(t) >= 2 and name.endswith("MODELS")
                     and all(len(v) == 2 and v[1][:1].isupper() for v in t.values())}
            if not pairs:
                continue
            root = project.root_of(path)
            if root is None:
                continue
            merged = pairs.get("_VLLM_MODELS") or {k: v for t in pairs.values() for k, v in t.items()}
            return cls(project, root.module_name(path), merged)
        return None

    def site(self, node: ast.Call, text: str, config: ModelConfig | None) -> Site | None:
        if text.rsplit(".", 1)[-1] not in FACTORIES:
            return None
        archs = argument(node, 99, "architectures")
        literal = strings(archs) if archs is not None else None
        if literal is not None:
            known = tuple(a for a in literal if a in self.table)
            return Site(self.framework, text, "architectures", known[:1] or literal[:1], "_VLLM_MODELS",
                        source="literal")
        hf = argument(node, 99, "hf_config")
        chain = config_chain(hf) if hf is not None else ()
        key_expr = ".".join((chain or ()) + ("architectures",)) if chain is not None else "hf_config.architectures"
        keys = None
        if config is not None and chain is not None:
            found = config.architectures(chain)
            keys = tuple(a for a in found if a in self.table)[:1] if found else None
        return Site(self.framework, text, key_expr, keys or None, "_VLLM_MODELS",
                    source="model-config" if keys else "")

    def candidates(self, site: Site, key: str) -> tuple[str, ...]:
        module = self.module_of_key(site, key)
        qual = self.class_in_module(module, self.table[key][1]) if module else None
        return (qual,) if qual else ()

    def module_of_key(self, site: Site, key: str) -> str | None:
        found = self.table.get(key)
        if not found:
            return None
        module = found[0]
        return module if module.startswith(self.top + ".") else f"{self.package}.{module}"

    def keys(self, site: Site) -> tuple[str, ...]:
        return tuple(self.table)

    def architecture(self, name: str) -> str | None:
        found = self.candidates(Site(self.framework, "", "", None, ""), name)
        return found[0] if found else None
