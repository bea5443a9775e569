"""A call graph (`GraphView`) as a file: json, pycg, graphml, dot; and read back.

Output formats live apart from the analysis (PyCG's best habit): everything here is a pure
function of a `GraphView`, so `export`, `callers --json` and the benchmark share one writer and
the round-trip tests need no engine. Writing is atomic (a temp file beside the output, renamed
over it), so a killed export never leaves a half-written graph where a consumer reads it.

`dot` is written as plain DOT text here, not through `callgraph.render`: a whole-tree export has
tens of thousands of nodes, and the renderer's scene (cap, clusters, entry/target roles) is made
for a readable neighbourhood, not a complete graph. Use `callgraph graph` for a picture.
"""
from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any, Iterable, Iterator

import networkx as nx

from ..errors import CallgraphError
from ..model import GraphView, Hop, Node, Unresolved
from .pycg import pycg_adjacency

FORMATS = ("json", "pycg", "graphml", "dot")


class FormatError(CallgraphError):
    """An unknown output format, or a graph file that cannot be read back."""


#: The format a file's suffix names; a picture suffix is refused (export writes no pictures).
SUFFIXES = {".json": "json", ".graphml": "graphml", ".dot": "dot", ".gv": "dot"}
PICTURES = (".svg", ".png", ".pdf", ".jpg", ".jpeg")


def format_for(out: Path, fmt: str | None) -> str:
    """The export format: `--format` when given, else the one `out`'s suffix names. A picture
    suffix is refused either way (the file would hold text, not a picture), and so is a suffix
    that names no format when `--format` is not given."""
    suffix = out.suffix.lower()
    if suffix in PICTURES:
        raise FormatError(f"{out}: export writes json, pycg, graphml or dot, not a {suffix[1:]} "
                          f"picture; draw one with `callgraph graph ENTRY -o {out.name}`, or "
                          f"write {out.with_suffix('.dot').name}")
    if fmt is not None:
        return fmt
    if suffix not in SUFFIXES:
        raise FormatError(f"{out}: cannot tell the format from the suffix {suffix or '(none)'!r}; "
                          f"name the file .json, .graphml or .dot, or pass --format "
                          f"{'|'.join(FORMATS)}")
    return SUFFIXES[suffix]


# -- json: the graph vocabulary (docs/vocabulary.md) ---------------------------------------
def to_json_text(view: GraphView) -> str:
    return json_lines(view.to_json())


def json_lines(data: dict[str, Any]) -> str:
    return "".join(json_chunks(data))


def json_chunks(data: dict[str, Any]) -> Iterator[str]:
    """JSON with one top-level key per line, and a list of records one record per line:
    readable and diffable, and each line goes through json's C encoder (`indent=` sends all
    190k edges of a whole-tree export through the pure-Python one, ten times slower). Yielded
    line by line, so a big graph is written without its whole text in memory."""
    if not data:
        yield "{}\n"
        return
    for i, (key, value) in enumerate(data.items()):
        head = "{\n" if i == 0 else ",\n"
        if isinstance(value, list) and value and isinstance(value[0], dict):
            yield f"{head}  {json.dumps(key)}: [\n"
            for j, record in enumerate(value):
                yield ("    " if j == 0 else ",\n    ") + json.dumps(record)
            yield "\n  ]"
        else:
            yield f"{head}  {json.dumps(key)}: {json.dumps(value)}"
    yield "\n}\n"


