"""The analysed source as modules, classes and functions, loaded on demand.

Only files that a query touches are parsed (SGLang's `srt` has 2,141 files; the flagship proof
reads a few dozen). Every file read is remembered with its content hash, so a cached answer can
be checked against exactly the files it depended on.
"""
from __future__ import annotations

import ast
import re
import time
from pathlib import Path
from typing import Callable

from ..roots import MAX_FILE_MB, SourceRoot, too_big
from .compact import compact
from . import class_aliases, decorator_names, redefinitions
from .decorator_names import decorator_name
from .scopes import Binding, ClassInfo, FuncInfo, ModuleInfo, collect_bindings, store_lines
from .sources import Sources


MODULE_CODE = "<module>"
_DEF_NAME = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)", re.M)
# an indented `name = other` / `name = property(f, ...)`: a method a class body may bind by
# assignment (index/class_aliases.py); errs towards yes (a local `x = y` matches too)
_ALIAS_NAME = re.compile(r"^[ \t]+(\w+)[ \t]*=[ \t]*(?:property[ \t]*\([ \t]*)?\w+[ \t]*(?:[,)#]|$)", re.M)


# An attribute store by a literal name (Project.attribute_stored): `.name =` (augmented and
# annotated too; `=` by lookahead, so `a.x = b.y = v` finds both), `setattr(o, "name", ...)`,
# `["name"] =`. Three patterns, each starting with a literal, so the scan skips ahead: one pattern
# of three alternatives, two of them zero-width lookaheads, was tried at every position (1.5 s
# over SGLang srt's 36 MB; 0.6 s as three), and finds the same names in the same files.
# a def after a property decorator, other decorators (of up to 8 lines) between
_PROPERTY = re.compile(r"^[ \t]*@[ \t]*(?:functools[ \t]*\.[ \t]*|abc[ \t]*\.[ \t]*)?(?:property|cached_property|"
                       r"abstractproperty)\b(?:[^\n]*\n){1,8}?[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)", re.M)
# `name = property(...)` in a class body (index/class_aliases.py)
_MADE_PROPERTY = re.compile(r"^[ \t]+(\w+)[ \t]*(?::[^=\n]*)?=[ \t]*(?:builtins[ \t]*\.[ \t]*)?property[ \t]*\(", re.M)
_DUNDER = re.compile(r"__\w+__")
# a class header, or a def of a descriptor's dunder, with its indentation (descriptor_classes)
_CLASS_OR_DESCRIPTOR_DEF = re.compile(r"^([ \t]*)(?:class[ \t]+(\w+)|(?:async[ \t]+)?def[ \t]+(?:__get__|__set__|__delete__)\b)", re.M)
DESCRIPTOR_DUNDERS = frozenset({"__get__", "__set__", "__delete__"})
_DUNDER_TEXT = re.compile(r"(?:\bdef[ \t]+(__\w+__)[ \t]*\(|^[ \t]*(__\w+__)[ \t]*(?::[^=\n]*)?=)", re.M)
_ACCESSOR = re.compile(r"@\s*(?:\w+\s*\.\s*)*?(\w+)\s*\.\s*(?:setter|deleter)\b")
_STORED = re.compile(r"\.\s*(\w+)(?=\s*(?::[^=\n]+)?(?:[-+*/%@&|^]|//|\*\*|<<|>>)?=(?!=))")
_STORED_SETATTR = re.compile(r"setattr\s*\([^,]*,\s*[rbuf]*[\"'](\w+)[\"']")
_STORED_KEY = re.compile(r"\[\s*[rbuf]*[\"'](\w+)[\"']\s*\]\s*=(?!=)")
_SELF_BEFORE = re.compile(r"(?<![\w.])self\s*$")  # `self` is the receiver of the `.name` store after it


