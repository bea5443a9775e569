"""The one data model every part of callgraph shares.

The static side produces these records, the outputs (text, JSON, DOT), the CI gate and the
companion hook module consume them. Everything here is plain data: frozen dataclasses with a
JSON round-trip, so a proof written by `reach --json` can be read back by `callgraph dump`
without importing any of the analysis.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any, Iterable


class Verdict(str, Enum):
    """The answer of a reach query (see docs/verdicts.md)."""

    REACHED = "reached"
    UNREACHABLE = "unreachable"
    UNKNOWN = "unknown"


# Rules an edge may record. The semantics registry (callgraph.semantics.REGISTRY) is the
# authority; this tuple names the same rules for consumers (renderers, the gate, the hook module)
# that must not import the analysis, and tests/test_rules.py fails when the two differ.
RULES = (
    "direct",           # a name or attribute resolved to a def (index or Jedi)
    "constructor",      # Class(...) runs Class.__init__
    "module-call",      # nn.Module instance called -> forward (or an overriding __call__)
    "call-method",      # instance of a plain class called -> __call__
    "attribute-store",  # receiver typed from the tree's stores by name (register_parameter, setattr, obj.x = v)
    "module-store",     # module global typed from stores into it from other modules (m.X = v, setattr(m, "X", v))
    "enum-member",      # an Enum class-body assignment read as the member (an instance of the class)
    "init-attribute",   # receiver typed from self.x = ... assignments
    "param-binding",    # receiver typed from the argument bound at the caller's call site
    "typed-kwargs",     # **kwargs: Unpack[TD] of an in-tree TypedDict: its keys, each its field's annotation
    "init-chain",       # a base __init__'s parameters bound by the subclass's super().__init__(...)
    "mro",              # inherited method found on a base class
    "super",            # super().m(...)
    "container",        # element of ModuleList / Sequential / ModuleDict / list of layers
    "container-subclass",  # item of an in-tree dict/list subclass (its own __getitem__, e.g. ACT2FN[...])
    "mapping-mixin",    # Mapping.get / pop / setdefault / __contains__ of an in-tree Mapping subclass -> its __getitem__
    "dunder",           # a builtin calling its argument's dunder: len(x) -> __len__, str(x) -> __str__, list(x) -> __iter__
    "iterator",         # element of enumerate / zip / reversed / itertools.islice / chain over a container
    "key-function",     # a function handed to a builtin that calls it: sorted/min/max(key=f), xs.sort(key=f), filter(f, xs)
    "property",         # value of a @property getter
    "descriptor",       # x = D() in a class body, D with __get__ / __set__ / __delete__: a read, store, deletion runs them
    "getattr-hook",     # a read the class does not answer runs its __getattr__ (every read its __getattribute__)
    "module-getattr",   # a name a module does not bind, read off it or imported from it, runs its __getattr__ (PEP 562)
    "setattr-hook",     # a store (a deletion) of an attribute runs the class's __setattr__ (__delattr__)
    "return-type",      # value returned by a helper or factory
    "partial",          # functools.partial(f, ...) called
    "computed-getattr", # getattr(obj, f"forward_{k}"): the receiver's attributes the name can spell
    "decorator",        # decorated def kept as itself (@torch.no_grad() and the like)
    "triton-launch",    # kernel[grid](...) of a @triton.jit function runs it (and its decorators' callables)
    "class-hierarchy",  # receiver of a base type -> every override
    "bound",            # factory resolved by a user binding (--bind)
    "registry",         # factory resolved by a framework registry's table (the edge's `key`)
    "jedi",             # Jedi's goto/infer answered where the index could not
    "callback",         # an in-tree callable handed to external code, which may call it
    "protocol",         # an implicit dunder call: for-loops call __iter__ / __next__, with-statements __enter__ / __exit__
    "external",         # (export only) a call into code outside the analysed roots
)


@dataclass(frozen=True, slots=True)
class Hop:
    """One call edge on a path, with its evidence."""

    caller: str
    callee: str
    site: str   # "path:line:col", path relative to the root
    expr: str   # the callee expression as written
    rule: str   # the rule that resolved the hop
    via: tuple[str, ...] = ()  # further rules that typed the receiver (param-binding, mro, ...)
    key: str = ""  # a registry edge: the key that chose the class (`text_config.model_type=llama`)

    @property
    def site_path(self) -> str:
        return self.site.rsplit(":", 2)[0]

    @property
    def site_line(self) -> int:
        return int(self.site.rsplit(":", 2)[1])


# A graph edge carries exactly the evidence a path hop does.
Edge = Hop


@dataclass(frozen=True, slots=True)
class Unresolved:
    """A call site the analysis could not resolve, with the reason."""

    caller: str
    site: str
    expr: str
    why: str


@dataclass(frozen=True, slots=True)
class Condition:
    """A registry factory no key decided, and the keys of its table whose class reaches the
    target: what an unknown answer needs (`reached if text_config.model_type is one of: llama`)."""

    site: str                   # the factory call, path:line:col
    factory: str                # AutoModel.from_config
    key: str                    # the key expression: text_config.model_type
    reaching: tuple[str, ...]   # keys whose class was found to reach the target
    complete: bool = True       # False: the time budget cut the check (more keys may reach)

    def to_json(self) -> dict[str, Any]:
        return {"site": self.site, "factory": self.factory, "key": self.key, "reaching": list(self.reaching),
                "complete": self.complete}


@dataclass(frozen=True, slots=True)
class Node:
    name: str
    file: str
    line: int


@dataclass(frozen=True)
class Stats:
    functions_visited: int = 0
    call_sites: int = 0
    seconds: float = 0.0


@dataclass(frozen=True)
class Proof:
    """The answer of `reach`, shared by `reach --json`, the CI gate and the hook module."""

    verdict: Verdict
    entry: str
    target: str
    root: tuple[str, ...]
    tool_version: str
    path: tuple[Hop, ...] = ()
    attribute_chain: tuple[str, ...] = ()
    unresolved: tuple[Unresolved, ...] = ()
    stats: Stats = field(default_factory=Stats)
    all_paths: tuple[tuple[Hop, ...], ...] = ()
    conditions: tuple[Condition, ...] = ()  # unknown: registry sites and the keys that would reach
    assumptions: tuple[str, ...] = ()  # the entry's parameters as --arg typed them: "x: torch.Tensor"

    def to_json(self) -> dict[str, Any]:
        data = {
            "verdict": self.verdict.value,
            "entry": self.entry,
            "target": self.target,
            "root": list(self.root),
            "tool_version": self.tool_version,
            "path": [hop_json(h) for h in self.path],
            "attribute_chain": list(self.attribute_chain),
            "unresolved": [_unresolved_json(u) for u in self.unresolved],
            "stats": asdict(self.stats),
        }
        if self.all_paths:
            data["all_paths"] = [[hop_json(h) for h in p] for p in self.all_paths]
        if self.conditions:
            data["conditions"] = [c.to_json() for c in self.conditions]
        if self.assumptions:
            data["assumptions"] = list(self.assumptions)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Proof":
        return cls(
            verdict=Verdict(data["verdict"]),
            entry=data["entry"],
            target=data["target"],
            root=tuple(data.get("root", ())),
            tool_version=data.get("tool_version", ""),
            path=tuple(_hop(h) for h in data.get("path", ())),
            attribute_chain=tuple(data.get("attribute_chain", ())),
            unresolved=tuple(
                Unresolved(caller=u.get("caller", ""), site=u["site"], expr=u["expr"], why=u["why"])
                for u in data.get("unresolved", ())
            ),
            stats=Stats(**data.get("stats", {})),
            all_paths=tuple(tuple(_hop(h) for h in p) for p in data.get("all_paths", ())),
            conditions=tuple(Condition(c["site"], c.get("factory", ""), c.get("key", ""), tuple(c.get("reaching", ())),
                                       c.get("complete", True)) for c in data.get("conditions", ())),
            assumptions=tuple(data.get("assumptions", ())),
        )

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=2)


def hop_order(h: Hop) -> tuple:
    """The order of hops in a graph: by caller, site and callee, then by every other field, so
    that two hops of one call (reached in two contexts, named by two rules) never tie. A tie
    would leave them in the order of a set, which follows the process's string hash seed."""
    return (h.caller, h.site, h.callee, h.rule, h.via, h.expr)


