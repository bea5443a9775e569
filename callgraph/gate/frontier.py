"""Why a contract failed, located: the witness path, or the frontier where the expected path stops.

For an expected path that does not exist, "no path" alone sends the user hunting. The frontier
says where to look: the call the baseline path made that is gone (when a baseline is given), the
target's own callers (none of them reached), the reached functions nearest the target, and the
unresolved calls that could still lead there. Each item carries a file:line so the report, the
JUnit failure and the GitHub annotation all point at code.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Iterable

from ..errors import CallgraphError
from ..model import Hop, Proof
from .results import Evidence, Section
from .results import locate as locate_in

MAX_CALLERS = 5        # target callers listed in a frontier
MAX_NEAREST = 3        # reached functions listed as nearest to the target
MAX_UNRESOLVED = 8     # unresolved call sites listed


def witness_section(an: Any, path: tuple[Hop, ...], labels: dict[str, str]) -> Section:
    items = tuple(_hop(an, h, labels) for h in path)
    return Section("witness path that should not exist", items)


def frontier_sections(an: Any, entry: str, target: str, proof: Proof, old: tuple[Hop, ...],
                      labels: dict[str, str], closure: bool = True) -> tuple[Section, ...]:
    sections: list[Section] = []
    reached_nodes, reached_edges = _closure(an, entry) if (closure or old) else (set(), set())
    if old and reached_nodes:
        stop = _baseline_stop(old, reached_nodes, reached_edges)
        if stop is not None:
            lab = label_from_sites(old, {**labels_for(an, (stop.caller, stop.callee)), **labels})
            text = (f"the baseline path stops here: {_l(lab, stop.caller)} is still reached but "
                    f"no longer calls {_l(lab, stop.callee)} ({stop.expr}, {stop.rule})")
            sections.append(Section("where the accepted path stops",
                                    (Evidence(stop.site, text, locate(an, stop.site)),)))
    target_at = _definition(an, target, f"{_l(labels, target)} (the target) is defined here")
    if target_at is not None:
        sections.append(Section("target", (target_at,)))
    if closure:
        callers = _callers(an, target, labels, reached_nodes) or \
            _references(an, target, reached_nodes)
        if callers:
            sections.append(Section("uses of the target, in functions the entry does not reach",
                                    callers))
        nearest = _nearest(an, target, reached_nodes - {entry})
        if nearest:
            sections.append(Section("reached functions nearest the target", nearest))
    if proof.unresolved and not closure:
        items = tuple(Evidence(u.site, f"{u.expr}: {u.why}", locate(an, u.site))
                      for u in proof.unresolved[:MAX_UNRESOLVED])
        sections.append(Section("unresolved calls that could reach the target", items))
    return tuple(sections)


def locate(an: Any, site: str) -> str | None:
    return locate_in(tuple(getattr(an, "roots", ()) or ()), site)


def labels_for(an: Any, qualnames: Iterable[str]) -> dict[str, str]:
    """`pkg.mod.Class.method` -> `Class.method`, using the defining file to find the module."""
    out: dict[str, str] = {}
    for q in qualnames:
        if q in out:
            continue
        out[q] = q
        try:
            node = an.node(q)
        except (CallgraphError, KeyError, AttributeError):
            continue
        if not node.file:
            continue
        module = _module_of(node.file)
        if q.startswith(module + ".") and len(q) > len(module) + 1:
            out[q] = q[len(module) + 1:]
    return out


def label_from_sites(path: tuple[Hop, ...], labels: dict[str, str]) -> dict[str, str]:
    """Fill labels the index could not give: a hop's site file is its caller's module."""
    out = dict(labels)
    for h in path:
        if out.get(h.caller, h.caller) == h.caller:
            module = _module_of(h.site_path)
            if h.caller.startswith(module + "."):
                out[h.caller] = h.caller[len(module) + 1:]
    return out


def _module_of(file: str) -> str:
    return Path(file).with_suffix("").as_posix().replace("/", ".").removesuffix(".__init__")


def _hop(an: Any, h: Hop, labels: dict[str, str]) -> Evidence:
    text = f"{_l(labels, h.caller)} -> {_l(labels, h.callee)}  ({h.expr}, {h.rule})"
    return Evidence(h.site, text, locate(an, h.site))


def _l(labels: dict[str, str], q: str) -> str:
    return labels.get(q, q)


def _closure(an: Any, entry: str) -> tuple[set[str], set[tuple[str, str]]]:
    """Functions and edges reached from entry; empty when the engine cannot say (degrade)."""
    try:
        view = an.callees(entry, depth=None)
    except (CallgraphError, AttributeError, NotImplementedError):
        return set(), set()
    nodes = {n.name for n in view.nodes} | {entry}
    return nodes, {(e.caller, e.callee) for e in view.edges}


def _baseline_stop(old: tuple[Hop, ...], nodes: set[str], edges: set[tuple[str, str]]):
    """The first accepted hop that is gone while its caller is still reached."""
    for hop in old:
        if (hop.caller, hop.callee) in edges:
            continue
        return hop if hop.caller in nodes else None
    return None


def _definition(an: Any, qualname: str, text: str) -> Evidence | None:
    try:
        node = an.node(qualname)
    except (CallgraphError, KeyError, AttributeError):
        return None
    if not node.file:
        return None
    site = f"{node.file}:{node.line}"
    return Evidence(site, text, locate(an, site))


def _callers(an: Any, target: str, labels: dict[str, str], reached: set[str]):
    callers = getattr(an, "callers", None)
    if callers is None:
        return ()
    try:
        view = callers(target, depth=1)
    except (CallgraphError, TypeError, NotImplementedError):
        return ()
    items = []
    for e in view.edges:
        if e.callee != target or e.caller in reached:
            continue
        name = labels_for(an, [e.caller])[e.caller]
        items.append(Evidence(e.site, f"{name} calls the target here ({e.expr}, {e.rule})",
                              locate(an, e.site)))
    return tuple(items[:MAX_CALLERS])


def _references(an: Any, target: str, reached: set[str]) -> tuple[Evidence, ...]:
    """Where the tree names the target (its class, or the function), outside the reached closure.

    A stand-in for the engine's callers: a textual scan of the files that mention the name, each
    line mapped to its enclosing function. It finds the constructor call or the call that the
    entry would have to reach (`self.model = Qwen2Model(...)` in `Qwen2ForCausalLM.__init__`).
    """
    parts = target.split(".")
    name = parts[-2] if len(parts) > 1 and parts[-2][:1].isupper() else parts[-1]
    pattern = re.compile(rf"\b{re.escape(name)}\b")
    items: list[Evidence] = []
    for root in getattr(an, "roots", ()) or ():
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
            for file in sorted(f for f in files if f.endswith(".py")):
                path = Path(folder, file)
                text = an.source_text(path)
                if text is None or name not in text:
                    continue
                rel = path.relative_to(root).as_posix()
                for number, line in enumerate(text.splitlines(), 1):
                    if not pattern.search(line) or line.lstrip().startswith(("import ", "from ")):
                        continue
                    fn = an.function_at(rel, number)
                    if fn is None or fn in reached or fn == target:
                        continue
                    label = labels_for(an, [fn])[fn]
                    items.append(Evidence(f"{rel}:{number}",
                                          f"{label} uses {name} here ({line.strip()[:60]})",
                                          str(path)))
                    if len(items) >= MAX_CALLERS:
                        return tuple(items)
    return tuple(items)


def _nearest(an: Any, target: str, reached: set[str]):
    """Reached functions of the target's own module, longest shared dotted prefix first.

    Functions elsewhere in the package say nothing about where the path stops, so they are left out.
    """
    try:
        module = _module_of(an.node(target).file)
    except (CallgraphError, KeyError, AttributeError, ValueError):
        return ()
    tparts = target.split(".")

    def shared(q: str) -> int:
        n = 0
        for a, b in zip(q.split("."), tparts):
            if a != b:
                break
            n += 1
        return n

    ranked = sorted((q for q in reached if q.startswith(module + ".")),
                    key=lambda q: (-shared(q), q))
    items = []
    for q in ranked[:MAX_NEAREST]:
        ev = _definition(an, q, f"{labels_for(an, [q])[q]} is reached")
        if ev is not None:
            items.append(ev)
    return tuple(items)
