"""transformers' auto classes: `AutoModel.from_config(config.text_config)` builds the class that
`MODEL_MAPPING_NAMES` (or the auto class's own `*_MAPPING_NAMES`) names for the config's
`model_type`.

Read from the tree: the module that wraps `*_MAPPING_NAMES` tables in `_LazyAutoMapping(...)`
(`models/auto/modeling_auto.py` today) and its auto classes (`class AutoModel(...):
_model_mapping = MODEL_MAPPING`); `CONFIG_MAPPING_NAMES` (model_type -> config class) and
`SPECIAL_MODEL_TYPE_TO_MODULE_NAME` wherever the tree defines them. A key's class lives in
`<models>.<module of the model_type>` (`model_type_to_module_name`: the special table, else `-`
becomes `_`); a model_type missing from the auto class's table falls back, as the lazy mapping
does, to the model types sharing its config class.
"""
from __future__ import annotations

import ast
import re

from ..index.project import Project
from .adapter import Adapter, Site, argument, config_chain
from .config import ModelConfig
from .literals import Table, read_tables

FACTORY_METHODS = ("from_config", "_from_config", "from_pretrained")
_CONFIG_MARKER = re.compile(r"^CONFIG_MAPPING_NAMES\s*=", re.M)


class Transformers(Adapter):
    framework = "transformers"

    def __init__(self, project: Project, auto_module: str, tables: dict[str, Table], auto_classes: dict[str, str],
                 config_names: Table, special: Table):
        super().__init__(project)
        self.auto_module = auto_module
        self.models_package = auto_module.rsplit(".", 2)[0]  # transformers.models
        self.tables = tables              # MODEL_MAPPING_NAMES -> {model_type: (class, ...)}
        self.auto_classes = auto_classes  # AutoModel -> MODEL_MAPPING_NAMES
        self.config_names = config_names  # model_type -> (config class,)
        self.special = special

    @classmethod
    def find(cls, project: Project) -> "Transformers | None":
        # the module that wraps most tables in _LazyAutoMapping(...) (auto_factory.py defines it)
        auto = [(t.count("= _LazyAutoMapping("), p, t) for p, t in project.texts() if "= _LazyAutoMapping(" in t]
        if not auto:
            return None
        _, path, text = max(auto, key=lambda a: a[0])
        root = project.root_of(path)
        if root is None:
            return None
        tree = _parse(text)
        tables = read_tables(tree)
        mappings = {}  # MODEL_MAPPING -> MODEL_MAPPING_NAMES
        for stmt in tree.body:
            if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                    and isinstance(stmt.value, ast.Call) and getattr(stmt.value.func, "id", "") == "_LazyAutoMapping"
                    and len(stmt.value.args) == 2 and isinstance(stmt.value.args[1], ast.Name)):
                mappings[stmt.targets[0].id] = stmt.value.args[1].id
        auto_classes = {}
        for stmt in tree.body:
            if isinstance(stmt, ast.ClassDef):
                for item in stmt.body:
                    if (isinstance(item, ast.Assign) and len(item.targets) == 1
                            and getattr(item.targets[0], "id", "") == "_model_mapping"
                            and isinstance(item.value, ast.Name) and item.value.id in mappings):
                        auto_classes[stmt.name] = mappings[item.value.id]
        config_names: Table = {}
        special: Table = {}
        package_dir = path.parent
        for p, t in project.texts():
            if p.parent == package_dir and "CONFIG_MAPPING_NAMES" in t and (
                    _CONFIG_MARKER.search(t) or "SPECIAL_MODEL_TYPE_TO_MODULE_NAME" in t):
                found = read_tables(_parse(t))
                config_names.update(found.get("CONFIG_MAPPING_NAMES", {}))
                special.update(found.get("SPECIAL_MODEL_TYPE_TO_MODULE_NAME", {}))
        return cls(project, root.module_name(path), tables, auto_classes, config_names, special)

    # -- sites -----------------------------------------------------------------------------
    def site(self, node: ast.Call, text: str, config: ModelConfig | None) -> Site | None:
        head, _, method = text.rpartition(".")
        if method not in FACTORY_METHODS:
            return None
        auto = head.rsplit(".", 1)[-1]
        table = self.auto_classes.get(auto)
        if table is None:
            return None
        arg = argument(node, 0, "config") if method != "from_pretrained" else argument(node, 99, "config")
        chain = config_chain(arg) if arg is not None else None
        key_expr = ".".join((chain or ()) + ("model_type",)) if chain is not None else "model_type"
        keys = None
        if config is not None and chain is not None:
            keys = config.model_types(chain)
        return Site(self.framework, f"{auto}.{method}", key_expr, keys, table,
                    source="model-config" if keys else "")

    def candidates(self, site: Site, key: str) -> tuple[str, ...]:
        table = self.tables.get(site.table, {})
        names = table.get(key)
        model_type = key
        if names is None:  # the lazy mapping: another model_type of the same config class
            cfg = self.config_names.get(key)
            for other, other_cfg in self.config_names.items():
                if cfg is not None and other_cfg == cfg and other in table:
                    names, model_type = table[other], other
                    break
        if not names:
            return ()
        out = []
        for name in names:
            qual = self.class_in_module(f"{self.models_package}.{self.module_of(model_type)}", name)
            if qual is not None:
                out.append(qual)
        return tuple(out)

    def keys(self, site: Site) -> tuple[str, ...]:
        return tuple(self.tables.get(site.table, {}))

    def module_of_key(self, site: Site, key: str) -> str | None:
        return f"{self.models_package}.{self.module_of(key)}" if key in self.tables.get(site.table, {}) else None

    def module_of(self, model_type: str) -> str:
        special = self.special.get(model_type)
        return special[0] if special else model_type.replace("-", "_")

    def architecture(self, name: str) -> str | None:
        for table in self.tables.values():
            for model_type, names in table.items():
                if name in names:
                    found = self.class_in_module(f"{self.models_package}.{self.module_of(model_type)}", name)
                    if found:
                        return found
        return None

    def knows_model_type(self, model_type: str) -> bool | None:
        if not self.config_names:
            return None
        return model_type in self.config_names


def _parse(text: str) -> ast.Module:
    try:
        return ast.parse(text)
    except SyntaxError:
        return ast.Module(body=[], type_ignores=[])
