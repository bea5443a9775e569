"""SGLang's `ModelRegistry`: every module of `models/` declares `EntryClass = Cls` (or a list),
and an architecture name is the class's `__name__`; `ModelRegistry.resolve_model_cls(archs)`
returns `(cls, arch)` for the first architecture it knows.

Read from the tree: the module-level `EntryClass` assignments of the package that holds the
registry module (a module defining `ModelRegistry` and reading `EntryClass`), by name.
"""
from __future__ import annotations

import ast
import re

from ..index.project import Project
from .adapter import Adapter, Site, absolute, argument, config_chain
from .config import ModelConfig
from .literals import strings

FACTORIES = ("resolve_model_cls",)
_ENTRY = re.compile(r"^EntryClass\s*=", re.M)


class SGLang(Adapter):
    framework = "sglang"

    def __init__(self, project: Project, entries: dict[str, str]):
        super().__init__(project)
        self.entries = entries  # architecture -> (module, class name), resolved on demand

    @classmethod
    def find(cls, project: Project) -> "SGLang | None":
        texts = project.texts()
        registry = [p for p, t in texts if "EntryClass" in t and "ModelRegistry" in t
                    and re.search(r"^ModelRegistry\s*=", t, re.M)]
        if not registry:
            return None
        package_dir = registry[0].parent
        entries: dict[str, tuple[str, str]] = {}  # architecture -> (module to look in, class name)
        for path, text in texts:
            if path.parent != package_dir or "EntryClass" not in text or not _ENTRY.search(text):
                continue
            root = project.root_of(path)
            if root is None:
                continue
            module = root.module_name(path)
            for name in _entry_names(text):
                if re.search(rf"^class {re.escape(name)}\b", text, re.M):
                    entries.setdefault(name, (module, name))
                    continue
                where = _imported(text, name, module, path.name == "__init__.py")
                if where is not None:
                    entries.setdefault(where[1], where)  # the class's __name__ is the key
        return cls(project, entries) if entries else None

    def site(self, node: ast.Call, text: str, config: ModelConfig | None) -> Site | None:
        if text.rsplit(".", 1)[-1] not in FACTORIES or "ModelRegistry" not in text:
            return None
        arg = argument(node, 0, "architectures")
        literal = strings(arg) if arg is not None else None
        if literal is not None:
            known = tuple(a for a in literal if a in self.entries)
            return Site(self.framework, "ModelRegistry.resolve_model_cls", "architectures",
                        known[:1] or literal[:1], "EntryClass", returns="class-tuple", source="literal")
        keys = None
        if config is not None:
            found = config.architectures(())
            keys = tuple(a for a in found if a in self.entries)[:1] if found else None
        chain = config_chain(arg) if arg is not None else None
        key_expr = ".".join(chain) if chain else "architectures"
        return Site(self.framework, "ModelRegistry.resolve_model_cls", key_expr, keys or None, "EntryClass",
                    returns="class-tuple", source="model-config" if keys else "")

    def candidates(self, site: Site, key: str) -> tuple[str, ...]:
        qual = self.architecture(key)
        return (qual,) if qual else ()

    def keys(self, site: Site) -> tuple[str, ...]:
        return tuple(self.entries)

    def module_of_key(self, site: Site, key: str) -> str | None:
        where = self.entries.get(key)
        return where[0] if where else None

    def architecture(self, name: str) -> str | None:
        where = self.entries.get(name)
        return self.class_in_module(*where) if where else None


_ENTRY_STMT = re.compile(r"^EntryClass\s*=\s*(\[[^\]]*\]|\([^)]*\)|\w+)", re.M)
_IMPORT = re.compile(r"^from\s+([.\w]+)\s+import\s+(\([^)]*\)|[^\n]*)", re.M)


def _entry_names(text: str) -> list[str]:
    """The names in `EntryClass = X` / `EntryClass = [X, Y]`, read off that statement alone (a
    model file is thousands of lines; parsing each one would cost seconds on SGLang)."""
    out = []
    for m in _ENTRY_STMT.finditer(text):
        try:
            value = ast.parse(m.group(1), mode="eval").body
        except SyntaxError:
            continue
        for n in value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]:
            if isinstance(n, ast.Name):
                out.append(n.id)
    return out


def _imported(text: str, name: str, module: str, is_pkg: bool) -> tuple[str, str] | None:
    """(module, original name) of `from m import X as name` in a file's text."""
    for m in _IMPORT.finditer(text):
        if name not in m.group(2):
            continue
        try:
            stmt = ast.parse(m.group(0)).body[0]
        except (SyntaxError, IndexError):
            continue
        for alias in stmt.names:
            if (alias.asname or alias.name) == name:
                return absolute(module, stmt, is_pkg), alias.name
    return None
