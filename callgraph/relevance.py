"""Which unresolved call sites could lead to the target: a cheap, sound-by-name bound.

The honesty rule says "unreachable" only when no unresolved call in the explored closure could
lead to the target. Most unresolved calls (`x.view()`, `out.float()`) call methods that no
function able to reach the target is named after. We compute, over the whole tree and by names
alone, which def names can reach the target's name:
- a call `x.a(...)` may run any def named `a`, or, when some object has an attribute `a`
  assigned, whatever object it holds (a module: `forward`; a function value);
- a call `f(...)` of a local or parameter may run whatever was passed in;
- a class constructor runs `__init__`.
A site is relevant when one of its possible callees is in that set. Per-file summaries are
cached by content hash, and built over 2 processes when the cache is cold.
"""
from __future__ import annotations

import ast
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .cache import Cache, sha1_bytes
from .index.scopes import walk_local

INSTANCE_CALLEES = ("forward", "__call__")
# Files summarised per worker task; the pool is only worth starting for big trees.
POOL_MIN_FILES = 150


@dataclass
class NameIndex:
    defs: dict[str, list[tuple[frozenset, bool]]] = field(default_factory=dict)  # name -> (callees, holder call)
    holders: set[str] = field(default_factory=set)     # attribute names ever assigned
    values: set[str] = field(default_factory=set)      # def names used as values (passed, stored)
    classes: set[str] = field(default_factory=set)

    def add(self, summary: dict) -> None:
        for name, callees, holder in summary["defs"]:
            self.defs.setdefault(name, []).append((frozenset(callees), holder))
        self.holders.update(summary["holders"])
        self.values.update(summary["values"])
        self.classes.update(summary["classes"])


def summarize_source(data: bytes) -> dict | str:
    """The file's name summary, or the reason it cannot be read."""
    try:
        tree = ast.parse(data.decode("utf-8-sig"))
    except SyntaxError as exc:
        return f"syntax error at line {exc.lineno}: {exc.msg}"
    except UnicodeDecodeError as exc:
        return f"not UTF-8 (byte {exc.start})"
    except (ValueError, RecursionError) as exc:
        return f"cannot parse: {exc}"
    defs, holders, values, classes = [], set(), set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            classes.add(node.name)
            for stmt in node.body:
                if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                    for t in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
                        if isinstance(t, ast.Name):
                            holders.add(t.id)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                for sub in ast.walk(t):
                    if isinstance(sub, ast.Attribute):
                        holders.add(sub.attr)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr":
            if len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
                holders.add(node.args[1].value)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            defs.append(_summarize_def(node, values))
    return {"defs": defs, "holders": sorted(holders), "values": sorted(values), "classes": sorted(classes)}


def _summarize_def(node, values: set) -> tuple[str, list[str], bool]:
    name = node.name if not isinstance(node, ast.Lambda) else "<lambda>"
    a = node.args
    local = {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs}
    local |= {x.arg for x in (a.vararg, a.kwarg) if x is not None}
    called_funcs = set()
    callees, holder = set(), False
    for sub in walk_local(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
            local.add(sub.id)
        elif isinstance(sub, ast.Call):
            called_funcs.add(id(sub.func))
    for sub in walk_local(node):
        if isinstance(sub, ast.Call):
            f = sub.func
            if isinstance(f, ast.Attribute):
                callees.add(f.attr)
                callees.add("@" + f.attr)  # may also be an object held in attribute f.attr
            elif isinstance(f, ast.Name):
                if f.id in local:
                    holder = True
                else:
                    callees.add(f.id)
            else:
                holder = True
        elif isinstance(sub, ast.Lambda):
            values.add("<lambda>")
        elif isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Load) and id(sub) not in called_funcs:
            values.add(sub.attr)
        elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and id(sub) not in called_funcs:
            values.add(sub.id)
    return name, sorted(callees), holder


def _summarize_file(path: str) -> tuple[str, str, dict | str]:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        return path, "", f"cannot read: {exc.strerror or exc}"
    return path, sha1_bytes(data), summarize_source(data)


def build_index(files: list[Path], cache: Cache, progress: Callable[[str], None] | None = None,
                skipped: Callable[[Path, str], None] | None = None) -> NameIndex:
    index = NameIndex()
    todo: list[str] = []
    for p in files:
        try:
            digest = sha1_bytes(p.read_bytes())
        except OSError:
            continue
        hit = cache.get("names", digest)
        if hit is not None:
            index.add(hit)
        else:
            todo.append(str(p))
    if not todo:
        return index
    if progress and len(todo) > POOL_MIN_FILES:
        progress(f"summarising names in {len(todo)} files (cached for next time)")
    if len(todo) >= POOL_MIN_FILES and (os.cpu_count() or 1) > 1:
        with ProcessPoolExecutor(max_workers=min(4, os.cpu_count() or 2)) as pool:
            results = list(pool.map(_summarize_file, todo, chunksize=32))
    else:
        results = [_summarize_file(p) for p in todo]
    for path, digest, summary in results:
        if isinstance(summary, dict):
            cache.put("names", digest, summary)
            index.add(summary)
        elif skipped is not None:
            skipped(Path(path), summary)
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
        """None when the site cannot lead to the target; else a rank (lower = closer)."""
        f = node.func
        hold = self.holders_reach()
        ranks = []
        if isinstance(f, ast.Attribute):
            if f.attr in self.dist:
                ranks.append(self.dist[f.attr])
            if hold and f.attr in self.index.holders:
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
        return min(ranks) if ranks else None
