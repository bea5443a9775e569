"""The words a picture shows: short node names, edge evidence, cluster titles.

Kept apart from the drawing so the text a reviewer reads can be tested (and reused by other
outputs) without Graphviz. Full qualified names stay available as tooltips; labels stay short
because a picture with `sglang.srt.models.deepseek_v2.DeepseekV2Model.forward` on every box is
unreadable at any zoom.
"""
from __future__ import annotations

import textwrap

from ..model import Hop, Unresolved

# Longest call expression drawn on an unresolved node; the full text is in the tooltip.
MAX_EXPR_CHARS = 48
# The reason under it is wrapped to this width, on at most this many lines.
WHY_WIDTH, WHY_LINES = 44, 3


def module_of(file: str) -> str:
    """`a/b/mod.py` -> `a.b.mod`; a package's `__init__.py` names the package itself."""
    stem = file[:-3] if file.endswith(".py") else file
    parts = [p for p in stem.replace("\\", "/").split("/") if p]
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def node_label(qualname: str, file: str | None) -> str:
    """`Class.method` for methods, the bare name for functions.

    With the function's file (relative to its import root) the module prefix is exact; without
    it, a capitalised next-to-last part is taken for the class (PEP 8 naming), which is right for
    the code this tool reads.
    """
    if file:
        module = module_of(file)
        if module and qualname.startswith(module + "."):
            return qualname[len(module) + 1:]
    parts = qualname.split(".")
    if len(parts) >= 2 and parts[-2][:1].isupper():
        return ".".join(parts[-2:])
    return parts[-1]


def edge_label(hop: Hop) -> str:
    """Line of the call site (its file is the caller's cluster) and the rule that resolved it.

    Rules that only typed the receiver on the way (`via`: param-binding, mro, ...) go on a third
    line: they are often the interesting part of a hop (how `language_model` got its type).
    """
    via = rules_via(hop)
    return f"line {_line(hop.site)}\n{hop.rule}" + (f"\nvia {', '.join(via)}" if via else "")


def rules_via(hop: Hop) -> tuple[str, ...]:
    return tuple(getattr(hop, "via", ()) or ())


def unresolved_label(u: Unresolved) -> str:
    """The call expression as written, and why it stayed unresolved."""
    why = textwrap.wrap(" ".join(u.why.split()), WHY_WIDTH) or [""]
    if len(why) > WHY_LINES:
        why = why[:WHY_LINES - 1] + [clip(" ".join(why[WHY_LINES - 1:]), WHY_WIDTH)]
    return "\n".join([clip(u.expr, MAX_EXPR_CHARS), *why])


def unresolved_edge_label(u: Unresolved) -> str:
    return f"line {_line(u.site)}\nunresolved"


def clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _line(site: str) -> str:
    parts = site.rsplit(":", 2)
    return parts[1] if len(parts) == 3 else "?"
