"""Which unresolved call sites could lead to the target: a cheap, sound-by-name bound.

The honesty rule says "unreachable" only when no unresolved call in the explored closure could
lead to the target. Most unresolved calls (`x.view()`, `out.float()`) call methods that no
function able to reach the target is named after. We compute, over the whole tree and by names
alone, which def names can reach the target's name:
- a call `x.a(...)` may run any def named `a`, or, when some object has an attribute `a`
  assigned, whatever object it holds (a module: `forward`; a function value); attributes set by
  computed names (`setattr(self, name, m)`, `self.add_module(name, m)`) may be any name;
- a call `f(...)` of a local or parameter may run whatever was passed in;
- a class constructor runs `__init__` (a decorated class's generated one: its `__post_init__`
  and its fields' default factories);
- syntax runs methods it does not name (`index/implicit_names.py`): operators their dunders,
  loops `__iter__`, a read `x.a` what a decorated def named `a` (or a class attribute `a` set by
  a call, such as `property(f)`) runs, and `__getattr__` / `__getattribute__` / `__get__`, a
  store `__setattr__` / `__set__`, `len(x)` `__len__`...
A site is relevant when one of its possible callees is in that set. Per-file summaries are
cached by content hash, and built over 2 processes when the cache is cold.
"""
from __future__ import annotations

import ast
import multiprocessing
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .cache import Cache
from .index import implicit_names
from .index.sources import Source, Sources, read_file

INSTANCE_CALLEES = ("forward", "__call__")
# Methods that set an attribute by the name given first (torch.nn.Module's).
NAMING_STORES = frozenset({"add_module", "register_module"})
# Defs that answer an attribute read of any name (a class's; a module's, PEP 562).
DYNAMIC_READERS = frozenset({"__getattr__", "__getattribute__"})
# Files summarised per worker task; the pool is only worth starting for big trees.
POOL_MIN_FILES = 150


@dataclass
class NameIndex:
    defs: dict[str, list[tuple[frozenset, bool]]] = field(default_factory=dict)  # name -> (callees, holder call)
    holders: set[str] = field(default_factory=set)     # attribute names ever assigned
    values: set[str] = field(default_factory=set)      # def names used as values (passed, stored)
    classes: set[str] = field(default_factory=set)
    dynamic_holders: bool = False  # some attribute is set by a computed name: any may hold
    missing: int = 0  # files left unsummarised (a --max-seconds cut): no site may be ruled out

    def add(self, summary: dict) -> None:
        self.dynamic_holders = self.dynamic_holders or summary.get("dynamic", False)
        for name, callees, holder in summary["defs"]:
            self.defs.setdefault(name, []).append((frozenset(callees), holder))
        self.holders.update(summary["holders"])
        self.values.update(summary["values"])
        self.classes.update(summary["classes"])


def index_record(index: NameIndex, skipped: list[tuple[str, str]]) -> dict:
    """The whole index as one cache record: each distinct callee set once (`callees`; 15,764
    sets for transformers' 38,312 defs), the defs as [name, callee set, holder] in the index's
    own order (which the fixpoint's ranks follow), and the files skipped while it was built,
    (path, why), so that a run reading it warns about them as the building run did."""
    sets: dict[frozenset, int] = {}
    defs = [[name, sets.setdefault(callees, len(sets)), holder]
            for name, recs in index.defs.items() for callees, holder in recs]
    return {"callees": [sorted(s) for s in sets], "defs": defs, "holders": sorted(index.holders),
            "values": sorted(index.values), "classes": sorted(index.classes),
            "dynamic": index.dynamic_holders, "skipped": [[path, why] for path, why in skipped]}


def index_of_record(record: dict) -> NameIndex:
    index = NameIndex(holders=set(record["holders"]), values=set(record["values"]),
                      classes=set(record["classes"]), dynamic_holders=record["dynamic"])
    sets = [frozenset(s) for s in record["callees"]]
    for name, i, holder in record["defs"]:
        index.defs.setdefault(name, []).append((sets[i], holder))
    return index


def summarize_source(src: Source) -> dict | str:
    """The file's name summary, or the reason it cannot be read."""
    tree, problem = src.parse()
    if tree is None:
        return problem or "cannot parse"
    v = _Summarizer()
    try:
        v.visit(tree)
    except RecursionError:  # nested deeper than the visitor's stack: a coarser, still sound summary
        return _coarse_summary(tree)
    return {"defs": v.defs, "holders": sorted(v.holders), "values": sorted(v.values), "classes": sorted(v.classes),
            "dynamic": v.dynamic}


