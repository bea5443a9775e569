"""docs/rules.md's table of rules, generated from the registry (`REGISTRY`).

    python -m callgraph.semantics.table            # print the table
    python -m callgraph.semantics.table docs/rules.md   # rewrite it in place, between the markers

tests/test_rules.py fails when the table in docs/rules.md is not this one, so a rule added to
the registry is documented by its own docstring, in its place in the precedence.
"""
from __future__ import annotations

import sys
from pathlib import Path

from . import REGISTRY

BEGIN = "<!-- rules table: generated from callgraph.semantics.REGISTRY (python -m callgraph.semantics.table docs/rules.md) -->"
END = "<!-- end of the generated rules table -->"


def markdown() -> str:
    """One row per rule an edge may record, most specific first."""
    rows = ["| rule | runtime behaviour modelled | where |", "|---|---|---|"]
    for rule in REGISTRY:
        if rule.on_edges:
            where = ", ".join(f"`{w}`" for w in rule.where)
            rows.append(f"| `{rule.name}` | {rule.behaviour()} | {where} |")
    return "\n".join(rows) + "\n"


def in_document(text: str) -> str | None:
    """The table between the markers of `text`, or None without them."""
    if BEGIN not in text or END not in text:
        return None
    return text.split(BEGIN, 1)[1].split(END, 1)[0].strip("\n") + "\n"


def rewrite(text: str) -> str:
    head, rest = text.split(BEGIN, 1)
    return f"{head}{BEGIN}\n{markdown()}{END}{rest.split(END, 1)[1]}"


if __name__ == "__main__":  # pragma: no cover - a maintainer's tool
    if len(sys.argv) > 1:
        path = Path(sys.argv[1])
        path.write_text(rewrite(path.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        sys.stdout.write(markdown())
