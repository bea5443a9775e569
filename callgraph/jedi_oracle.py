"""Jedi as the oracle where the index cannot decide (the only module that imports jedi).

Asked only about call sites that block a proof (unresolved, and able to lead to the target by
the name bound), most relevant first, within a time and query budget: Jedi costs ~26 ms per
inferred site and far more on a file's first touch, so it is never asked about a whole tree.
Jedi's own limits (recursion, execution counts) come back as empty answers, silently: an empty
answer leaves the site unresolved, never "no callee".

Jedi's on-disk parse cache (parso's pickles, shared by every process of the user) is made safe
to share first (_harden_parse_cache): parso writes a pickle in place and fails on a truncated
one, so two processes at once (a CI gate's parallel jobs, pytest-xdist workers) made Jedi
silently blind to a module, and the same question answered "reached" once and "unknown" the
next time.
"""
from __future__ import annotations

import ast
import contextlib
import os
import pickle
import signal
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from .index.project import Project

# Defaults for one reach query; both documented in docs/rules.md.
JEDI_BUDGET_SECONDS = 15.0
JEDI_MAX_QUERIES = 40


@dataclass(frozen=True)
class Answer:
    kind: str   # "function" | "class" | "instance" (in-tree names only: _map)
    qual: str   # in-tree qualified name (function, or class for class/instance)


class JediOracle:
    def __init__(self, project: Project, budget_s: float = JEDI_BUDGET_SECONDS, max_queries: int = JEDI_MAX_QUERIES):
        import jedi  # imported here: a reached proof never pays for it

        _harden_parse_cache()
        self._jedi = jedi
        self.p = project
        roots = [str(r.import_root) for r in project.roots]
        self.jproject = jedi.Project(path=roots[0], added_sys_path=roots, smart_sys_path=False,
                                     load_unsafe_extensions=False)
        self.budget_s = budget_s
        self.max_queries = max_queries
        self.spent = 0.0
        self.queries = 0
        self._scripts: dict[Path, object] = {}
        self._answers: dict = {}  # (path, line, col) -> (answers, seconds Jedi took)
        self._this_query: set = set()  # sites answered (or replayed) in the query in progress
        self.broken = False  # interrupted by a deadline: asked no more

    def new_query(self) -> None:
        """The budget is one query's (JEDI_BUDGET_SECONDS, JEDI_MAX_QUERIES), not the analysis's:
        a later query on a shared Analysis gets the whole of it again. A site answered in an
        earlier query is replayed from the memo but charged as if asked (one query, the seconds
        it took then), so a query gets the answers a fresh oracle would give it, in any order.
        A broken oracle stays broken (the Analysis makes a new one)."""
        self.spent = 0.0
        self.queries = 0
        self._this_query = set()

    def exhausted(self) -> bool:
        return self.broken or self.spent >= self.budget_s or self.queries >= self.max_queries

    def callees(self, path: Path, node: ast.Call, deadline: float | None = None) -> list[Answer]:
        """What Jedi says the callee is; nothing when it fails or when `deadline`
        (time.perf_counter(), a --max-seconds budget) comes first: one inference on a file's
        first touch can take seconds, so the deadline interrupts Jedi itself (where a timer
        signal can: the main thread), and an interrupted Jedi is not asked again."""
        key = (path, node.lineno, node.col_offset)
        if key in self._this_query:
            return self._answers[key][0]
        if self.exhausted() or (deadline is not None and time.perf_counter() >= deadline):
            return []
        known = self._answers.get(key)
        if known is not None:  # answered in an earlier query: charged as a fresh oracle would be
            self.queries += 1
            self.spent += known[1]
            self._this_query.add(key)
            return known[0]
        t0 = time.perf_counter()
        self.queries += 1
        try:
            names = self._infer(path, node, deadline)
        except _Interrupted:
            self.broken = True  # its caches may be half-built: this oracle is done
            self.spent += time.perf_counter() - t0
            return []
        except Exception:  # noqa: BLE001 - Jedi failing on odd code must not fail the query
            names = []
        out = []
        for n in names:
            ans = self._map(n)
            if ans is not None and ans not in out:
                out.append(ans)
        took = time.perf_counter() - t0
        self.spent += took
        self._answers[key] = (out, took)
        self._this_query.add(key)
        return out

    def _infer(self, path: Path, node: ast.Call, deadline: float | None = None):
        script = self._scripts.get(path)
        text = None
        if script is None:
            text = self.p.sources.text(path)
            if text is None:  # unreadable since it was parsed: nothing to ask Jedi about
                return []
        f = node.func
        line, col = f.end_lineno, max(f.end_col_offset - 1, 0)
        with _until(deadline):  # only Jedi's own work runs under the timer, none of ours
            if script is None:
                script = self._jedi.Script(text, path=str(path), project=self.jproject)
            names = script.infer(line, col)
        self._scripts[path] = script
        return names

    def _map(self, name) -> Answer | None:
        full = name.full_name
        if not full or name.type not in ("function", "class", "instance"):
            return None
        # Load the defining module so the name is indexed (Jedi may point at a file not yet read).
        parts = full.split(".")
        for i in range(len(parts) - 1, 0, -1):
            if self.p.locate(".".join(parts[:i])) is not None:
                self.p.module(".".join(parts[:i]))
                break
        if name.type == "function" and full in self.p.functions:
            return Answer("function", full)
        if name.type in ("class", "instance") and full in self.p.classes:
            return Answer(name.type, full)
        # Outside code (or a name not indexed) runs nothing Jedi could name in the tree: no
        # edge. An answer never settles the site either (semantics/oracle.py), so an outside
        # class read off an annotation (`-> nn.Module`) leaves it unresolved, as it must.
        return None