def _coarse_summary(tree: ast.AST) -> dict:
    """A summary by one flat walk (ast.walk keeps no stack): every def may call every name the
    file mentions, and may call what it is given. More sites stay relevant than with the exact
    summary, never fewer, so a verdict built on it is as honest."""
    names: set[str] = set()
    defs: list[str] = []
    classes: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defs.append(node.name)
        elif isinstance(node, ast.Lambda):
            defs.append("<lambda>")
        elif isinstance(node, ast.ClassDef):
            classes.append(node.name)
    callees = sorted(names | {"@" + n for n in names})
    return {"defs": [(name, callees, True) for name in defs], "holders": sorted(names),
            "values": sorted(names | ({"<lambda>"} if "<lambda>" in defs else set())),
            "classes": sorted(set(classes)), "dynamic": True}


def text_summary(data: bytes) -> dict:
    """The coarse summary of a file that is not parsed (over the size limit), from its text
    alone: every def may call every name the file mentions, and what it is given. As sound as
    `_coarse_summary`, so skipping a big file never turns a site it could explain irrelevant."""
    text = data.decode("utf-8", errors="replace")
    names = set(re.findall(r"[A-Za-z_]\w*", text))
    defs = set(re.findall(r"(?:def|class)\s+([A-Za-z_]\w*)", text)) | {"<lambda>"}
    callees = sorted(names | {"@" + n for n in names})
    return {"defs": [(name, callees, True) for name in sorted(defs)], "holders": sorted(names),
            "values": sorted(names | {"<lambda>"}), "dynamic": True,
            "classes": sorted(set(re.findall(r"class\s+([A-Za-z_]\w*)", text)))}


class _Summarizer(ast.NodeVisitor):
    """One pass over a module: per def, the names it calls and whether it calls a local."""

    def __init__(self):
        self.defs: list = []
        self.holders: set[str] = set()
        self.values: set[str] = set()
        self.classes: set[str] = set()
        self.dynamic = False
        self.stack: list[dict] = []

    def _def(self, node, name: str, body) -> None:
        a = node.args
        for d in a.defaults + [x for x in a.kw_defaults if x is not None]:
            self.visit(d)
        local = {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs}
        local |= {x.arg for x in (a.vararg, a.kwarg) if x is not None}
        frame = {"local": local, "callees": set(), "bare": [], "holder": False}
        self.stack.append(frame)
        for stmt in body:
            self.visit(stmt)
        self.stack.pop()
        callees = frame["callees"]
        holder = frame["holder"]
        for bare in frame["bare"]:
            if bare in frame["local"]:
                holder = True
            else:
                callees.add(bare)
        self.defs.append((name, sorted(callees), holder))
        if getattr(node, "decorator_list", None):  # may be an accessor: a read of `.name` runs it
            self.defs.append((implicit_names.ACCESSOR + name, sorted(callees), holder))

    def visit(self, node):
        if self.stack:  # what the node runs without naming it (operators, loops, reads...)
            hidden = implicit_names.of_node(node)
            if hidden:
                self.stack[-1]["callees"].update(hidden)
        return super().visit(node)

    def _decorate(self, node) -> None:
        """A nested def's or class's decorators are called on it, in the enclosing body."""
        frame = self.stack[-1] if self.stack else None
        for d in node.decorator_list:
            if frame is not None:
                if isinstance(d, ast.Name):
                    frame["bare"].append(d.id)
                elif isinstance(d, ast.Attribute):
                    frame["callees"].update((d.attr, "@" + d.attr) + implicit_names.attribute(d))
                else:
                    frame["holder"] = True  # `@make(...)`: what the call returned is called
            self.visit(d)

    def visit_FunctionDef(self, node):
        self._decorate(node)
        if node.name in DYNAMIC_READERS:
            self.dynamic = True  # it answers a read of any name with what it returns
        self._def(node, node.name, node.body)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node):
        self.values.add("<lambda>")
        self._def(node, "<lambda>", [node.body])

    def visit_ClassDef(self, node):
        self.classes.add(node.name)
        self._decorate(node)
        for d in node.bases + [k.value for k in node.keywords]:
            self.visit(d)
        for stmt in node.body:
            if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                for t in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
                    if isinstance(t, ast.Name):
                        self.holders.add(t.id)
                        if isinstance(stmt.value, ast.Call):  # `x = property(f)`: reading x runs f
                            self.defs.append((implicit_names.ACCESSOR + t.id, _mentioned(stmt.value), False))
            self.visit(stmt)
        generated = _generated_init(node)
        if generated is not None:  # a dataclass's `__init__`, written by no def
            self.defs.append(("__init__", generated, False))

    def _store(self, target) -> None:
        for sub in _targets(target):
            if isinstance(sub, ast.Attribute):
                self.holders.add(sub.attr)

    def visit_Assign(self, node):
        for t in node.targets:
            self._store(t)
        self.generic_visit(node)

    def visit_AnnAssign(self, node):
        self._store(node.target)
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        self._store(node.target)
        self.generic_visit(node)

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Store):
            if self.stack:
                self.stack[-1]["local"].add(node.id)
        else:
            self.values.add(node.id)

    def visit_Attribute(self, node):
        if isinstance(node.ctx, ast.Load):
            self.values.add(node.attr)
        if self.stack:
            self.stack[-1]["callees"].update(implicit_names.attribute(node))
        self.visit(node.value)

    def visit_Raise(self, node):
        if self.stack and isinstance(node.exc, ast.Name):  # `raise E` calls E()
            self.stack[-1]["bare"].append(node.exc.id)
        elif self.stack and isinstance(node.exc, ast.Attribute):
            self.stack[-1]["callees"].add(node.exc.attr)
        self.generic_visit(node)

    def visit_Call(self, node):
        f = node.func
        frame = self.stack[-1] if self.stack else None
        if frame is not None:
            frame["callees"].update(implicit_names.of_call(node))  # `len(x)`: x.__len__
        if isinstance(f, ast.Attribute):
            if f.attr in NAMING_STORES and node.args:
                self._named_store(node.args[0])  # nn.Module's add_module(name, module)
            if frame is not None:
                frame["callees"].add(f.attr)
                frame["callees"].add("@" + f.attr)  # may also be an object held in attribute f.attr
                frame["callees"].update(implicit_names.attribute(f))  # `x.m` is read first
            self.visit(f.value)
        elif isinstance(f, ast.Name):
            if frame is not None:
                frame["bare"].append(f.id)
            if f.id == "setattr" and len(node.args) >= 2:
                self._named_store(node.args[1])
        else:
            if frame is not None:
                frame["holder"] = True
            self.visit(f)
        for arg in node.args:
            self.visit(arg)
        for kw in node.keywords:
            self.visit(kw.value)


    def _named_store(self, name: ast.AST) -> None:
        """An attribute set by name: that name holds a value, or any name does if computed."""
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            self.holders.add(name.value)
        else:
            self.dynamic = True


