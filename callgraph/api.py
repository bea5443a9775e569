"""`Analysis`: one analysed tree, shared by every query on it (see docs/api.md).

Source tree → index (Project) → resolver (Evaluator) → exploration (networkx graph) → query.
Many queries on one Analysis share the parsed files, the index, the registries' tables, the name
summaries and Jedi's answers; each query's inference starts afresh (`_new_query`), so its answer
does not depend on the queries asked before it.
"""
from __future__ import annotations

import copy
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable

from . import __version__
from .cache import Cache, key_of
from .errors import BindingError, RootError
from .explore import Explorer, graph_view
from .gcpause import collector_paused
from .lookup import Resolved, resolve, unmatched_factories
from .registries import Registries, read_model_config
from .index.project import Project
from .index.sources import file_digest
from .jedi_oracle import JediOracle
from .leads import Leads
from .infer.evaluator import Evaluator
from .model import GraphView, Node, Proof, Unresolved
from . import entry_args
from .query import ReachInputs, reach, start_context
from .relevance import Relevance, build_index, index_of_record, index_record
from .roots import MAX_FILE_MB, find_roots
from .whole_tree import whole_tree

RECURSION_LIMIT = 8000


class Analysis:
    def __init__(
        self,
        roots: list[str] | tuple[str, ...] = (),
        package: str | None = None,
        binds: dict[str, str] | None = None,
        model_config: str | Path | None = None,
        cache_dir: str | Path | None = None,
        use_cache: bool = True,
        progress: Callable[[str], None] | None = None,
        warn: Callable[[str], None] | None = None,
        max_file_mb: float | None = MAX_FILE_MB,
    ):
        self.progress = progress
        # Nested inference recurses through evaluate/attribute/call frames; the limits in
        # docs/rules.md bound it, this leaves them room on deeply nested analysed code.
        sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))
        self.source_roots = find_roots(list(roots), package)
        self.project = Project(self.source_roots, warn=warn or (lambda m: print(f"callgraph: warning: {m}", file=sys.stderr)),
                               max_file_mb=max_file_mb)
        if not self.project.scope_files():
            where = ", ".join(str(r.scope) for r in self.source_roots)
            raise RootError(f"no Python files under {where}")
        self.cache = Cache(Path(cache_dir) if cache_dir else None, enabled=use_cache)
        self.model_config = read_model_config(model_config) if model_config else None
        self.registries = Registries(self.project, self.model_config)
        self.registries.validate()
        self.ev = Evaluator(self.project, {}, registries=self.registries)
        self.ev.binds = self._resolve_binds(binds or {})
        self.explorer = Explorer(self.project, self.ev)
        self._queried = False
        self._names = None
        self._relevance: dict[str, Relevance] = {}
        self._leads: dict[str | None, Leads] = {}
        self._oracle = None
        self._digest: str | None = None
        # the names a cached proof shows -> which of their prefixes are classes (its record's
        # `classes`): a warm answer prints `Class.method` without parsing those modules again
        self._shown_classes: dict[frozenset[str], set[str]] = {}

    # -- names -----------------------------------------------------------------------------
    @property
    def roots(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(str(r.import_root) for r in self.source_roots))

    def _resolve(self, name: str, what: str = "name") -> Resolved:
        return resolve(self.project, name, self.ev.classes, what)

    def resolve(self, name: str) -> str:
        return self._resolve(name).func

    def _resolve_binds(self, binds: dict[str, str]) -> dict[str, str]:
        """FACTORY (a callee expression, or a site `file.py:LINE`) -> its classes' qualified
        names, comma-separated (a factory may build several: Llava's two towers)."""
        out = {}
        for factory, classes in binds.items():
            names = [c.strip() for c in (classes or "").split(",")]
            if not factory or not all(names):
                raise BindingError(f"--bind {factory}={classes}: expected FACTORY=CLASS[,CLASS...]")
            quals = []
            for cls in names:
                r = self._resolve(cls, what="--bind class")
                if r.cls is None:
                    raise BindingError(f"--bind {factory}={cls}: {cls} is not a class")
                quals.append(r.cls)
            out[factory] = ",".join(dict.fromkeys(quals))
        return out

    def unmatched_binds(self) -> list[str]:
        """The factories of `binds` that no call in the tree names (most likely misspelt): the
        commands warn, `check` refuses (lookup.unmatched_factories)."""
        return unmatched_factories(self.project, self.ev.binds) if self.ev.binds else []

    def with_model_config(self, model_config: str | Path | None) -> "Analysis":
        """The same tree under another model config: the parsed files, the registries' tables,
        the name summaries and the cache are shared; every inference starts afresh."""
        other = copy.copy(self)
        other.model_config = read_model_config(model_config) if model_config else None
        other.registries = self.registries.with_config(other.model_config)
        other.registries.validate()
        other.ev = Evaluator(self.project, dict(self.ev.binds), registries=other.registries)
        other.explorer = Explorer(self.project, other.ev)
        return other

    def entry_of_config(self) -> str:
        """With --model-config and no ENTRY: the class its `architectures` names in the tree."""
        return self.registries.entry_class()

    def _config_key(self) -> str:
        return self.model_config.digest() if self.model_config else ""

    def node(self, qual: str) -> Node:
        if qual not in self.project.functions and qual not in self.project.classes:
            parts = qual.split(".")  # not parsed yet (a cached answer): load its module
            for i in range(len(parts) - 1, 0, -1):
                if self.project.locate(".".join(parts[:i])) is not None:
                    self.project.module(".".join(parts[:i]))
                    break
        fn = self.project.functions.get(qual)
        if fn is not None:
            return Node(qual, fn.module.display, fn.line)
        cls = self.project.classes.get(qual)
        if cls is not None:
            return Node(qual, cls.module.display, cls.line)
        return Node(qual, "", 0)

    def classes_named_in(self, proof: Proof) -> set[str]:
        """The classes among the prefixes of the qualified names a proof shows, so its text can
        say `Class.method`. A cached answer parsed nothing: its record says which they are
        (`_shown`); otherwise the modules those names live in are loaded here, as `node` does."""
        names = _shown_names(proof)
        known = self._shown_classes.get(names)
        if known is not None:
            return set(known)
        for qual in names:
            self.node(qual)
        return {p for q in names for p in _prefixes(q) if p in self.project.classes}

    def source_text(self, path: Path) -> str | None:
        """A file's text through the analysis's one reader (`index/sources.py`), or None when it
        cannot be read or decoded."""
        return self.project.sources.text(path)

    def function_at(self, path: str | Path, line: int) -> str | None:
        p = Path(path)
        if not p.is_absolute():
            for root in self.source_roots:
                for base in (root.import_root, root.scope):
                    if (base / p).is_file():
                        p = base / p
                        break
        fn = self.project.function_at(p, line)
        return fn.qual if fn else None

    # -- queries ---------------------------------------------------------------------------
    def _relevance_for(self, target_name: str, deadline: float | None = None) -> Relevance:
        if self._names is None:
            names = self._cached_names()
            if names is None:
                skipped: list[tuple[str, str]] = []

                def skip(path: Path, why: str) -> None:
                    skipped.append((str(path), why))
                    self.project._warn_once(path, why)

                names = build_index(self.project.sources, self.cache, self.progress, skipped=skip,
                                    deadline=deadline, unparsed=self.project.oversized)
                if names.missing:  # cut by --max-seconds: rules nothing out, and is not kept
                    return Relevance(names, target_name)
                if self.cache.enabled:
                    self.cache.put("nameindex", self._names_key(), index_record(names, skipped))
            self._names = names
        if target_name not in self._relevance:
            self._relevance[target_name] = Relevance(self._names, target_name)
        return self._relevance[target_name]

    def _names_key(self) -> str:
        return key_of(__version__, "nameindex", self.roots, self._scope_digest())

    def _cached_names(self):
        """The whole tree's name index as one record, keyed by every scope file's content: one
        read where the per-file summaries were 2,860 (1.2 s of a transformers query's fixed
        cost); the files it skipped are warned about again."""
        if not self.cache.enabled:
            return None
        hit = self.cache.get("nameindex", self._names_key())
        if hit is None:
            return None
        for path, why in hit["skipped"]:
            self.project._warn_once(Path(path), why)
        return index_of_record(hit)

    def _leads_for(self, target_class: str | None, deadline: float | None = None) -> Leads | None:
        """The order of the blockers, or None when `deadline` (--max-seconds) ran out first (a
        cut reading is not kept: the next query reads it whole)."""
        if target_class not in self._leads:
            headers = self.project.class_headers(deadline)
            if headers is None:
                return None
            leads = Leads(self.project.texts(), headers, target_class, deadline)
            if leads.cut:
                return None
            self._leads[target_class] = leads
        return self._leads[target_class]

    def _new_query(self) -> None:
        """A query starts from fresh inference, so its answer is the one it gets alone (in a
        fresh process, from the command line), whatever ran on this Analysis before it. The
        inference's memos embed the order their entries were made in: a helper is inferred for
        MAX_RETURN_CONTEXTS argument sets, then widened; a return value is cut at the depth
        limit where it was first met. Sharing those across queries made one query's answer
        depend on the queries before it (tests/test_determinism.py). What is pure is kept: the parsed files and the
        index, the registries' tables, the name summaries, the blocker order, Jedi's answers
        (replayed under this query's own budget, `JediOracle.new_query`)."""
        if self._queried:
            binds = self.ev.binds
            self.ev.close()  # the memos refer to each other: freed now, not by the paused collector
            self.ev = Evaluator(self.project, {}, registries=self.registries)
            self.ev.binds = binds
            self.explorer = Explorer(self.project, self.ev)
            self.registries.undecided.clear()
        self._queried = True
        if self._oracle and self._oracle.broken:
            self._oracle = None  # interrupted by an earlier query's deadline: a new one when asked
        if self._oracle:
            self._oracle.new_query()

    def _oracle_once(self):
        if self._oracle is None:
            try:
                self._oracle = JediOracle(self.project)
            except ImportError:  # pragma: no cover - jedi is a declared dependency
                self._oracle = False
        return self._oracle or None

    @collector_paused
    def reach(self, entry: str, target: str, all_paths: bool = False, max_seconds: float | None = None,
              started: float | None = None, args: dict[str, str] | None = None) -> Proof:
        """`started` (time.perf_counter()) is when the caller began counting `max_seconds`
        (the command line: before the tree was listed); by default now. `args`: parameter name
        -> a type, read as an annotation in the entry's module (`--arg x=torch.Tensor`): what
        the entry is called with, the premise the answer holds under."""
        t0 = time.perf_counter()  # --max-seconds bounds all of it: names, exploration, summaries
        deadline = (started if started is not None else t0) + max_seconds if max_seconds else None
        args = dict(args or {})
        key = key_of(__version__, "reach", entry, target, all_paths, sorted(self.ev.binds.items()),
                     self._config_key(), self.roots, self._scope_digest(), sorted(args.items()))
        hit = self._cached("reach", key)
        if hit is not None:
            proof = Proof.from_json(hit["proof"])
            if "classes" in hit:
                self._shown_classes[_shown_names(proof)] = set(hit["classes"])
            return _with_seconds(proof, time.perf_counter() - t0)
        self._new_query()
        e = self._resolve(entry, "entry")
        t = self._resolve(target, "target")
        typed = entry_args.typed(self.ev, self.project.functions[e.func], args)
        inputs = ReachInputs(self.explorer, self._relevance_for, self.roots, self._oracle_once, self._leads_for)
        proof = reach(inputs, e, t, all_paths=all_paths, max_seconds=max_seconds, progress=self.progress,
                      deadline=deadline, entry_args=typed,
                      assumptions=tuple(f"{name}: {tp}" for name, tp in sorted(args.items())))
        proof = _with_seconds(proof, time.perf_counter() - t0)
        if not (max_seconds and any("--max-seconds" in u.why for u in proof.unresolved)):
            self._store("reach", key, {"proof": proof.to_json(), "classes": sorted(self.classes_named_in(proof))})
        return proof

    @collector_paused
    def callees(self, entry: str, depth: int | None = None) -> GraphView:
        self._new_query()
        e = self._resolve(entry, "entry")
        ex = self.explorer.run(start_context(self.project, e), lambda q: False, stop_at_first=False,
                               max_depth=depth, progress=self.progress)
        return graph_view(ex, self.roots, e.func, {e.func}, self.node)

    @collector_paused
    def export(self, jobs: int = 1) -> GraphView:
        """The call graph of the whole tree: every function and method of the scope as a node,
        every resolved edge (two passes: see whole_tree.py), resolved in `jobs` processes."""
        key = key_of(__version__, "export", sorted(self.ev.binds.items()), self._config_key(), self.roots,
                     self._scope_digest())
        hit = self._cached("export", key)
        if hit is not None:
            return GraphView.from_json(hit["graph"])
        view = whole_tree(self.project, self.ev.binds, self.roots, self.node, self.progress, jobs=jobs,
                          registries=self.registries)
        self._store("export", key, {"graph": view.to_json()})
        return view

    # -- cache validation ------------------------------------------------------------------
    def _cached(self, kind: str, key: str) -> dict | None:
        """A cached answer, if every file it read still has the content it read."""
        hit = self.cache.get(kind, key)
        return hit if hit is not None and self._still_valid(hit.get("read", {})) else None

    def _store(self, kind: str, key: str, payload: dict) -> None:
        self.cache.put(kind, key, {**payload, "read": dict(self.project.hashes)})

    def _scope_digest(self) -> str:
        """One hash of every scope file's content, computed once per Analysis (the tree does not
        change during a run; a gate with ten contracts reads it once)."""
        if not self.cache.enabled:
            return ""
        if self._digest is not None:
            return self._digest
        parts = []
        sources = self.project.sources
        for p in sources.files():
            digest = sources.digest(p)
            if digest is not None:
                parts.append((p.as_posix(), digest))
        for p in self.project.oversized:  # not read whole, but their names count (relevance.py)
            try:
                st = p.stat()
                parts.append((p.as_posix(), f"{st.st_size}:{st.st_mtime_ns}"))
            except OSError:
                continue
        self._digest = key_of(parts)
        return self._digest

    @staticmethod
    def _still_valid(read: dict[str, str]) -> bool:
        for path, digest in read.items():  # from the disk now, never from this run's reads
            if file_digest(Path(path)) != digest:
                return False
        return True


def _shown_names(proof: Proof) -> frozenset[str]:
    """The qualified names a proof's text shows: entry, target, every hop's ends, the callers
    of its blockers."""
    names = {proof.entry, proof.target, *(u.caller for u in proof.unresolved)}
    for path in (proof.path, *proof.all_paths):
        names.update(q for h in path for q in (h.caller, h.callee))
    return frozenset(names)


def _prefixes(qual: str) -> list[str]:
    parts = qual.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _with_seconds(proof: Proof, seconds: float) -> Proof:
    return replace(proof, stats=replace(proof.stats, seconds=round(seconds, 3)))


__all__ = ["Analysis", "Unresolved"]
