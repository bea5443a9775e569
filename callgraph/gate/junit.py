"""JUnit XML: one test case per contract, so every CI system shows which contract failed and why.

Broken contracts are failures; unknown ones are failures under `--unknown fail` and skipped
cases under `warn` (visible, not red); a drifted path is a failure only with --fail-on-drift and is
otherwise written to the case's system-out. The failure body is the same reason the text report
prints, file:line included.
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from .report import INDENT, word
from .results import ContractResult, Status

SUITE = "callgraph check"


def write_junit(path: Path, results: list[ContractResult], unknown: str, fail_on_drift: bool,
                patch: bool = False) -> None:
    suites = ET.Element("testsuites")
    suite = ET.SubElement(suites, "testsuite", name=SUITE, tests=str(len(results)))
    failures = skipped = 0
    total = 0.0
    for r in results:
        case = ET.SubElement(suite, "testcase", classname="callgraph.patch" if patch else
                             "callgraph.contracts", name=_name(r), time=f"{r.seconds:.3f}")
        total += r.seconds
        body = _reason(r)
        failed_drift = r.drift is not None and fail_on_drift
        if r.status is Status.BROKEN or (r.status is Status.UNKNOWN and unknown == "fail") \
                or failed_drift:
            failures += 1
            kind = "drifted" if r.status is Status.KEPT else word(r, patch).lower()
            failure = ET.SubElement(case, "failure", message=f"{kind}: {r.summary}", type=kind)
            failure.text = body
        elif r.status is Status.UNKNOWN:
            skipped += 1
            ET.SubElement(case, "skipped", message=f"unknown: {r.summary}").text = body
        elif body:
            ET.SubElement(case, "system-out").text = body
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    suite.set("skipped", str(skipped))
    suite.set("time", f"{total:.3f}")
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)


def _name(r: ContractResult) -> str:
    c = r.contract
    return c.id if c.name == c.id else f"{c.id}: {c.name}"


def _reason(r: ContractResult) -> str:
    lines = [r.summary] if r.status is not Status.KEPT or r.drift else []
    for section in r.sections:
        lines.append(f"{section.title}:")
        lines += [f"{INDENT}{e.site}  {e.text}" for e in section.items]
    if r.drift:
        lines.append("path changed since the baseline:")
        lines += [f"{INDENT}{d}" for d in r.drift.diff]
    return "\n".join(lines)
