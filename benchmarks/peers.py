"""Reading other call-graph tools' outputs, and mapping our qualified names to theirs.

Pure Python, no tool imported: `bench_tree.py` runs each peer in its own virtual environment
and hands its output file here. Every parser returns a set of (caller, callee) pairs in the
tool's own naming; `tool_name()` turns one of our names (module, path inside the module) into
that naming, so "does the tool find the chain?" is plain set membership.

Naming per tool (what `tool_name` does):

- ours, pycg, jarviscg: dotted qualified names from the import root, the same as ours:
  `sglang.srt.models.deepseek_v2.DeepseekV2Model.forward` (both are run with `--package` set to
  the import root, the folder above `sglang`). Output: JSON `{caller: [callee, ...]}`.
- pyan3: DOT node ids are pyan's `make_safe_label(full name)`: dots become `__`, and the words
  digraph/graph/cluster/subgraph/node get an `X` appended (`sglang__srt__models__deepseek_v2__
  DeepseekV2Model__forward`); run with `--root` = the import root so module names are full.
  Only "uses" edges (`style="solid"`) count; "defines" edges (dashed) are nesting, not calls.
- code2flow: JSON graph spec, nodes named `<file name without .py>::<Class>.<method>` (no folder:
  `deepseek_v2::DeepseekV2Model.forward`), so two files with the same name share node names;
  an edge counts when its two end names match.

A constructor edge (`DeepseekV2Model.__init__`) is never taken for a module call
(`self.model(...)` runs `nn.Module.__call__` → `forward`): only the named method counts.
"""
from __future__ import annotations

import json
import re
from typing import Iterable

TOOLS = ("ours", "pycg", "jarviscg", "pyan3", "code2flow")

# The flagship chain as (module, path inside the module); consecutive pairs must be edges.
FLAGSHIP: tuple[tuple[str, str], ...] = (
    ("sglang.srt.models.kimi_k25", "KimiK25ForConditionalGeneration.forward"),
    ("sglang.srt.managers.mm_utils", "general_mm_embed_routine"),
    ("sglang.srt.models.deepseek_v2", "DeepseekV2ForCausalLM.forward"),
    ("sglang.srt.models.deepseek_v2", "DeepseekV2Model.forward"),
)

Edges = set[tuple[str, str]]


# -- parsers ---------------------------------------------------------------------------------
def parse_adjacency_json(text: str) -> Edges:
    """PyCG / jarviscg "simple" format: {"caller": ["callee", ...], ...}."""
    data = json.loads(text)
    return {(caller, callee) for caller, callees in data.items() for callee in callees}


_DOT_EDGE = re.compile(r'^\s*"((?:[^"\\]|\\.)*)"\s*->\s*"((?:[^"\\]|\\.)*)"\s*\[(.*)\]\s*;?\s*$')


def parse_pyan_dot(text: str) -> Edges:
    """pyan3 `--dot`: `"a" -> "b" [style="solid", ...];` lines; dashed ones (defines) are left out."""
    edges = set()
    for line in text.splitlines():
        m = _DOT_EDGE.match(line)
        if m and 'style="dashed"' not in m.group(3):
            edges.add((_dot_unquote(m.group(1)), _dot_unquote(m.group(2))))
    return edges


def _dot_unquote(s: str) -> str:
    return s.replace('\\"', '"').replace("\\\\", "\\")


def parse_code2flow_json(text: str) -> Edges:
    """code2flow `-o out.json`: {"graph": {"nodes": {uid: {"name": ...}}, "edges": [{source, target}]}}."""
    graph = json.loads(text)["graph"]
    names = {uid: node["name"] for uid, node in graph["nodes"].items()}
    return {(names[e["source"]], names[e["target"]]) for e in graph["edges"]
            if e["source"] in names and e["target"] in names}


def parse_ours_json(text: str) -> Edges:
    """`callgraph export --format json`: GraphView JSON, edges with caller / callee qualnames."""
    data = json.loads(text)
    return {(e["caller"], e["callee"]) for e in data["edges"]}


PARSERS = {
    "ours": parse_ours_json,
    "pycg": parse_adjacency_json,
    "jarviscg": parse_adjacency_json,
    "pyan3": parse_pyan_dot,
    "code2flow": parse_code2flow_json,
}


# -- names -----------------------------------------------------------------------------------
def pyan_safe_label(name: str) -> str:
    """pyan's node.make_safe_label (pyan3 2.9.0), reimplemented."""
    for word in ("digraph", "graph", "cluster", "subgraph", "node"):
        name = name.replace(word, f"{word}X")
    return name.replace(".", "__").replace("*", "")


def tool_name(tool: str, module: str, path: str) -> str:
    """Our function `module` + `path` (e.g. `Class.method`) in `tool`'s naming."""
    if tool in ("ours", "pycg", "jarviscg"):
        return f"{module}.{path}"
    if tool == "pyan3":
        return pyan_safe_label(f"{module}.{path}")
    if tool == "code2flow":
        return f"{module.rsplit('.', 1)[-1]}::{path}"
    raise ValueError(f"unknown tool {tool!r}")


def chain_names(tool: str, chain: Iterable[tuple[str, str]] = FLAGSHIP) -> list[str]:
    return [tool_name(tool, module, path) for module, path in chain]


def missing_links(tool: str, edges: Edges, chain: Iterable[tuple[str, str]] = FLAGSHIP) -> list[tuple[str, str]]:
    """The consecutive pairs of the chain (in the tool's naming) that are not edges; [] = found."""
    names = chain_names(tool, chain)
    return [(a, b) for a, b in zip(names, names[1:]) if (a, b) not in edges]


def in_tree(tool: str, edges: Edges, prefix: str = "sglang.srt") -> int:
    """Edges whose two ends are functions of the analysed tree (external callees left out)."""
    if tool == "code2flow":  # code2flow only draws functions it parsed
        return len(edges)
    mark = pyan_safe_label(prefix) + "__" if tool == "pyan3" else prefix + "."
    return sum(1 for a, b in edges if a.startswith(mark) and b.startswith(mark))


def instead(tool: str, edges: Edges, chain: Iterable[tuple[str, str]] = FLAGSHIP) -> list[str]:
    """For each missing link a -> Class.m: what the tool has from a into Class (e.g. Class.__init__),
    and how many callees a has at all, to tell a wrong target from no resolution."""
    chain = list(chain)
    names = chain_names(tool, chain)
    out = []
    for (a, b), (module, path) in zip(zip(names, names[1:]), chain[1:]):
        if (a, b) in edges:
            continue
        callees = sorted(c for x, c in edges if x == a)
        owner = tool_name(tool, module, path.rsplit(".", 1)[0]) if "." in path else b
        near = [c for c in callees if c != b and c.startswith(owner)]
        out.append(f"{a} has {len(callees)} callee(s)" + (f", into the class: {', '.join(near)}" if near else ""))
    return out


def summarize(tool: str, text: str) -> dict:
    """Edge counts and the chain verdict of one output text."""
    edges = PARSERS[tool](text)
    missing = missing_links(tool, edges)
    return {"edges": len(edges), "edges_in_tree": in_tree(tool, edges), "flagship": not missing,
            "missing": [f"{a} -> {b}" for a, b in missing], "instead": instead(tool, edges)}
