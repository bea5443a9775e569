"""The human-readable proof: the verdict, one line per hop, then the stats."""
from __future__ import annotations

from ..model import Proof, Verdict


def short(qual: str, known_classes: set[str]) -> str:
    """`pkg.mod.Class.method` -> `Class.method`; `pkg.mod.func` -> `func`."""
    parts = qual.split(".")
    for i in range(len(parts) - 1, 0, -1):
        if ".".join(parts[:i]) in known_classes:
            return ".".join(parts[i - 1:])
    return parts[-1]


def proof_text(proof: Proof, known_classes: set[str]) -> str:
    s = lambda q: short(q, known_classes)  # noqa: E731
    lines = []
    if proof.verdict is Verdict.REACHED:
        lines.append(f"reached: {s(proof.entry)} → {s(proof.target)} in {len(proof.path)} hop(s)")
        lines.extend(_hops(proof.path, s))
        if proof.attribute_chain:
            lines.append(f"attribute chain: self.{'.'.join(proof.attribute_chain)}")
        for i, path in enumerate(proof.all_paths[1:], start=2) if len(proof.all_paths) > 1 else ():
            lines.append(f"path {i}:")
            lines.extend(_hops(path, s))
    elif proof.verdict is Verdict.UNREACHABLE:
        lines.append(f"unreachable: {s(proof.entry)} never calls {s(proof.target)}; the explored closure "
                     f"has no unresolved call that could lead there")
    else:
        lines.append(f"unknown: {s(proof.entry)} → {s(proof.target)} not found, and "
                     f"{len(proof.unresolved)} unresolved call site(s) could lead there:")
        for c in proof.conditions:
            keys = ", ".join(c.reaching) + ("" if c.complete else ", ... (the check was cut short)")
            lines.append(f"  reached if {c.key} is one of: {keys} ({c.factory} at {c.site}); pass --model-config "
                         f"or --bind" if c.reaching else
                         f"  {c.key} decides {c.factory} at {c.site}: no key found to reach it"
                         + ("" if c.complete else " (the check was cut short)"))
        for u in proof.unresolved:  # with the column: two calls on one line are two sites
            lines.append(f"  {u.site}   {u.expr}   in {s(u.caller)}: {u.why}")
    if proof.assumptions:  # the premise the answer holds under (--arg)
        lines.append(f"assuming the entry's {'; '.join(proof.assumptions)} (--arg)")
    st = proof.stats
    lines.append(f"stats: {st.functions_visited} functions visited, {st.call_sites} call sites resolved, "
                 f"{st.seconds:.2f} s")
    return "\n".join(lines)


def _hops(path, s) -> list[str]:
    rows = []
    for h in path:
        via = f" via {', '.join(h.via)}" if getattr(h, "via", ()) else ""
        rows.append((f"{s(h.caller)} → {s(h.callee)}", h.site.rsplit(":", 1)[0], f"[{h.rule}{via}]"))
    width = max((len(r[0]) for r in rows), default=0)
    return [f"  {a.ljust(width)}   {b}   {c}" for a, b, c in rows]