def _harden_parse_cache() -> None:
    """Make parso's disk cache (Jedi's: settings.cache_directory) safe for several processes:
    a pickle is written to a temporary file and renamed into place (a reader sees the old file
    or the new one, never half of one), and a pickle that cannot be read (truncated by a
    crash, or written by another version) is a cache miss, parsed again, instead of an error
    that Jedi turns into no answer. Applied once per process; parso's own behaviour is kept
    otherwise. Checked against parso 0.8 (tests/test_jedi_oracle.py fails if the names go)."""
    import parso.cache as pc

    if getattr(pc, "_callgraph_hardened", False):
        return
    load, hashed_path = pc._load_from_file_system, pc._get_hashed_path

    def load_or_miss(hashed_grammar, path, p_time, cache_path=None):
        try:
            return load(hashed_grammar, path, p_time, cache_path=cache_path)
        except Exception:  # noqa: BLE001 - any unreadable pickle is a miss: the file is parsed
            return None

    def save_whole(hashed_grammar, path, item, cache_path=None):
        target = hashed_path(hashed_grammar, path, cache_path=cache_path)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target), prefix=".tmp-", suffix=".pkl")
        try:
            with os.fdopen(fd, "wb") as f:
                pickle.dump(item, f, pickle.HIGHEST_PROTOCOL)
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    pc._load_from_file_system = load_or_miss
    pc._save_to_file_system = save_whole
    pc._callgraph_hardened = True


class _Interrupted(BaseException):
    """The deadline's timer went off inside Jedi (a BaseException: Jedi's own `except
    Exception` must not swallow it)."""


@contextlib.contextmanager
def _until(deadline: float | None):
    """Run the block with a timer that raises _Interrupted at `deadline`, where one can be set
    (the main thread of a platform with setitimer, and no one else's SIGALRM timer or handler
    in place: a library caller's own alarm is never taken over); else unbounded, as before."""
    if (deadline is None or not hasattr(signal, "setitimer")
            or threading.current_thread() is not threading.main_thread()
            or signal.getitimer(signal.ITIMER_REAL)[0] > 0
            or signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, signal.SIG_IGN)):
        yield
        return

    def ring(signum, frame):
        raise _Interrupted()

    left = deadline - time.perf_counter()
    if left <= 0:
        raise _Interrupted()
    previous = signal.signal(signal.SIGALRM, ring)
    try:
        signal.setitimer(signal.ITIMER_REAL, left)
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)

