"""The order of an "unknown" answer's blockers: those that could lead to the target's class first.

The name bound (relevance.py) says which unresolved sites *can* lead to the target; on a real
tree nearly every module call can, so hundreds qualify and the list used to open with attention
backends and NCCL wrappers. A person wants first the sites a target instance could be behind.
An instance of the target's class (or of a subclass) is reachable from the object that made it:
`self.model = Qwen2Model(...)` makes `model` a *holder* of it in that class, and the class that
holds it is an *owner*, itself held under some attribute of its own owner
(`self.language_model = Qwen2ForCausalLM(...)`), up to MAX_OWNER_LEVELS. A blocker ranks by:

1. the closest holder its callee goes through (`self.language_model(...)`, `layer(...)` where
   `layer` comes from `self.layers`), if any;
2. whether it sits in a file that defines or makes the target's family or an owner;
3. then the name bound's rank and the distance from the entry, as before.

This only orders the list; which sites are listed, and so the verdict, is the name bound's.
Names are compared by their last component, so two classes of one name both count: the order
may be less sharp for it, never wrong.
"""
from __future__ import annotations

import ast
import bisect
import itertools
import re
import time


# Owners followed upwards from the target's family: holder of the family, holder of that, ...
MAX_OWNER_LEVELS = 2
_UNRANKED = (1, 0, 2)
_CLASS_LINE = re.compile(r"[ \t]*class[ \t]+(\w+)")
# `self.a = ...`, `self.a: T = ...`, `x, self.a, self.b = ...` (not `==`, not `self.a[i] = ...`)
_SELF_STORE = re.compile(r"[ \t]*((?:[\w.]+[ \t]*,[ \t]*)*self\.\w+(?:[ \t]*,[ \t]*[\w.]+)*)[ \t]*(?::[^=\n]*)?=(?!=)")
# Continuation lines read for one statement (a call's arguments, a lambda in them).
MAX_STATEMENT_LINES = 40
# Up to this many names, a file is first tested for each name as a substring (faster than one
# regex over few names); above it, one regex over all of them.
FEW_NAMES = 12


class Leads:
    """Holders and owner files of one target's class family, read from the tree's texts."""

    def __init__(self, texts: list, headers: dict, target_class: str | None, deadline: float | None = None):
        """`texts`: (path, source) of the scope; `headers`: base name -> {(subclass, path)}
        (index.project.Project.class_headers). Past `deadline` (time.perf_counter(), a
        --max-seconds budget) the reading stops and `cut` is set: the tables are partial."""
        self.holders: dict[str, int] = {}   # attribute name -> owner level (0: holds the family)
        self.files: dict[str, int] = {}     # file path -> level (0: defines or makes the family)
        self.deadline = deadline
        self.cut = False
        self._bound: dict[object, dict[str, set[str]]] = {}  # function node -> _bound_attrs of it
        if target_class:
            self._read(texts, headers, target_class)

    def _read(self, texts: list, headers: dict, target_class: str) -> None:
        subclasses: dict[str, set[str]] = {}
        for base, subs in headers.items():
            for sub, path in subs:
                subclasses.setdefault(base, set()).add(sub)
                if sub == target_class or base == target_class:
                    self.files.setdefault(str(path), 0)
        names = _closure({target_class}, subclasses)
        for base, subs in headers.items():
            for sub, path in subs:
                if sub in names:
                    self.files.setdefault(str(path), 0)
        seen = set(names)
        for level in range(MAX_OWNER_LEVELS):
            owners = self._holders_of(texts, names, level)
            if self.cut:
                return
            names = _closure(owners, subclasses) - seen
            seen |= names
            if not names:
                break

    def _holders_of(self, texts: list, names: set[str], level: int) -> set[str]:
        """Record the attributes that hold an instance of `names` (made in a class's code:
        `self.x = Name(...)`, the statement's continuation lines included, so a lambda handed to
        a helper counts: `self.layers = make_layers(n, lambda i: Layer(i))`), and return the
        classes that hold them. Read off the text, line by line: no file is parsed."""
        # made here: `Name(` (not `isinstance(x, Name)`, not an annotation)
        alternatives = "|".join(sorted(map(re.escape, names)))
        pattern = re.compile(r"\b(?:" + alternatives + r")\s*\(")
        # A file none of whose text matches `made` (`pattern` less its leading `\b`, which
        # defeats the regex engine's scan for the names' first letters, and with the names as
        # a trie, so that a position is tried once, not once per name) has no statement that
        # matches `pattern`. Over transformers' 2,860 files and a family of 160 names that
        # search is well under a second, where a substring test per name and file was 8 s; for
        # a few names the substring tests are the faster filter.
        made = re.compile(_trie(sorted(names)) + r"\s*\(")
        few = len(names) <= FEW_NAMES
        owners: set[str] = set()
        for path, text in texts:
            if self.deadline is not None and time.perf_counter() > self.deadline:
                self.cut = True
                return owners
            if few and not any(name in text for name in names):
                continue
            first = made.search(text)
            if first is None:
                continue
            # The lines where a match of `made` starts (a name is on one line); `pattern`
            # matches a statement only there (a statement is a stretch of the text).
            ends = list(itertools.accumulate(map(len, text.splitlines(True))))
            hits = {bisect.bisect_right(ends, m.start()) for m in made.finditer(text, first.start())}
            lines = text.splitlines()
            # A statement runs over at most MAX_STATEMENT_LINES lines after its first: only the
            # stores that start that close above a line making the family can match, so only
            # they are read (the walk over every line of such files was 4 s a query).
            starts = sorted({i for k in hits for i in range(max(0, k - MAX_STATEMENT_LINES), k + 1)})
            for i in starts:
                line = lines[i]
                m = _SELF_STORE.match(line)
                if not m or _CLASS_LINE.match(line):
                    continue
                owner = _enclosing_class(lines, i)
                if owner is None or not pattern.search(_statement(lines, i, m.end())):
                    continue
                for attr in re.findall(r"self\.(\w+)", m.group(1)):
                    self.holders[attr] = min(self.holders.get(attr, level), level)
                owners.add(owner)
                self.files[str(path)] = min(self.files.get(str(path), level), level)
        return owners

    def _callee_attrs(self, expr: ast.AST, fn) -> set[str]:
        """`_callee_attrs`, with what the function's locals are bound from read once per function
        (a query's blockers are thousands of sites in a few hundred functions)."""
        body = getattr(fn, "node", None)
        if body is None:
            return _callee_attrs(expr, {})
        bound = self._bound.get(body)
        if bound is None:
            bound = self._bound[body] = _bound_attrs(body)
        return _callee_attrs(expr, bound)

    def key(self, node: ast.Call | None, fn) -> tuple[int, int, int]:
        """(no holder?, holder level, file level) of a blocker: lower is read first."""
        if node is None or (not self.holders and not self.files):
            return _UNRANKED
        level = min((self.holders[a] for a in self._callee_attrs(node.func, fn) if a in self.holders), default=None)
        path = str(getattr(getattr(fn, "module", None), "path", ""))
        file_level = self.files.get(path, MAX_OWNER_LEVELS)
        return (0, level, file_level) if level is not None else (1, 0, file_level)