def _mentioned(value: ast.Call) -> list[str]:
    """The names a class attribute's call mentions (`property(get_x, set_x)`, `D(fn=f)`): what
    reading or storing the attribute may run."""
    names = set()
    for n in ast.walk(value):
        if isinstance(n, ast.Name):
            names.add(n.id)
        elif isinstance(n, ast.Attribute):
            names.add(n.attr)
    return sorted(names | {"__get__", "__set__", "__delete__"})


def _generated_init(node: ast.ClassDef) -> list[str] | None:
    """What the `__init__` a decorator may generate for class `node` (`@dataclass`: no def
    writes it) runs: `__post_init__`, and each field's default factory (`x: C =
    field(default_factory=C)`, `lambda: make()`: the names it mentions); None for an undecorated
    class."""
    if not node.decorator_list:
        return None
    names = {"__post_init__"}
    for stmt in node.body:
        value = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign)) else None
        if isinstance(value, ast.Call):
            for kw in value.keywords:
                if kw.arg == "default_factory":
                    names.update(n.id if isinstance(n, ast.Name) else n.attr
                                 for n in ast.walk(kw.value) if isinstance(n, (ast.Name, ast.Attribute)))
    return sorted(names)


def _targets(t: ast.AST):
    """The stored-to expressions of an assignment target (tuples unpacked; `a.b[i] = v`
    stores into an item, not into attribute b, so it is not a holder of b)."""
    if isinstance(t, (ast.Tuple, ast.List)):
        for elt in t.elts:
            yield from _targets(elt.value if isinstance(elt, ast.Starred) else elt)
    else:
        yield t


def _summarize_file(path: str) -> tuple[str, str, dict | str]:
    """In a worker: the file read afresh (its text is not sent over), its digest and summary."""
    src = read_file(Path(path))
    if isinstance(src, str):
        return path, "", src
    return path, src.digest, summarize_source(src)


