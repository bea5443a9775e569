"""Query names → definitions.

A query name may be a class (meaning its `forward`, own or inherited), `Class.method`, a
function, a dotted suffix or a full qualified name. What a name means is the query's business,
not the index's: this sits above the index and the resolver, whose MRO it asks. Finding a short name must not parse the
whole tree: a regex over the source finds the few files that define it, and only those are
parsed.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path

from .errors import AmbiguousName, NameNotFound
from .index.project import Project

MAX_CANDIDATES_SHOWN = 12
MAX_SUGGESTIONS = 3  # "did you mean" names offered for a name that matches nothing

_DEF_LINE = re.compile(r"^([ \t]*)(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_]\w*)", re.M)


@dataclass(frozen=True)
class Resolved:
    """A function to start from or reach; `cls` is the class named, when a class was named
    (its forward may be inherited: `func` is then the defining class's method)."""

    func: str
    cls: str | None = None


def resolve(project: Project, name: str, classes, what: str = "name") -> Resolved:
    """`classes` is the evaluator's ClassModel (for MRO lookups of inherited methods)."""
    name = name.strip()
    if not name or not re.fullmatch(r"[A-Za-z_][\w]*(\.[A-Za-z_<][\w:<>]*)*", name):
        raise NameNotFound(f"{what} {name!r} is not a Python name")
    found = _full_name(project, name, classes)
    if found is None:
        found = _by_search(project, name, classes)
    if not found:
        close = suggestions(project, name)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise NameNotFound(f"{what} {name!r} matches no function, method or class under "
                           f"{_roots(project)}{hint}")
    unique = {r.func + "|" + (r.cls or ""): r for r in found}
    if len(unique) > 1:
        rows = sorted(unique.values(), key=lambda r: (r.cls or r.func))
        shown = ", ".join(f"{r.cls or r.func} ({_file(project, r)})" for r in rows[:MAX_CANDIDATES_SHOWN])
        more = f" and {len(rows) - MAX_CANDIDATES_SHOWN} more" if len(rows) > MAX_CANDIDATES_SHOWN else ""
        raise AmbiguousName(f"{what} {name!r} is ambiguous: {shown}{more}; give a longer dotted name")
    return next(iter(unique.values()))


def _roots(project: Project) -> str:
    return ", ".join(str(r.scope) for r in project.roots)


def _file(project: Project, r: Resolved) -> str:
    if r.cls and r.cls in project.classes:
        c = project.classes[r.cls]
        return f"{c.module.display}:{c.line}"
    fn = project.functions.get(r.func)
    return f"{fn.module.display}:{fn.line}" if fn else "?"


def _as_target(project: Project, qual: str, classes) -> list[Resolved]:
    """A qualified name of a class or function as a query target."""
    if qual in project.functions:
        return [Resolved(qual)]
    if qual in project.classes:
        m = classes.method(qual, "forward") or classes.method(qual, "__call__")
        if m is None:
            return []
        return [Resolved(m[0].qual, qual)]
    head, _, meth = qual.rpartition(".")
    if head in project.classes:  # Class.method, the method inherited
        m = classes.method(head, meth)
        if m is not None:
            return [Resolved(m[0].qual, head)]
    return []


def _full_name(project: Project, name: str, classes) -> list[Resolved] | None:
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        modname = ".".join(parts[:i])
        if project.locate(modname) is None:
            continue
        project.module(modname)
        found = _as_target(project, name, classes)
        return found or None
    return None


def _by_search(project: Project, name: str, classes) -> list[Resolved]:
    parts = name.split(".")
    # The defining statement of the first part of the name that is a class or def.
    out: list[Resolved] = []
    for start in range(len(parts)):
        head = parts[start]
        pattern = re.compile(rf"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+{re.escape(head)}\b", re.M)
        for path in _files_matching(project, pattern, head):
            project.module_of_path(path)
        suffix = "." + name
        for qual in list(project.classes) + list(project.functions):
            if ("." + qual).endswith(suffix):
                out.extend(_as_target(project, qual, classes))
        head_suffix = "." + ".".join(parts[: len(parts) - 1])
        if len(parts) > 1:  # Class.method where the method is inherited
            for qual in list(project.classes):
                if ("." + qual).endswith(head_suffix):
                    out.extend(_as_target(project, f"{qual}.{parts[-1]}", classes))
        if out:
            return out
    return out


def _files_matching(project: Project, pattern: re.Pattern, word: str) -> list[Path]:
    """The files where `pattern` (a defining line of `word`) matches. The substring test comes
    first: a multi-line regex is tried at every position of a text (3.9 s over transformers'
    2,860 files for two names), `word in text` is a C scan (0.05 s), and a file without the
    word cannot match."""
    out = []
    for path, text in project.texts():
        if word in text and pattern.search(text):
            out.append(path)
    return out


def suggestions(project: Project, name: str) -> list[str]:
    """The qualified names closest to a name that matched nothing (by the same number of
    trailing parts: `Qwen2Modle` -> `...qwen2.Qwen2Model`, `Qwen2Model.forwrd` ->
    `...Qwen2Model.forward`). Read from the defining lines of the source text, parsing nothing."""
    parts = name.split(".")
    tails: dict[str, list[str]] = {}
    for path, text in project.texts():
        root = project.root_of(path)
        if root is None:
            continue
        module = root.module_name(path)
        stack: list[tuple[int, str]] = []
        for m in _DEF_LINE.finditer(text):
            indent = len(m[1].expandtabs())
            while stack and stack[-1][0] >= indent:
                stack.pop()
            stack.append((indent, m[2]))
            qual = ".".join([module, *(n for _, n in stack)]) if module else ".".join(n for _, n in stack)
            tail = ".".join(qual.split(".")[-len(parts):])
            tails.setdefault(tail, []).append(qual)
    close = difflib.get_close_matches(name, list(tails), n=MAX_SUGGESTIONS, cutoff=0.75)
    return [q for t in close for q in sorted(tails[t])][:MAX_SUGGESTIONS]


def unmatched_factories(project: Project, factories) -> list[str]:
    """The --bind factories that no call in the tree's source names (`AutoModel.from_config(`,
    or the same after a dot): a bind that can never apply is most likely misspelt."""
    left = {f: re.compile(rf"(?<!\w){re.escape(f)}\s*\(") for f in factories
            if re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*", f)}
    for _path, text in project.texts():
        for f in [f for f, pattern in left.items() if pattern.search(text)]:
            del left[f]
        if not left:
            break
    return sorted(left)