def _trie(words: list[str]) -> str:
    """A regex matching exactly `words` (escaped), their common prefixes factored out:
    `Llama(?:Attention|Model)`, not `LlamaAttention|LlamaModel`."""
    tree: dict = {}
    for w in words:
        node = tree
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict) -> str:
        ends = "" in node
        branches = [re.escape(ch) + emit(sub) for ch, sub in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if ends else body

    return "(?:" + emit(tree) + ")"


def _enclosing_class(lines: list[str], i: int) -> str | None:
    """The innermost class whose body line i is in, by indentation: the nearest class header
    above it indented less than every code line from there down to line i (comments and blank
    lines do not count), or None when a line at the left margin comes first."""
    low = _indent(lines[i])
    for j in range(i - 1, -1, -1):
        line = lines[j]
        stripped = line.lstrip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(line) - len(stripped)
        if indent < low:
            m = _CLASS_LINE.match(line)
            if m:
                return m.group(1)
            low = indent
            if low == 0:
                return None
    return None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _closure(names: set[str], subclasses: dict[str, set[str]]) -> set[str]:
    out, todo = set(names), list(names)
    while todo:
        for sub in subclasses.get(todo.pop(), ()):
            if sub not in out:
                out.add(sub)
                todo.append(sub)
    return out


def _statement(lines: list[str], i: int, start: int) -> str:
    """The right-hand side of the assignment on line i, from column `start`, with the lines
    it continues on while brackets are open."""
    parts = [lines[i][start:]]
    depth = _depth(parts[0])
    j = i
    while depth > 0 and j + 1 < len(lines) and j - i < MAX_STATEMENT_LINES:
        j += 1
        parts.append(lines[j])
        depth += _depth(lines[j])
    return "\n".join(parts)


def _depth(text: str) -> int:
    code = re.sub(r"(\"[^\"]*\"|'[^']*'|#.*$)", "", text)
    return sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}")


def _callee_attrs(expr: ast.AST, bound: dict[str, set[str]]) -> set[str]:
    """The attribute names a callee goes through: `self.a.b[i](...)` -> {a, b}; a local bound
    by a `for` or an assignment in the caller (`for layer in self.layers:`) -> its source's
    (`bound`: `_bound_attrs` of the caller)."""
    out: set[str] = set()
    for n in ast.walk(expr):
        if isinstance(n, ast.Attribute):
            out.add(n.attr)
        elif isinstance(n, ast.Name):
            out.update(bound.get(n.id, ()))
    return out


def _bound_attrs(body: ast.AST) -> dict[str, set[str]]:
    """Each name a `for`, a comprehension or a one-target assignment in `body` binds -> the
    attribute names its source goes through (`for layer in self.layers:` -> layer: {layers})."""
    out: dict[str, set[str]] = {}
    for n in ast.walk(body):
        if isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension)):
            src, tgt = n.iter, n.target
        elif isinstance(n, ast.Assign):
            src, tgt = n.value, n.targets[0] if len(n.targets) == 1 else None
        else:
            continue
        if tgt is None:
            continue
        attrs = {a.attr for a in ast.walk(src) if isinstance(a, ast.Attribute)}
        for t in ast.walk(tgt):
            if isinstance(t, ast.Name):
                out.setdefault(t.id, set()).update(attrs)
    return out
