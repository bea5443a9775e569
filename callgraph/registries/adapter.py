"""What a framework's registry adapter answers (one module per framework beside this one).

An adapter is found by what the tree contains (a module holding its tables), never by a path
fixed to one version. It recognises its factory calls by their callee text, says which key
decides each (`text_config.model_type`, `architectures`), and maps a key to the classes the
framework would build or return: qualified names in the tree.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from ..index.project import Project
from .config import ModelConfig


@dataclass(frozen=True)
class Site:
    """A registry factory call: who decides, and what it is known to give."""

    framework: str
    factory: str                    # the callee as written: AutoModel.from_config
    key_expr: str                   # where the key is read: text_config.model_type, architectures
    keys: tuple[str, ...] | None    # the keys known here (a literal, or the model config); None: unknown
    table: str                      # the table looked up (MODEL_MAPPING_NAMES, _VLLM_MODELS)
    returns: str = "instance"       # "instance": the call builds the class; "class-tuple": (cls, arch)
    source: str = ""                # where the keys came from: "literal", "model-config"


class Adapter:
    framework = ""

    def __init__(self, project: Project):
        self.project = project
        self._class_memo: dict[tuple[str, str], str | None] = {}

    def site(self, node: ast.Call, text: str, config: ModelConfig | None) -> Site | None:
        return None

    def candidates(self, site: Site, key: str) -> tuple[str, ...]:
        """Qualified names of the classes key `key` gives at `site` (empty: the key is not in
        the table, or its class is not in the tree)."""
        return ()

    def keys(self, site: Site) -> tuple[str, ...]:
        """Every key of the site's table."""
        return ()

    def module_of_key(self, site: Site, key: str) -> str | None:
        """The module (or package) a key's class is looked up in, without reading it: what
        an answer's conditions filter on before resolving candidates."""
        return None

    def architecture(self, name: str) -> str | None:
        """The class a config.json's `architectures` entry names, by this registry."""
        return None

    def knows_model_type(self, model_type: str) -> bool | None:
        """Whether the registry knows a model_type; None when it has no model_type table."""
        return None

    # -- shared helpers --------------------------------------------------------------------
    def class_in_module(self, module: str, name: str) -> str | None:
        """`module.name` when module (a file or package of the tree) defines or imports a class
        `name`: a package is searched file by file (its `__init__` re-exports lazily)."""
        memo_key = (module, name)
        if memo_key in self._class_memo:
            return self._class_memo[memo_key]
        found = None
        loc = self.project.locate(module)
        if loc is not None:
            path, is_pkg = loc
            files = sorted(path.parent.glob("*.py")) if is_pkg else [path]
            if is_pkg:  # modeling_x.py first: where transformers' lazy __init__ finds it
                files.sort(key=lambda p: (not p.name.startswith("modeling_"), p.name == "__init__.py", p.name))
            pattern = re.compile(rf"^class {re.escape(name)}\b", re.M)
            for f in files:
                try:
                    text = f.read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue
                if pattern.search(text):
                    mod = module if not is_pkg or f.name == "__init__.py" else f"{module}.{f.stem}"
                    found = f"{mod}.{name}"
                    break
            if found is None and not is_pkg:
                found = self._imported(path, module, name)
        if found is not None:  # parsed now: the class's methods are what calls on it dispatch to
            self.project.module(found.rsplit(".", 1)[0])
        self._class_memo[memo_key] = found
        return found

    def _imported(self, path: Path, module: str, name: str) -> str | None:
        """A class a module imports by name (`from .deepseek_v2 import DeepseekV2ForCausalLM`)."""
        mod = self.project.module(module)
        if mod is None:
            return None
        for node in ast.walk(mod.tree) if getattr(mod, "tree", None) is not None else ():
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if (alias.asname or alias.name) == name:
                        base = absolute(module, node, path.name == "__init__.py")
                        if base:
                            return self.class_in_module(base, alias.name)
        return None


def absolute(module: str, node: ast.ImportFrom, is_pkg: bool) -> str:
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    keep = len(parts) - node.level + (1 if is_pkg else 0)
    if keep <= 0:
        return ""
    base = ".".join(parts[:keep])
    return f"{base}.{node.module}" if node.module else base


def config_chain(arg: ast.AST | None) -> tuple[str, ...] | None:
    """The attributes after the config object in a factory's config argument: `config.text_config`
    and `self.config.text_config` are `("text_config",)`, `config` is `()`; None for anything
    that is not a chain of attributes on a name."""
    parts = []
    node = arg
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.reverse()
    if node.id == "self" and parts and parts[0] == "config":
        parts = parts[1:]
    return tuple(parts)


def argument(node: ast.Call, position: int, keyword: str) -> ast.AST | None:
    for kw in node.keywords:
        if kw.arg == keyword:
            return kw.value
    if len(node.args) > position and not any(isinstance(a, ast.Starred) for a in node.args[:position + 1]):
        return node.args[position]
    return None
