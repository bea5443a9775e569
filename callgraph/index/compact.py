"""Compact syntax trees: the parser's nodes copied into subclasses with `__slots__`.

`ast.parse` gives every node a `__dict__` of its fields and positions. A `Name` (a third of
all nodes) then costs about 450 bytes, two thirds of it the dict, and every line number above
256 is an int object of its own. SGLang's `srt` parses into 4.3 M nodes and 1.06 GB that way;
compacted it is 0.41 GB, for 1.9 s of copying (measured in docs/benchmarks.md).

The copies are instances of subclasses of the same `ast` classes, with the same names, fields
and positions: `isinstance(node, ast.Call)`, `ast.walk`, `ast.unparse`, `ast.dump` and
name-based dispatch (`"_eval_" + type(node).__name__`) see no difference. What a node lacks
stays lacking: a node whose dict misses a field is copied by the slow path, field by field
(an optional field it lacks reads as None, as the class said before). One difference remains:
`getattr(ast.alias_subclass, "asname")` is a slot, not None, so `ast.dump` prints `asname=None`.

The copier of each class is generated once (one assignment per field, no loop, no getattr),
because a generic loop over `_fields` costs three times as much on millions of nodes.
"""
from __future__ import annotations

import ast

# Line numbers and offsets below this share one int object each (the parser makes a new one
# for every value above 256).
_SHARED_INTS = 1 << 17
_INTS = list(range(_SHARED_INTS))


def _same(value):
    return value


class _Copiers(dict):
    """class -> function copying one node of it (non-nodes and field-less nodes, such as the
    `Load` singleton, are returned as they are). Filled as classes are first met."""

    def __missing__(self, cls):
        fields = tuple(getattr(cls, "_fields", ()) or ())
        attrs = tuple(getattr(cls, "_attributes", ()) or ())
        if not (isinstance(cls, type) and issubclass(cls, ast.AST)) or not (fields or attrs):
            copier = _same
        else:
            copier = _generate(cls, fields, attrs)
        self[cls] = copier
        return copier


_COPIERS = _Copiers()


def _slotted(cls: type, slots: tuple[str, ...]) -> type:
    return type(cls.__name__, (cls,), {"__slots__": slots, "__module__": __name__,
                                        "__doc__": cls.__doc__})


def _copy_value(value):
    if value.__class__ is list:
        return [_COPIERS[x.__class__](x) for x in value]
    return _COPIERS[value.__class__](value)


def _generate(cls: type, fields: tuple[str, ...], attrs: tuple[str, ...]):
    # optional fields default to None on the class (`alias.asname`); a slot would hide that
    defaults = {f: getattr(cls, f) for f in fields if hasattr(cls, f)}
    slim = _slotted(cls, fields + attrs)

    def slow(node):
        out = slim.__new__(slim)
        for name, value in defaults.items():
            setattr(out, name, value)
        for name, value in node.__dict__.items():
            if name in fields:
                setattr(out, name, _copy_value(value))
            elif name in attrs:
                setattr(out, name, _INTS[value] if value.__class__ is int and 0 <= value < _SHARED_INTS else value)
            else:
                return node  # something we do not know of was set on it: keep the original
        return out

    lines = ["def copy(node):", "    d = node.__dict__", "    try:", "        out = new(slim)"]
    for f in fields:
        lines += [f"        v = d[{f!r}]",
                  f"        out.{f} = [C[x.__class__](x) for x in v] if v.__class__ is list else C[v.__class__](v)"]
    for a in attrs:
        lines += [f"        v = d[{a!r}]",
                  f"        out.{a} = I[v] if v.__class__ is int and 0 <= v < N else v"]
    lines += ["    except KeyError:", "        return slow(node)",
              "    if len(d) != K:", "        return slow(node)", "    return out"]
    namespace = {"new": slim.__new__, "slim": slim, "C": _COPIERS, "I": _INTS, "N": _SHARED_INTS,
                 "slow": slow, "K": len(fields) + len(attrs)}
    exec("\n".join(lines), namespace)  # noqa: S102 - code generated from the ast classes' own field names
    return namespace["copy"]


def compact(tree: ast.AST) -> ast.AST:
    """The same tree in slotted nodes; the tree itself where it is too deep to copy."""
    try:
        return _COPIERS[tree.__class__](tree)
    except RecursionError:
        return tree
