"""Render gate results as text, JSON or GitHub annotations; returns strings, never prints.

Text is for people reading a CI log: one line per contract, the reason under each failure, a
summary. JSON is for tools (it embeds each proof in the shared proof vocabulary). `github` is the
text plus `::error file=…,line=…::` workflow commands, so the call sites involved are marked in
the pull request's diff view.
"""
from __future__ import annotations

import json
import os
from typing import Iterable

from .. import __version__
from ..model import Verdict
from .results import ContractResult, Evidence, Status, locate

INDENT = "    "


def word(result: ContractResult, patch: bool) -> str:
    """Contracts say KEPT/BROKEN/UNKNOWN; patch mode says what it found about each function."""
    return result.verdict.value.upper() if patch else result.status.value.upper()


def render_text(results: list[ContractResult], patch: bool = False,
                notes: Iterable[str] = ()) -> str:
    lines: list[str] = []
    width = 12 if patch else 8
    for r in results:
        c = r.contract
        title = c.id if c.name == c.id else f"{c.id}  {c.name}"
        drifted = "  (drifted from the baseline)" if r.drift else ""
        lines.append(f"{word(r, patch):<{width}} {title}{drifted}")
        if r.status is not Status.KEPT or r.drift:
            lines.append(f"{INDENT}{r.summary}")
        if patch and r.verdict is Verdict.REACHED:
            lines.append(f"{INDENT}path:")
            lines += [f"{INDENT}  {h.site}  {r.label(h.caller)} -> {r.label(h.callee)} "
                      f"({h.rule})" for h in r.path]
        for section in r.sections:
            lines.append(f"{INDENT}{section.title}:")
            lines += [f"{INDENT}  {e.site}  {e.text}" for e in section.items]
        if r.drift:
            lines.append(f"{INDENT}path changed since the baseline:")
            lines += [f"{INDENT}  {d}" for d in r.drift.diff]
    lines += [f"note: {n}" for n in notes]
    lines.append(summary_line(results, patch))
    return "\n".join(lines)


def summary_line(results: list[ContractResult], patch: bool = False) -> str:
    if patch:
        counts = {v: sum(r.verdict is v for r in results) for v in Verdict}
        return (f"Touched functions: {len(results)} checked, {counts[Verdict.REACHED]} reached, "
                f"{counts[Verdict.UNREACHABLE]} unreachable, {counts[Verdict.UNKNOWN]} unknown.")
    counts = {s: sum(r.status is s for r in results) for s in Status}
    drifted = sum(1 for r in results if r.drift)
    return (f"Contracts: {len(results)} checked, {counts[Status.KEPT]} kept, "
            f"{counts[Status.BROKEN]} broken, {counts[Status.UNKNOWN]} unknown, {drifted} drifted.")


def render_json(results: list[ContractResult], code: int, patch: bool = False,
                notes: Iterable[str] = ()) -> str:
    counts = {s.value: sum(r.status is s for r in results) for s in Status}
    data = {
        "tool_version": __version__,
        "mode": "patch" if patch else "contracts",
        "exit_code": code,
        "summary": {"checked": len(results), **counts,
                    "drifted": sum(1 for r in results if r.drift)},
        "contracts": [_result_json(r) for r in results],
        "notes": list(notes),
    }
    return json.dumps(data, indent=2)


def _result_json(r: ContractResult) -> dict:
    c = r.contract
    return {
        "id": c.id, "name": c.name, "status": r.status.value, "verdict": r.verdict.value,
        "expect": c.expect, "entry": list(c.entries), "target": c.target, "via": c.via,
        "summary": r.summary,
        "path": [{"caller": h.caller, "callee": h.callee, "site": h.site, "expr": h.expr,
                  "rule": h.rule} for h in r.path],
        "sections": [{"title": s.title, "items": [{"site": e.site, "text": e.text}
                                                  for e in s.items]} for s in r.sections],
        "drift": {"diff": list(r.drift.diff)} if r.drift else None,
        "seconds": r.seconds,
        "proof": r.proof.to_json() if r.proof else None,
    }


def render_github(results: list[ContractResult], unknown: str, fail_on_drift: bool,
                  patch: bool = False, notes: Iterable[str] = (), cwd: str = ".") -> str:
    """The text report, then one workflow command per located fact of each failure."""
    out = [render_text(results, patch, notes)]
    for r in results:
        if r.status is Status.BROKEN:
            level = "error"
        elif r.status is Status.UNKNOWN:
            level = "error" if unknown == "fail" else "warning"
        elif r.drift:
            level = "error" if fail_on_drift else "warning"
        else:
            continue
        title = f"callgraph {word(r, patch).lower()}: {r.contract.id}"
        items = [e for s in r.sections for e in s.items]
        if r.drift and r.status is Status.KEPT:
            items = [Evidence(h.site, f"path drifted: {r.label(h.caller)} -> {r.label(h.callee)}"
                              f" ({h.rule})", locate(r.roots, h.site))
                     for h in r.path if (h.caller, h.callee, h.rule) not in
                     {(o.caller, o.callee, o.rule) for o in r.drift.old}]
        located = [e for e in items if e.file]
        for e in located:
            out.append(_command(level, title, f"{r.summary}: {e.text}",
                                os.path.relpath(e.file, cwd), e.line))
        if not located:
            out.append(_command(level, title, r.summary))
    return "\n".join(out)


def _command(level: str, title: str, message: str, file: str | None = None,
             line: int | None = None) -> str:
    props = [f"file={_prop(file)}", f"line={line}"] if file else []
    props.append(f"title={_prop(title)}")
    return f"::{level} {','.join(props)}::{_data(message)}"


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")
