"""The accepted witness paths, and drift against them.

An upstream refactor rarely breaks a path in one step: first the path moves (a new helper in
between, another attribute, another rule), and only a later release drops it. A baseline records
the paths of the last accepted run so a kept contract whose path moved is reported as *drifted*.
Hops are compared by (caller, callee, rule): line numbers shift with every unrelated edit, so a
line move alone is not drift; a different function or a different resolution rule is.
"""
from __future__ import annotations

import difflib
import json
from dataclasses import asdict, replace
from pathlib import Path

from .. import __version__
from ..errors import ConfigError
from ..model import Hop
from .results import ContractResult, Drift, Status

FORMAT = "callgraph-baseline/1"


def load_baseline(path: Path, missing_ok: bool = False) -> dict[str, tuple[Hop, ...]]:
    """{contract id: accepted path}; a missing file is an error unless we are about to write it."""
    if not path.is_file():
        if missing_ok:
            return {}
        raise ConfigError(f"{path}: baseline not found (write one with --update-baseline)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != FORMAT:
            raise ValueError(f"format is {data.get('format')!r}, expected {FORMAT!r}")
        return {cid: tuple(Hop(**h) for h in entry.get("path", ()))
                for cid, entry in data["contracts"].items()}
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ConfigError(f"{path}: not a callgraph baseline: {exc}") from None


def write_baseline(path: Path, results: list[ContractResult],
                   keep: dict[str, tuple[Hop, ...]] | None = None) -> None:
    """Record every checked contract; contracts not checked this run keep their old entry."""
    contracts = {cid: {"path": [asdict(h) for h in hops]} for cid, hops in (keep or {}).items()}
    for r in results:
        contracts[r.contract.id] = {
            "entry": list(r.contract.entries), "target": r.contract.target,
            "via": r.contract.via, "expect": r.contract.expect, "verdict": r.verdict.value,
            "path": [asdict(h) for h in r.path],
        }
    data = {"format": FORMAT, "tool_version": __version__,
            "contracts": dict(sorted(contracts.items()))}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def with_drift(results: list[ContractResult],
               baseline: dict[str, tuple[Hop, ...]]) -> list[ContractResult]:
    """Attach a Drift to each kept contract whose path differs from its accepted one."""
    out = []
    for r in results:
        old = baseline.get(r.contract.id)
        if r.status is Status.KEPT and old and r.path and _keys(old) != _keys(r.path):
            r = replace(r, summary=f"{r.summary}, but the path moved since the baseline",
                        drift=Drift(old=old, new=r.path, diff=hop_diff(old, r.path, r.labels)))
        out.append(r)
    return out


def hop_diff(old: tuple[Hop, ...], new: tuple[Hop, ...], labels: dict[str, str]) -> tuple[str, ...]:
    """`  ` kept, `- ` gone, `+ ` new hops, each with its call site."""
    def text(h: Hop) -> str:
        return (f"{labels.get(h.caller, _short(h.caller))} -> "
                f"{labels.get(h.callee, _short(h.callee))} [{h.rule}] at {h.site}")

    a, b = _keys(old), _keys(new)
    lines: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal":
            lines += [f"  {text(h)}" for h in new[j1:j2]]
            continue
        lines += [f"- {text(h)}" for h in old[i1:i2]]
        lines += [f"+ {text(h)}" for h in new[j1:j2]]
    return tuple(lines)


def _keys(path: tuple[Hop, ...]) -> list[tuple[str, str, str]]:
    return [(h.caller, h.callee, h.rule) for h in path]


def _short(qualname: str) -> str:
    """A label for a name the current run did not label (a hop that is gone)."""
    parts = qualname.split(".")
    for i, part in enumerate(parts):
        if part[:1].isupper():
            return ".".join(parts[i:])
    return parts[-1]
