"""The export's sweeps spread over forked worker processes, one chunk of functions each.

The project is parsed once, in this process; `fork` hands each worker the parsed trees and the
evaluator as they are (copy-on-write: a worker copies only the pages it writes, which in
CPython includes the reference counts of the nodes it reads). Each worker sweeps a contiguous
chunk of the functions, in load order, so a chunk is mostly whole files and the inference a
file needs stays in one worker. A worker sends back what the sweep adds (edges, unresolved
sites, callee contexts: plain data, no syntax trees) and exits; this process sweeps the first
chunk itself meanwhile, then merges. A worker that fails leaves its chunk to this process.

Workers share no memo: a helper inferred in two chunks is inferred twice. Memos make results
depend a little on the order of work (docs/export.md), so `--jobs 2` may differ from
`--jobs 1` in a few edges where inference hit a depth limit.
"""
from __future__ import annotations

import ast
import os
import pickle
import signal
import sys
import traceback
from typing import Callable, Iterator

from .explore import EdgeTable, Exploration, Explorer, UnresolvedSite
from .values import Ctx

# Below this many functions a sweep is not worth a fork.
MIN_FORKED_SWEEP = 2_000


def usable_jobs(jobs: int) -> int:
    """`jobs` where fork exists (Linux, macOS), else 1."""
    return max(1, jobs) if hasattr(os, "fork") else 1


def sweep(explorer: Explorer, ex: Exploration, states: list[Ctx], jobs: int,
          progress: Callable[[str], None] | None = None) -> Iterator[Ctx]:
    """Explorer.sweep over `states`, in `jobs` processes: edges and unresolved sites are added
    to `ex`, callee contexts are yielded (this process's chunk first, then each worker's)."""
    jobs = usable_jobs(jobs)
    if jobs == 1 or len(states) < MIN_FORKED_SWEEP:
        yield from explorer.sweep(ex, states, progress)
        return
    size = -(-len(states) // jobs)
    chunks = [states[i:i + size] for i in range(0, len(states), size)]
    sys.stdout.flush()  # a worker must not inherit (and later write) what is still buffered
    sys.stderr.flush()
    children = [_fork(explorer, chunk) for chunk in chunks[1:]]
    waiting = dict(children)
    try:
        yield from explorer.sweep(ex, chunks[0], progress)
        for (pid, reader), chunk in zip(children, chunks[1:]):
            result = _receive(pid, reader)
            del waiting[pid]
            if isinstance(result, str):
                if progress:
                    progress(f"a worker failed ({result}); resolving its {len(chunk)} functions here")
                yield from explorer.sweep(ex, chunk, progress)
                continue
            yield from _merge(explorer, ex, result)
    finally:  # interrupted, or failed here: leave no worker running
        for pid, reader in waiting.items():
            _stop(pid, reader)


def _fork(explorer: Explorer, chunk: list[Ctx]) -> tuple[int, int]:
    reader, writer = os.pipe()
    pid = os.fork()
    if pid:
        os.close(writer)
        return pid, reader
    # the worker: sweep, send, leave without running any of the parent's teardown
    os.close(reader)
    status = 0
    try:
        project = explorer.p
        had_modules, had_functions = set(project.modules), set(project.functions)
        mine = Exploration(graph=EdgeTable())
        callees = list(explorer.sweep(mine, chunk))
        payload = ("ok", {
            # what the sweep loaded (modules its imports reach) and met (lambdas): the parent
            # needs them to resolve the callees and to place the nodes
            "modules": [name for name, mod in project.modules.items() if mod is not None and name not in had_modules],
            "lambdas": [(qual, fn.module.name, fn.node.lineno, fn.node.col_offset, fn.parent.qual if fn.parent else None)
                        for qual, fn in project.functions.items()
                        if qual not in had_functions and isinstance(fn.node, ast.Lambda)],
            "edges": [(u, v, k, d["hop"]) for u, v, k, d in mine.graph.edges(keys=True, data=True)],
            "nodes": list(mine.graph.nodes),
            "unresolved": [site.unresolved for site in mine.unresolved],
            "kept": list(mine.kept_rows),
            "functions": mine.functions,
            "call_sites": mine.call_sites,
            "callees": callees,
        })
    except BaseException:  # anything: the parent redoes the chunk
        payload = ("error", traceback.format_exc(limit=3).strip().splitlines()[-1])
        status = 1
    try:
        with os.fdopen(writer, "wb") as out:
            pickle.dump(payload, out, protocol=pickle.HIGHEST_PROTOCOL)
    except BaseException:
        status = 1
    os._exit(status)  # nothing of the parent's (buffers, atexit, teardown) runs twice


def _stop(pid: int, reader: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        os.close(reader)
        os.waitpid(pid, 0)
    except (OSError, ChildProcessError):
        pass


def _receive(pid: int, reader: int) -> dict | str:
    """The worker's result, or why there is none."""
    try:
        with os.fdopen(reader, "rb") as inp:
            kind, body = pickle.load(inp)
    except Exception as exc:  # EOF (it died), a broken or partial pickle: redo the chunk here
        kind, body = "error", f"no result: {exc.__class__.__name__}"
    _, status = os.waitpid(pid, 0)
    if kind == "ok":
        return body
    code = os.waitstatus_to_exitcode(status)
    return f"{body}; exit status {code}"


def _merge(explorer: Explorer, ex: Exploration, result: dict) -> Iterator[Ctx]:
    project = explorer.p
    for name in result["modules"]:
        project.module(name)
    for qual, module, line, col, enclosing in result["lambdas"]:
        if qual not in project.functions:
            _register_lambda(project, module, line, col, enclosing)
    graph = ex.graph
    graph.add_nodes_from(result["nodes"])
    for u, v, key, hop in result["edges"]:
        if not graph.has_edge(u, v, key=key):
            graph.add_edge(u, v, key=key, hop=hop)
    ex.unresolved.extend(UnresolvedSite(u, None, None, 0, None) for u in result["unresolved"])
    ex.kept_rows.update(result["kept"])
    ex.functions |= result["functions"]
    ex.call_sites += result["call_sites"]
    yield from result["callees"]


def _register_lambda(project, module: str, line: int, col: int, enclosing: str | None) -> None:
    mod = project.module(module)
    outer = project.functions.get(enclosing) if enclosing else None
    root = outer.node if outer is not None else (mod.tree if mod is not None else None)
    if root is None:
        return
    for node in ast.walk(root):
        if isinstance(node, ast.Lambda) and node.lineno == line and node.col_offset == col:
            project.lambda_info(node, outer, mod)
            return