def build_index(sources: Sources, cache: Cache, progress: Callable[[str], None] | None = None,
                skipped: Callable[[Path, str], None] | None = None,
                deadline: float | None = None, unparsed: list[Path] = ()) -> NameIndex:
    """The names of every file, from the cache or summarised now. Past `deadline` (a
    `--max-seconds` budget, time.perf_counter()), the files not yet summarised are counted in
    `missing`: what was summarised is cached, and the index rules nothing out. `unparsed`
    files (over the size limit) count by their text (`text_summary`)."""
    index = NameIndex()
    for p in unparsed:
        try:
            index.add(text_summary(p.read_bytes()))
        except OSError:
            index.missing += 1
    todo: list[str] = []
    files = sources.files()
    for n, p in enumerate(files):
        if deadline is not None and time.perf_counter() > deadline:  # even reading the
            index.missing = len(files) - n + len(todo)              # cache costs seconds
            return index
        digest = sources.digest(p)
        if digest is None:
            continue
        hit = cache.get("names", digest)
        if hit is not None:
            index.add(hit)
        else:
            todo.append(str(p))
    if not todo:
        return index
    if deadline is not None and time.perf_counter() > deadline:
        index.missing = len(todo)
        return index
    if progress and len(todo) > POOL_MIN_FILES:
        progress(f"summarising names in {len(todo)} files (cached for next time)")
    pool = None
    if len(todo) >= POOL_MIN_FILES and (os.cpu_count() or 1) > 1:
        pool = multiprocessing.Pool(min(4, os.cpu_count() or 2))
        results = pool.imap(_summarize_file, todo, chunksize=32 if deadline is None else 4)
    else:
        results = map(_summarize_file, todo)
    done = 0
    try:
        for path, digest, summary in results:
            done += 1
            if isinstance(summary, dict):
                cache.put("names", digest, summary)
                index.add(summary)
            else:  # not parsed: its names still count, by its text (a skipped file can call)
                if skipped is not None:
                    skipped(Path(path), summary)
                try:
                    index.add(text_summary(Path(path).read_bytes()))
                except OSError:
                    index.missing += 1
            if deadline is not None and time.perf_counter() > deadline and done < len(todo):
                index.missing = len(todo) - done
                break
    finally:
        if pool is not None:  # a cut run stops the workers: it no longer needs their files
            pool.terminate()
            pool.join()
    return index


class Relevance:
    """Names that may lead to the target, each with its distance in name hops."""

    def __init__(self, index: NameIndex, target_name: str):
        self.index = index
        self.dist: dict[str, int] = {target_name: 0}
        self._fixpoint()

    def holders_reach(self) -> bool:
        return any(n in self.dist for n in INSTANCE_CALLEES) or any(v in self.dist for v in self.index.values)

    def _fixpoint(self) -> None:
        rnd = 0
        changed = True
        while changed:
            changed = False
            rnd += 1
            hold = self.holders_reach()
            for name, recs in self.index.defs.items():
                if name in self.dist:
                    continue
                for callees, holder in recs:
                    if (holder and hold) or any(self._callee_hits(c, hold) for c in callees):
                        self.dist[name] = rnd
                        changed = True
                        break

    def _callee_hits(self, callee: str, hold: bool) -> bool:
        if callee.startswith("@"):
            return hold and callee[1:] in self.index.holders
        if callee in self.dist:
            return True
        return callee in self.index.classes and "__init__" in self.dist

    def site_rank(self, node: ast.Call, caller_locals: set[str]) -> int | None:
        """None when the site cannot lead to the target; else a rank (lower = closer). An
        index with files missing rules nothing out: any site may lead there (rank 99 at most)."""
        f = node.func
        hold = self.holders_reach()
        ranks = []
        hidden = getattr(node, "rank_names", None)  # an implicit call on a receiver not inferred
        if hidden is not None:
            ranks = [self.dist[n] for n in hidden if n in self.dist]
            if implicit_names.ANY_ACCESSOR in hidden:
                ranks += [d for n, d in self.dist.items() if n.startswith(implicit_names.ACCESSOR)][:1]
        elif isinstance(f, ast.Attribute):
            if f.attr in self.dist:
                ranks.append(self.dist[f.attr])
            if hold and (f.attr in self.index.holders or self.index.dynamic_holders):
                ranks.append(1 + min(self.dist.get(n, 99) for n in INSTANCE_CALLEES))
        elif isinstance(f, ast.Name) and f.id not in caller_locals:
            if f.id in self.dist:
                ranks.append(self.dist[f.id])
            if f.id in self.index.classes and "__init__" in self.dist:
                ranks.append(self.dist["__init__"])
            if hold and f.id not in self.index.defs and f.id not in self.index.classes:
                # a global alias of something (`fn = helper`): may hold any callable
                ranks.append(1 + min(self.dist.get(n, 99) for n in INSTANCE_CALLEES))
        elif hold:
            ranks.append(1 + min(self.dist.get(n, 99) for n in INSTANCE_CALLEES))
        if self.index.missing:
            ranks.append(99)
        return min(ranks) if ranks else None