def view_from_json(data: dict[str, Any]) -> GraphView:
    """The inverse of `GraphView.to_json()`."""
    try:
        return GraphView(
            root=tuple(data.get("root", ())), entry=data.get("entry", ""),
            tool_version=data.get("tool_version", ""),
            nodes=tuple(Node(n["name"], n.get("file", ""), int(n.get("line", 0))) for n in data["nodes"]),
            edges=tuple(Hop(e["caller"], e["callee"], e.get("site", ""), e.get("expr", ""),
                            e.get("rule", ""), tuple(e.get("via", ()))) for e in data["edges"]),
            unresolved=tuple(Unresolved(u.get("caller", ""), u["site"], u.get("expr", ""), u.get("why", ""))
                             for u in data.get("unresolved", ())),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise FormatError(f"not a callgraph JSON graph: missing or bad {exc}") from None


# -- graphml: networkx, edge attributes site/rule/expr -------------------------------------
def to_networkx(view: GraphView):
    """A MultiDiGraph: nodes carry file/line, edges site/rule/expr/via (via comma-joined), the
    graph root/entry/tool_version and the unresolved sites (as JSON text: GraphML has no lists)."""
    g = nx.MultiDiGraph(root=os.pathsep.join(view.root), entry=view.entry, tool_version=view.tool_version,
                        unresolved=json.dumps([asdict(u) for u in view.unresolved]))
    for n in view.nodes:
        g.add_node(n.name, file=n.file, line=n.line)
    for e in view.edges:
        for end in (e.caller, e.callee):
            if end not in g:
                g.add_node(end, file="", line=0)
        g.add_edge(e.caller, e.callee, site=e.site, rule=e.rule, expr=e.expr, via=",".join(e.via))
    return g


def view_from_networkx(g) -> GraphView:
    root = g.graph.get("root", "")
    nodes = tuple(Node(str(n), str(d.get("file", "")), int(d.get("line", 0))) for n, d in g.nodes(data=True))
    edges = tuple(Hop(str(a), str(b), str(d.get("site", "")), str(d.get("expr", "")), str(d.get("rule", "")),
                      tuple(v for v in str(d.get("via", "")).split(",") if v))
                  for a, b, d in g.edges(data=True))
    unresolved = tuple(Unresolved(**u) for u in json.loads(g.graph.get("unresolved") or "[]"))
    return GraphView(tuple(root.split(os.pathsep)) if root else (), str(g.graph.get("entry", "")),
                     str(g.graph.get("tool_version", "")), nodes, edges, unresolved)


def to_graphml_text(view: GraphView) -> str:
    return "\n".join(nx.generate_graphml(to_networkx(view))) + "\n"


def read_graphml(path: str | Path) -> GraphView:
    return view_from_networkx(nx.read_graphml(str(path), force_multigraph=True))


# -- dot: plain DOT text ---------------------------------------------------------------------
def _q(text: str) -> str:
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot_text(view: GraphView) -> str:
    """Every node (tooltip file:line) and every edge (label: rule, tooltip site and expression)."""
    lines = ["digraph callgraph {", "  rankdir=LR;", "  node [shape=box, fontsize=10];"]
    for n in view.nodes:
        lines.append(f"  {_q(n.name)} [file={_q(n.file)}, line={_q(n.line)}, tooltip={_q(f'{n.file}:{n.line}')}];")
    for e in view.edges:
        lines.append(f"  {_q(e.caller)} -> {_q(e.callee)} [label={_q(e.rule)}, site={_q(e.site)}, "
                     f"expr={_q(e.expr)}, rule={_q(e.rule)}, via={_q(','.join(e.via))}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


# -- one entry point ---------------------------------------------------------------------------
def render(view: GraphView, fmt: str) -> str:
    """The text of `view` in format `fmt` (one of FORMATS)."""
    if fmt == "json":
        return to_json_text(view)
    if fmt == "pycg":
        return json_lines(pycg_adjacency(view))
    if fmt == "graphml":
        return to_graphml_text(view)
    if fmt == "dot":
        return to_dot_text(view)
    raise FormatError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")


def write_atomic(out: str | Path, text: str | Iterable[str]) -> Path:
    """Write beside `out`, then rename over it: readers see the old file or the whole new one.
    `text`: the whole text, or its pieces in order."""
    out = Path(out)
    if not out.parent.is_dir():
        raise FormatError(f"cannot write {out}: folder {out.parent} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            if isinstance(text, str):
                fh.write(text)
            else:
                fh.writelines(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, out)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return out


def write_graph(view: GraphView, out: str | Path, fmt: str) -> Path:
    if fmt == "json":
        return write_atomic(out, json_chunks(view.to_json()))
    if fmt == "pycg":
        return write_atomic(out, json_chunks(pycg_adjacency(view)))
    return write_atomic(out, render(view, fmt))
