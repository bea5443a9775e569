"""The shapes of the cache's records, checked before a record is believed.

A record that parses as JSON can still be wrong: `[]`, `{}`, `{"proof": null}`, a verdict that
does not exist, a witness path whose hops do not join. Read as is, such a record crashed every
later run, or printed a verdict nobody proved (issue 17). Each check raises RecordError with
the first thing wrong; the cache then discards the record and the answer is computed afresh.
The checksum in cache.py catches edits; these checks catch records of the wrong shape.
"""
from __future__ import annotations

from typing import Any

from .model import Verdict


class RecordError(ValueError):
    """A cache record of the wrong shape; the message says where."""


def check_names(value: Any) -> dict:
    """A per-file name summary (relevance.py)."""
    _fields(value, "summary", {"defs": list, "holders": list, "values": list, "classes": list})
    for i, row in enumerate(value["defs"]):
        if not (isinstance(row, list) and len(row) == 3 and isinstance(row[0], str)
                and _strings(row[1]) and isinstance(row[2], bool)):
            raise RecordError(f"defs[{i}] is not [name, [callee, ...], holder]")
    for key in ("holders", "values", "classes"):
        if not _strings(value[key]):
            raise RecordError(f"{key} holds a non-string")
    return value


def check_nameindex(value: Any) -> dict:
    """A whole tree's name index (relevance.index_record): the callee sets, the defs that
    point into them, the names, the files it skipped."""
    _fields(value, "index", {"callees": list, "defs": list, "holders": list, "values": list, "classes": list,
                             "dynamic": bool, "skipped": list})
    sets = value["callees"]
    if not all(_strings(s) for s in sets):
        raise RecordError("callees holds a non-string")
    n = len(sets)
    for i, row in enumerate(value["defs"]):
        if not (isinstance(row, list) and len(row) == 3 and isinstance(row[0], str)
                and type(row[1]) is int and 0 <= row[1] < n and isinstance(row[2], bool)):
            raise RecordError(f"defs[{i}] is not [name, callee set, holder]")
    for key in ("holders", "values", "classes"):
        if not _strings(value[key]):
            raise RecordError(f"{key} holds a non-string")
    for i, row in enumerate(value["skipped"]):
        if not (isinstance(row, list) and len(row) == 2 and _strings(row)):
            raise RecordError(f"skipped[{i}] is not [path, why]")
    return value


def check_reach(value: Any) -> dict:
    """A reach answer: {"proof": <proof JSON>, "read": {path: sha1}, "classes": [qualified name, ...]}
    (`classes`: which prefixes of the names the proof shows are classes, for its text)."""
    _fields(value, "record", {"proof": dict, "read": dict})
    _read(value["read"])
    proof = value["proof"]
    _fields(proof, "proof", {"verdict": str, "entry": str, "target": str, "path": list,
                             "unresolved": list, "stats": dict})
    if proof["verdict"] not in {v.value for v in Verdict}:
        raise RecordError(f"verdict {proof['verdict']!r} is none of {[v.value for v in Verdict]}")
    hops = [_hop(h, f"path[{i}]") for i, h in enumerate(proof["path"])]
    if hops:
        if proof["verdict"] != Verdict.REACHED.value:
            raise RecordError(f"a path with verdict {proof['verdict']}")
        if hops[0]["caller"] != proof["entry"] or hops[-1]["callee"] != proof["target"]:
            raise RecordError("the path does not run from the entry to the target")
        for a, b in zip(hops, hops[1:]):
            if a["callee"] != b["caller"]:
                raise RecordError(f"hops {a['site']} and {b['site']} do not join")
    for i, row in enumerate(proof["unresolved"]):
        _fields(row, f"unresolved[{i}]", {"site": str, "expr": str, "why": str})
    if "classes" in value and not _strings(value["classes"]):
        raise RecordError("classes holds a non-string")
    return value


def check_export(value: Any) -> dict:
    """A whole-tree graph: {"graph": <graph JSON>, "read": {path: sha1}}."""
    _fields(value, "record", {"graph": dict, "read": dict})
    _read(value["read"])
    graph = value["graph"]
    _fields(graph, "graph", {"nodes": list, "edges": list, "unresolved": list})
    for i, node in enumerate(graph["nodes"]):
        _fields(node, f"nodes[{i}]", {"name": str})
    for i, hop in enumerate(graph["edges"]):
        _hop(hop, f"edges[{i}]")
    for i, row in enumerate(graph["unresolved"]):
        _fields(row, f"unresolved[{i}]", {"site": str})
    return value


CHECKS = {"names": check_names, "nameindex": check_nameindex, "reach": check_reach, "export": check_export}


def _fields(value: Any, what: str, fields: dict[str, type]) -> None:
    if not isinstance(value, dict):
        raise RecordError(f"{what} is a {type(value).__name__}, not an object")
    for key, kind in fields.items():
        if not isinstance(value.get(key), kind):
            raise RecordError(f"{what}: {key!r} is missing or not a {kind.__name__}")


def _hop(value: Any, what: str) -> dict:
    _fields(value, what, {"caller": str, "callee": str, "site": str})
    return value


def _read(value: dict) -> None:
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise RecordError("'read' is not {path: sha1}")


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(x, str) for x in value)
