"""Registry tables as data: the string tables a module builds at import time, read off its AST.

Frameworks keep their registries as literal tables (`OrderedDict([("llama", "LlamaModel"), ...])`,
`{"DeepseekV2ForCausalLM": ("deepseek_v2", "DeepseekV2ForCausalLM"), ...}`), merged with `**`
and `.update(...)`. This reads exactly those shapes, never importing or running the module:
a value that is not a string, or a tuple or list of strings, is left out.
"""
from __future__ import annotations

import ast
from typing import Dict, Tuple

Table = Dict[str, Tuple[str, ...]]


def read_tables(tree: ast.Module) -> dict[str, Table]:
    """Module-level `NAME = <table>` and `NAME.update(<table>)`, in statement order."""
    tables: dict[str, Table] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            found = _table(stmt.value, tables)
            if found is not None:
                tables[stmt.targets[0].id] = found
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            found = _table(stmt.value, tables)
            if found is not None:
                tables[stmt.target.id] = found
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            call = stmt.value
            f = call.func
            if (isinstance(f, ast.Attribute) and f.attr == "update" and isinstance(f.value, ast.Name)
                    and f.value.id in tables and len(call.args) == 1):
                more = _table(call.args[0], tables)
                if more is not None:
                    tables[f.value.id] = {**tables[f.value.id], **more}
    return tables


def strings(node: ast.AST) -> Tuple[str, ...] | None:
    """A string, or a tuple/list of strings (None inside is skipped), as a tuple."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return (node.value,)
    if isinstance(node, (ast.Tuple, ast.List)):
        out = []
        for e in node.elts:
            if isinstance(e, ast.Constant) and e.value is None:
                continue
            if not (isinstance(e, ast.Constant) and isinstance(e.value, str)):
                return None
            out.append(e.value)
        return tuple(out)
    return None


def _table(node: ast.AST, known: dict[str, Table]) -> Table | None:
    if isinstance(node, ast.Dict):
        out: Table = {}
        for k, v in zip(node.keys, node.values):
            if k is None:  # {**OTHER}
                if isinstance(v, ast.Name) and v.id in known:
                    out.update(known[v.id])
                continue
            if isinstance(k, ast.Constant) and isinstance(k.value, str):
                val = strings(v)
                if val is not None:
                    out[k.value] = val
        return out
    if isinstance(node, ast.Call) and _name(node.func) in ("OrderedDict", "dict"):
        out = {}
        for arg in node.args:
            if isinstance(arg, (ast.List, ast.Tuple)):
                for pair in arg.elts:
                    if isinstance(pair, (ast.Tuple, ast.List)) and len(pair.elts) == 2:
                        key = pair.elts[0]
                        val = strings(pair.elts[1])
                        if isinstance(key, ast.Constant) and isinstance(key.value, str) and val is not None:
                            out[key.value] = val
            else:
                more = _table(arg, known)
                if more is not None:
                    out.update(more)
        for kw in node.keywords:
            if kw.arg is None:
                if isinstance(kw.value, ast.Name) and kw.value.id in known:
                    out.update(known[kw.value.id])
                else:
                    more = _table(kw.value, known)
                    if more is not None:
                        out.update(more)
            else:
                val = strings(kw.value)
                if val is not None:
                    out[kw.arg] = val
        return out
    return None


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""
