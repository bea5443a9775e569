"""`bound`: a factory the user bound (`--bind FACTORY=CLASS[,CLASS...]`) builds those classes.

A factory whose class is chosen at run time (`AutoModel.from_config(config)`, a registry lookup
the tables cannot decide) is named by the person who knows the checkpoint: `--bind
AutoModel.from_config=LlamaModel`, by the callee's dotted text, or `--bind
modeling_llava.py:137=CLIPVisionModel`, by the site (a path suffix and a line). A bound call is
decided before its callee is inferred: it constructs each class named, and nothing else, so the
factory's own code (or an outside one) is not asked what it returns.
"""
from __future__ import annotations

import ast
from typing import FrozenSet

from ..index.scopes import dotted_text
from ..values import Value
from .constructor import construct
from .rule import Rule


class Bound(Rule):
    """a factory resolved by a user binding (`--bind AutoModel.from_config=LlamaModel`)"""

    name = "bound"
    where = ("semantics/bound.py", "infer/calls.py")


RULE = Bound()


def classes(binds: dict[str, str], node: ast.Call, display: str) -> tuple[str, ...]:
    """The classes a binding names for the call `node` in the module shown as `display`: by
    its site (`modeling_llava.py:137`, a path suffix and a line) first, else by its callee
    expression (`AutoModel.from_config`, or a suffix of it after a dot). A binding may name
    several classes (comma-separated): the call may build any."""
    if not binds:
        return ()
    text = dotted_text(node.func)
    by_text: tuple[str, ...] = ()
    for key, quals in binds.items():
        where, colon, line = key.rpartition(":")
        if colon and line.isdigit():
            if int(line) == node.lineno and ("/" + display).endswith("/" + where.lstrip("/")):
                return tuple(quals.split(","))
        elif text is not None and (text == key or text.endswith("." + key)) and not by_text:
            by_text = tuple(quals.split(","))
    return by_text


def construct_all(calls, quals: tuple[str, ...], args, d, tags: set[str]) -> FrozenSet[Value]:
    """The bound call's values: an instance of each class, its `__init__` a target of `d`
    with this rule on the edge."""
    tags.add(RULE.name)
    return frozenset().union(*(construct(calls, q, args, d, rule=RULE.name) for q in quals))