def unresolved_order(u: Unresolved) -> tuple:
    """The order of unresolved rows: by caller and site, then by expression and reason."""
    return (u.caller, u.site, u.expr, u.why)


def _hop(h: dict[str, Any]) -> Hop:
    return Hop(caller=h["caller"], callee=h["callee"], site=h["site"], expr=h.get("expr", ""),
               rule=h.get("rule", ""), via=tuple(h.get("via", ())), key=h.get("key", ""))


def hop_json(h: Hop) -> dict[str, Any]:
    """One hop or edge in the JSON vocabulary of docs/vocabulary.md."""
    out = {"caller": h.caller, "callee": h.callee, "site": h.site, "expr": h.expr, "rule": h.rule,
           "via": list(h.via)}
    if h.key:
        out["key"] = h.key
    return out


def _unresolved_json(u: Unresolved) -> dict[str, str]:
    return {"caller": u.caller, "site": u.site, "expr": u.expr, "why": u.why}


@dataclass(frozen=True)
class GraphView:
    """A slice of the call graph: what `callees`, `callers` and `export --format json` print."""

    root: tuple[str, ...]
    entry: str
    tool_version: str
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    unresolved: tuple[Unresolved, ...] = ()

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "GraphView":
        return cls(
            root=tuple(data.get("root", ())),
            entry=data.get("entry", ""),
            tool_version=data.get("tool_version", ""),
            nodes=tuple(Node(n["name"], n.get("file", ""), n.get("line", 0)) for n in data.get("nodes", ())),
            edges=tuple(_hop(e) for e in data.get("edges", ())),
            unresolved=tuple(Unresolved(u.get("caller", ""), u["site"], u.get("expr", ""), u.get("why", ""))
                             for u in data.get("unresolved", ())),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "root": list(self.root),
            "entry": self.entry,
            "tool_version": self.tool_version,
            "nodes": [{"name": n.name, "file": n.file, "line": n.line} for n in self.nodes],
            "edges": [hop_json(e) for e in self.edges],
            "unresolved": [_unresolved_json(u) for u in self.unresolved],
        }


def short_name(qualname: str, classes: Iterable[str] = ()) -> str:
    """`a.b.mod.Class.method` -> `Class.method` when Class is a known class qualname."""
    known = set(classes)
    parts = qualname.split(".")
    for i in range(len(parts) - 1, 0, -1):
        if ".".join(parts[:i]) in known:
            return ".".join(parts[i - 1:])
    return parts[-1]