def _descriptor_classes_in(text: str) -> set[str]:
    """The classes of one source text whose body defines `__get__`, `__set__` or `__delete__`,
    by indentation: each such def belongs to the nearest class header above it indented less."""
    found: set[str] = set()
    open_classes: list[tuple[int, str]] = []  # (indentation, name) of the classes around
    for m in _CLASS_OR_DESCRIPTOR_DEF.finditer(text):
        indent = len(m.group(1).expandtabs())
        while open_classes and open_classes[-1][0] >= indent:
            open_classes.pop()
        if m.group(2):
            open_classes.append((indent, m.group(2)))
        elif open_classes:
            found.add(open_classes[-1][1])
    return found


class Project:
    def __init__(self, roots: list[SourceRoot], warn: Callable[[str], None] | None = None,
                 max_file_mb: float | None = MAX_FILE_MB):
        self.roots = roots
        self.max_file_mb = max_file_mb  # larger files are skipped with a warning (roots.too_big)
        self.oversized: list[Path] = []  # the scope files skipped for their size
        self.skipped: dict[Path, str] = {}  # resolved path -> why it was not analysed
        self.warn = warn or (lambda msg: None)
        self.modules: dict[str, ModuleInfo | None] = {}
        self.functions: dict[str, FuncInfo] = {}
        self.classes: dict[str, ClassInfo] = {}
        self.by_path: dict[Path, ModuleInfo | None] = {}
        self.hashes: dict[str, str] = {}  # posix path -> sha1 of the bytes parsed
        self._warned: set[Path] = set()
        self._texts: list[tuple[Path, str]] | None = None
        self.sources = Sources(roots, self._warn_once, self._skipped_file, max_file_mb)  # the one reader
        self._class_headers: dict[str, set[tuple[str, Path]]] | None = None
        self._multi_base: set[tuple[str, Path]] | None = None  # (class, file) with several bases
        self._loaded_all = False  # every scope file parsed (load_all)
        self._def_names: dict[Path, set[str]] | None = {}  # None: read off the texts (_defs_in)
        self._def_names_read: dict[Path, set[str]] = {}
        self._classes_by_module: dict[int, list[ClassInfo]] = {}
        self._stored_names: dict[str, tuple] | None = None  # name -> files storing it (_stores_by_text)
        self._accessor_names: frozenset[str] | None = None
        self._property_names: frozenset[str] | None = None
        self._dunder_names: frozenset[str] | None = None
        self._descriptor_names: frozenset[str] | None = None

    # -- files ---------------------------------------------------------------------------
    def scope_files(self) -> list[Path]:
        return self.sources.files()

    def texts(self) -> list[tuple[Path, str]]:
        """(path, source text) of every scope file, read once (name searches grep these)."""
        if self._texts is None:
            self._texts = self.sources.texts()
        return self._texts

    def forget_texts(self) -> None:
        """Let the source texts go (texts() reads them again if asked). A whole-tree export
        holds every parsed tree; the texts, 120 MB on transformers, were read for the
        registries' tables and are not needed again."""
        self._texts = None
        self.sources.forget_texts()

    def subclass_candidates(self, base_name: str, methods: tuple[str, ...] | None) -> list[Path]:
        """Files that may define a subclass of a class named `base_name` (transitively, by the
        names in class headers, found by one regex pass over the texts, or read off the parsed
        classes once load_all() has parsed the scope) which defines one of `methods` itself, or
        whose class has several bases (`class Mixed(Other, Base)` may take the method from
        `Other`); every file of a subclass where `methods` is None. The class hierarchy then
        parses these few files, not the whole tree."""
        if self._class_headers is None:
            if self._loaded_all:
                self._headers_from_trees()
            else:
                self._headers_from_texts()
        if self._multi_base is None:  # classes with several bases: a sibling base may give the method
            seen_once: set = set()
            self._multi_base = set()
            for entries in self._class_headers.values():
                for entry in entries:
                    (self._multi_base if entry in seen_once else seen_once).add(entry)
        seen: set[str] = set()
        files: set[Path] = set()
        todo = [base_name]
        while todo:
            for sub, path in self._class_headers.get(todo.pop(), ()):
                if methods is None or not self._defs_in(path).isdisjoint(methods) or (sub, path) in self._multi_base:
                    files.add(path)
                if sub not in seen:
                    seen.add(sub)
                    todo.append(sub)
        return sorted(files)

    def attribute_stored(self, name: str) -> bool:
        """Whether any scope file may set an attribute called `name` (`obj.name = v`,
        `obj.name += v`, `setattr(obj, "name", v)`, `obj.__dict__["name"] = v`,
        `globals()["name"] = v`), by a regex over the texts that errs towards yes: where not,
        no code in the tree rebinds a module global of that name from outside its module.
        Every such name of the scope is read in one pass (each occurrence, overlapping ones
        included, as a search per name would find it), once: asked at every global read."""
        return name in self._stores_by_text()

    def property_names(self) -> frozenset[str]:
        """The names some scope file defines a property getter for (`@property`,
        `@cached_property`: the decorators `semantics/properties.py` reads), off the parsed
        functions once load_all() has parsed the scope, else by a regex over the texts that
        errs towards yes. Only a read of one of these names may run a getter (explore.py asks
        about no other: 56k of transformers' 410k attribute reads)."""
        if self._property_names is None:
            if self._loaded_all:
                found = {fn.name for fn in self.functions.values()
                         if any(d in decorator_names.PROPERTY for d in fn.decorators)}
                found |= {name for c in self.classes.values() for name in c.made_properties}
            else:
                found = {m.group(1) for _, text in self.texts() if "property" in text
                         for pattern in (_PROPERTY, _MADE_PROPERTY) for m in pattern.finditer(text)}
            self._property_names = frozenset(found)
        return self._property_names

    def dunder_names(self) -> frozenset[str]:
        """The dunder names (`__add__`, `__len__`...) some scope file defines or assigns in a
        body, off the parsed functions and class attributes once load_all() has parsed the
        scope, else by a regex over the texts. An operator asks about an operand's dunder only
        where it is one of these (semantics/operator_protocol.py)."""
        if self._dunder_names is None:
            if self._loaded_all:
                found = {fn.name for fn in self.functions.values() if _DUNDER.fullmatch(fn.name)}
                found |= {a for c in self.classes.values() for a in c.attrs if _DUNDER.fullmatch(a)}
            else:
                found = {m.group(1) or m.group(2) for _, text in self.texts() if "__" in text
                         for m in _DUNDER_TEXT.finditer(text)}
            self._dunder_names = frozenset(found)
        return self._dunder_names

    def descriptor_names(self) -> frozenset[str]:
        """The attribute names a class body may bind to an in-tree descriptor: `x = D(...)` or a
        method decorated `@D` / `@D(...)`, for `D` one of `descriptor_classes` (by its last
        name component); off the parsed classes once load_all() has parsed the scope, else by
        a regex over the texts that errs towards yes. Only a read, store or deletion of one of
        these names may run a descriptor's method (semantics/descriptors.py); empty where no
        file of the scope defines `__get__` / `__set__` / `__delete__`."""
        if self._descriptor_names is None:
            found: set[str] = set()
            classes = self.descriptor_classes() if DESCRIPTOR_DUNDERS & self.dunder_names() else frozenset()
            if classes and self._loaded_all:
                for c in self.classes.values():
                    for name, bindings in c.attrs.items():
                        if any(isinstance(b.expr, ast.Call) and decorator_name(b.expr).rpartition(".")[2] in classes
                               for b in bindings):
                            found.add(name)
                    for name, fn in c.methods.items():
                        if any(d.rpartition(".")[2] in classes for d in fn.decorators):
                            found.add(name)
            elif classes:
                alternatives = "|".join(sorted(map(re.escape, classes)))
                pattern = re.compile(rf"^[ \t]+(\w+)[ \t]*(?::[^=\n]*)?=[ \t]*(?:[\w.]+\.)?(?:{alternatives})[ \t]*\(|"
                                     rf"^[ \t]*@[ \t]*(?:[\w.]+\.)?(?:{alternatives})\b(?:[^\n]*\n){{1,8}}?[ \t]*"
                                     rf"(?:async[ \t]+)?def[ \t]+(\w+)", re.M)
                found = {m.group(1) or m.group(2) for _, text in self.texts() for m in pattern.finditer(text)}
            self._descriptor_names = frozenset(found)
        return self._descriptor_names

    def descriptor_classes(self) -> frozenset[str]:
        """The names of the scope's classes that define `__get__`, `__set__` or `__delete__`
        (a def in the class body, by indentation in the text), and of their subclasses by the
        names in class headers (transitively)."""
        if self._loaded_all:
            names = {c.name for c in self.classes.values() if not DESCRIPTOR_DUNDERS.isdisjoint(c.methods)}
        else:
            names = set()
            for _, text in self.texts():
                if "__get__" in text or "__set__" in text or "__delete__" in text:
                    names |= _descriptor_classes_in(text)
        headers = self.class_headers() or {}
        todo = list(names)
        while todo:
            for sub, _ in headers.get(todo.pop(), ()):
                if sub not in names:
                    names.add(sub)
                    todo.append(sub)
        return frozenset(names)

    def accessor_names(self) -> frozenset[str]:
        """The names some scope file defines a property setter or deleter for (`@x.setter`),
        off the parsed functions once load_all() has parsed the scope, else by a regex over
        the texts (a module not yet loaded may hold the subclass whose setter runs). Only a
        store of one of these names may run a setter (explore.py asks no other)."""
        if self._accessor_names is None:
            if self._loaded_all:  # the accessors the dispatch reads (ClassInfo.accessors)
                found = {name for c in self.classes.values() for name, _ in c.accessors}
            else:
                found = {m.group(1) for _, text in self.texts() if ".setter" in text or ".deleter" in text
                         for m in _ACCESSOR.finditer(text)}
                found |= {m.group(1) for _, text in self.texts() if "property" in text
                          for m in _MADE_PROPERTY.finditer(text)}
            self._accessor_names = frozenset(found)
        return self._accessor_names

    def files_storing(self, name: str) -> tuple:
        """The scope files whose text may set an attribute `name` on something other than a
        method's `self` (`m.name = v`, `setattr(o, "name", v)`, `vars(m)["name"] = v`): where
        a module global of that name may be set from outside (semantics/module_store.py)."""
        return self._stores_by_text().get(name, ())

    def _stores_by_text(self) -> dict[str, tuple]:
        if self._stored_names is None:
            found: dict[str, dict] = {}
            for path, text in self.texts():
                for m in _STORED.finditer(text):
                    files = found.setdefault(m.group(1), {})
                    if not _SELF_BEFORE.search(text, max(0, m.start() - 16), m.start()):
                        files[path] = None   # not `self.name = v`: an instance's, never a module's
                if "setattr" in text:
                    for m in _STORED_SETATTR.finditer(text):
                        found.setdefault(m.group(1), {})[path] = None
                if "[" in text:
                    for m in _STORED_KEY.finditer(text):
                        found.setdefault(m.group(1), {})[path] = None
            self._stored_names = {name: tuple(files) for name, files in found.items()}
        return self._stored_names

    def class_headers(self, deadline: float | None = None) -> dict[str, set[tuple[str, Path]]] | None:
        """Base name -> (subclass name, file) of every class header in scope (the table
        subclass_candidates walks); None when `deadline` (time.perf_counter()) passed before
        the texts were all read (nothing is kept then)."""
        if self._class_headers is None:
            if self._loaded_all:
                self._headers_from_trees()
            elif not self._headers_from_texts(deadline):
                return None
        return self._class_headers

    def _headers_from_texts(self, deadline: float | None = None) -> bool:
        headers: dict[str, set[tuple[str, Path]]] = {}
        pattern = re.compile(r"^[ \t]*class[ \t]+(\w+)[ \t]*\(([^)]*)\)", re.M)
        for path, text in self.texts():
            if deadline is not None and time.perf_counter() > deadline:
                return False
            for m in pattern.finditer(text):
                for name in re.findall(r"(\w+)\s*(?:\[[^\]]*\])?\s*(?:,|$)", m.group(2).strip()):
                    headers.setdefault(name, set()).add((m.group(1), path))
        self._class_headers = headers
        self._multi_base = None
        self._def_names = None  # read per file when subclass_candidates asks (_defs_in)
        return True

    def _defs_in(self, path: Path) -> set[str]:
        """The def names of one file: off its parsed functions (load_all), else off its text,
        read for the few files subclass_candidates walks (a regex over every text of
        transformers took 1 s of each query's fixed cost)."""
        if self._def_names is not None:
            return self._def_names.get(path, set())
        if path not in self._def_names_read:
            text = self.sources.text(path) or ""
            self._def_names_read[path] = set(_DEF_NAME.findall(text)) | set(_ALIAS_NAME.findall(text)) if "def" in text else set()
        return self._def_names_read[path]

    def _headers_from_trees(self) -> None:
        """The same tables from the parsed scope (load_all() has parsed every file): no second
        read of the texts. A base is named by its last component (`nn.Module` -> `Module`)."""
        headers: dict[str, set[tuple[str, Path]]] = {}
        for info in self.classes.values():
            for base in info.node.bases:
                while isinstance(base, ast.Subscript):
                    base = base.value
                name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", None)
                if name is not None:
                    headers.setdefault(name, set()).add((info.name, info.module.path))
        self._class_headers = headers
        self._multi_base = None
        self._def_names = {}
        for fn in self.functions.values():
            self._def_names.setdefault(fn.module.path, set()).add(fn.name)
        for info in self.classes.values():  # and the methods a body binds by assignment
            if any(name != fn.name for name, fn in info.methods.items()):
                self._def_names.setdefault(info.module.path, set()).update(info.methods)

    def root_of(self, path: Path) -> SourceRoot | None:
        for root in self.roots:
            try:
                path.relative_to(root.import_root)
                return root
            except ValueError:
                continue
        return None

    def display(self, path: Path) -> str:
        root = self.root_of(path)
        return root.display(path) if root else path.as_posix()

    def analysed(self, name: str) -> bool:
        """Whether module `name` belongs to the analysed code. A root inside a package
        (`.../sglang/srt`) brings that top-level package (`sglang`: `sglang.kernels` too); other
        packages beside it under the same import root (site-packages' torch, for
        `--package transformers`) stay external."""
        top = name.split(".")[0]
        for root in self.roots:
            if root.scope == root.import_root:
                return True
            if root.scope.relative_to(root.import_root).parts[0] == top:
                return True
        return False

    def locate(self, name: str) -> tuple[Path, bool] | None:
        """The file of module `name` under any import root: (path, is_package)."""
        if not name or not self.analysed(name):
            return None
        rel = Path(*name.split("."))
        for root in self.roots:
            base = root.import_root / rel
            if base.with_suffix(".py").is_file():
                return base.with_suffix(".py"), False
            if (base / "__init__.py").is_file():
                return base / "__init__.py", True
        return None

    def is_namespace(self, name: str) -> bool:
        if not name or not self.analysed(name):
            return False
        rel = Path(*name.split("."))
        return any((r.import_root / rel).is_dir() for r in self.roots)

    # -- modules -------------------------------------------------------------------------
    def module(self, name: str) -> ModuleInfo | None:
        if name in self.modules:
            return self.modules[name]
        found = self.locate(name) if name else None
        self.modules[name] = None  # recursion guard for import cycles
        if found is None:
            return None
        mod = self.load(found[0], name, found[1])
        self.modules[name] = mod
        return mod

    def module_of_path(self, path: Path) -> ModuleInfo | None:
        if path in self.by_path:
            return self.by_path[path]
        path = path.resolve()
        if path in self.by_path:
            return self.by_path[path]
        root = self.root_of(path)
        if root is None:
            return None
        name = root.module_name(path)
        if name in self.modules and self.modules[name] is not None:
            return self.modules[name]
        mod = self.load(path, name, path.name == "__init__.py")
        self.modules[name] = mod
        return mod

    def load(self, path: Path, name: str, is_package: bool) -> ModuleInfo | None:
        path = path.resolve()
        if path in self.by_path:
            return self.by_path[path]
        big = too_big(path, self.max_file_mb)  # a module imported from outside the scope, too
        if big is not None:
            self._warn_once(path, big)
            self.by_path[path] = None
            return None
        src, tree, problem = self.sources.parse(path)
        if src is not None:
            self.hashes[path.as_posix()] = src.digest  # of the bytes parsed
        if tree is None:
            self._warn_once(path, problem or "cannot parse")
            self.by_path[path] = None
            return None
        tree = compact(tree)  # the trees live as long as the project: no dict per node
        mod = ModuleInfo(name=name, path=path, display=self.display(path), tree=tree, is_package=is_package,
                         store_lines=store_lines(src.text) if src is not None and src.text is not None else None)
        self.by_path[path] = mod
        try:
            mod.renamed = redefinitions.names(tree, name)
            for stmt in tree.body:
                collect_bindings(stmt, mod.globals, name, mod.package, mod.renamed)
            self._register(tree.body, mod, name, cls=None, parent=None)
        except RecursionError:  # defs or targets nested deeper than the stack: skip, as unparsable
            self._unregister(mod)
            self._warn_once(path, "too deeply nested to index (RecursionError)")
            self.by_path[path] = None
            return None
        self._register_module_code(mod)
        return mod

    def _unregister(self, mod: ModuleInfo) -> None:
        """Forget the functions and classes of a module whose indexing failed half-way."""
        for table in (self.functions, self.classes):
            for qual in [q for q, info in table.items() if info.module is mod]:
                del table[qual]
        self._classes_by_module.pop(id(mod), None)

    def _register_module_code(self, mod: ModuleInfo) -> None:
        """Module-level code runs at import: it is a function of its own, `mod.<module>`, whose
        call sites are the module body's (PyCG names this caller after the module)."""
        body = mod.tree.body
        node = ast.FunctionDef(name=MODULE_CODE, args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[],
                                                                   defaults=[]),
                               body=body, decorator_list=[], returns=None, type_comment=None)
        node.lineno, node.col_offset = 1, 0
        node.end_lineno = body[-1].end_lineno if body else 1
        node.end_col_offset = 0
        qual = f"{mod.name}.{MODULE_CODE}" if mod.name else MODULE_CODE
        fn = FuncInfo(qual=qual, name=MODULE_CODE, node=node, module=mod)
        fn._locals = mod.globals  # the module's names are this code's locals
        self.functions.setdefault(qual, fn)

    def _skipped_file(self, path: Path, problem: str) -> None:
        if too_big(path, self.max_file_mb) is not None:
            self.oversized.append(path)
        self._warn_unresolved(path, problem)

    def _warn_unresolved(self, path: Path, problem: str) -> None:
        """A warning for a path that cannot be resolved (a link loop): named as given."""
        self._warned.add(path)
        self.skipped.setdefault(path, problem)
        self.warn(f"skipping {self.display(path)}: {problem}")

    def skipped_module(self, name: str) -> str | None:
        """Why the module holding dotted `name` (`pkg.big.helper`: `pkg.big`) is not analysed,
        when it is an in-tree file that was skipped; else None."""
        parts = name.split(".")
        for i in range(len(parts), 0, -1):
            found = self.locate(".".join(parts[:i]))
            if found is not None:
                if self.module(".".join(parts[:i])) is not None:
                    return None
                why = self.skipped.get(found[0].resolve()) or self.skipped.get(found[0])
                return f"{self.display(found[0])} was skipped ({why})" if why else None
        return None

    def _warn_once(self, path: Path, problem: str) -> None:
        path = path.resolve()
        self.skipped.setdefault(path, problem)
        if path not in self._warned:
            self._warned.add(path)
            self.warn(f"skipping {self.display(path)}: {problem}")

    def load_all(self, progress: Callable[[str], None] | None = None) -> None:
        files = self.scope_files()
        if progress and len(files) > 200:
            progress(f"parsing {len(files)} files")
        for p in files:
            self.module_of_path(p)
        self._loaded_all = True

    # -- definitions ---------------------------------------------------------------------
    def _register(self, body, mod: ModuleInfo, scope: str, cls: ClassInfo | None, parent: FuncInfo | None) -> None:
        for node in body:
            for sub in redefinitions.defs_in(node):
                if isinstance(sub, ast.ClassDef):
                    self._register_class(sub, mod, f"{scope}.{sub.name}", parent)
                else:
                    plain = f"{scope}.{sub.name}"
                    qual = mod.renamed.get(id(sub), plain) if mod.renamed else plain
                    if qual is None:
                        continue  # an overload stub the implementation below replaces
                    fn = FuncInfo(
                        qual=qual,
                        name=sub.name,
                        node=sub,
                        module=mod,
                        cls=cls,
                        parent=parent,
                        decorators=tuple(decorator_name(d) for d in sub.decorator_list),
                    )
                    self.functions[qual] = fn
                    if cls is not None and qual == plain:  # a redefinition's own name is no method's
                        cls.methods[sub.name] = fn
                    elif cls is not None and (kind := redefinitions.accessor(sub)) is not None:
                        cls.accessors[(sub.name, kind)] = fn
                    self._register(sub.body, mod, qual, cls=None, parent=fn)

    def classes_in(self, mod: ModuleInfo) -> list[ClassInfo]:
        return self._classes_by_module.get(id(mod), [])

    def _register_class(self, node: ast.ClassDef, mod: ModuleInfo, qual: str, parent: FuncInfo | None) -> None:
        info = ClassInfo(qual=qual, name=node.name, node=node, module=mod)
        if qual not in self.classes:
            self.classes[qual] = info
            self._classes_by_module.setdefault(id(mod), []).append(info)
        for stmt in node.body:
            collect_bindings(stmt, info.attrs, qual, mod.package, mod.renamed)
        self._register(node.body, mod, qual, cls=info, parent=parent)
        self._register_aliases(node, mod, info)

    def _register_aliases(self, node: ast.ClassDef, mod: ModuleInfo, info: ClassInfo) -> None:
        """Methods the class body binds by assignment (`__radd__ = __add__`, `x = property(f, g)`:
        index/class_aliases.py) into the class's tables."""
        if not any(isinstance(s, (ast.Assign, ast.AnnAssign)) for s in node.body):
            return
        found = class_aliases.read(node, redefinitions.binds)
        if not (found.methods or found.properties):
            return

        def info_of(d: ast.AST) -> FuncInfo | None:
            qual = mod.renamed.get(id(d), f"{info.qual}.{d.name}") if mod.renamed else f"{info.qual}.{d.name}"
            return self.functions.get(qual) if qual is not None else None

        for name, d in found.methods.items():
            fn = info_of(d)
            if fn is not None and name not in info.methods:
                info.methods[name] = fn
        for name, parts in found.properties.items():
            getter = info_of(parts["fget"])
            if getter is None or name in info.methods:
                continue
            info.methods[name] = info.made_properties[name] = getter
            for part, kind in (("fset", "setter"), ("fdel", "deleter")):
                fn = info_of(parts[part]) if part in parts else None
                if fn is not None:
                    info.accessors[(name, kind)] = fn

    def lambda_info(self, node: ast.Lambda, enclosing: FuncInfo | None, mod: ModuleInfo) -> FuncInfo:
        scope = enclosing.qual if enclosing else mod.name
        qual = f"{scope}.<lambda:{node.lineno}:{node.col_offset}>"
        fn = self.functions.get(qual)
        if fn is None:
            fn = FuncInfo(qual=qual, name="<lambda>", node=node, module=mod, cls=None, parent=enclosing)
            self.functions[qual] = fn
        return fn

    def function_at(self, path: Path, line: int) -> FuncInfo | None:
        mod = self.module_of_path(path)
        if mod is None:
            return None
        best = None
        for fn in self.functions.values():
            if fn.module is mod and not isinstance(fn.node, ast.Lambda) and fn.name != MODULE_CODE:
                end = getattr(fn.node, "end_lineno", fn.node.lineno)
                start = min([fn.node.lineno] + [d.lineno for d in fn.node.decorator_list])
                if start <= line <= end and (best is None or fn.node.lineno >= best.node.lineno):
                    best = fn
        return best


__all__ = ["Project", "Binding", "ClassInfo", "FuncInfo", "ModuleInfo"]
