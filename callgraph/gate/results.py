"""What the gate found, as plain data: one ContractResult per contract, rendered by report.py.

Kept apart from evaluation so that the three output formats, the JUnit writer and the baseline
all read one structure and never touch the analysis.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

from ..model import Hop, Proof, Verdict
from .config import Contract


class Status(str, Enum):
    KEPT = "kept"
    BROKEN = "broken"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Evidence:
    """One located fact behind a verdict: a call site or a definition, and what it shows."""

    site: str                  # "path:line[:col]" relative to the import root, as hops print it
    text: str
    file: str | None = None    # absolute file, for --format github; None where unknown

    @property
    def line(self) -> int:
        parts = self.site.split(":")
        for part in parts[1:]:
            if part.isdigit():
                return int(part)
        return 1


@dataclass(frozen=True)
class Section:
    """A titled group of evidence: "witness path that should not exist", "frontier", ..."""

    title: str
    items: tuple[Evidence, ...]


@dataclass(frozen=True)
class Drift:
    """A kept contract whose witness path differs from the baseline's."""

    old: tuple[Hop, ...]
    new: tuple[Hop, ...]
    diff: tuple[str, ...]      # "- caller -> callee [rule] (site)" / "+ ..." lines


@dataclass(frozen=True)
class ContractResult:
    contract: Contract
    status: Status
    verdict: Verdict
    summary: str                                  # one line: why this status
    path: tuple[Hop, ...] = ()
    sections: tuple[Section, ...] = ()
    proof: Proof | None = None
    labels: dict[str, str] = field(default_factory=dict, compare=False)
    drift: Drift | None = None
    seconds: float = 0.0
    roots: tuple[str, ...] = ()                   # the analysis's import roots, to locate sites

    def label(self, qualname: str) -> str:
        return self.labels.get(qualname, qualname)


def locate(roots: tuple[str, ...], site: str) -> str | None:
    """The absolute file of a site (`path:line:col`, path relative to an import root)."""
    rel = site.split(":", 1)[0]
    for root in roots:
        candidate = Path(root) / rel
        if candidate.is_file():
            return str(candidate)
    return None


def exit_code(results: list[ContractResult], unknown: str, fail_on_drift: bool) -> int:
    """0 all kept; 1 any broken (or drifted with fail_on_drift); 2 unknown, none broken."""
    if any(r.status is Status.BROKEN for r in results):
        return 1
    if fail_on_drift and any(r.drift for r in results):
        return 1
    if unknown == "fail" and any(r.status is Status.UNKNOWN for r in results):
        return 2
    return 0
