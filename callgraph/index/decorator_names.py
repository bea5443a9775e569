"""Decorators by name: the one walker that names a decorator, and every set of names the
analysis treats specially.

A decorator is named as it is written (`functools.cached_property`, `torch.no_grad` for
`@torch.no_grad()`): names are matched as spelt, not resolved, so `@cached_property` and
`@functools.cached_property` are both listed where both mean the same. The sets are read by the
index (which decorators make a call edge, a method's kind), by the rules (`semantics/
properties.py`, `contextmanager.py`, `decorators.py`) and by the exploration (whether a hop is
named `decorator`); keeping them here keeps them from drifting apart.
"""
from __future__ import annotations

import ast

# Applied by Python, but modelled as the def itself: no `dec(f)` call edge, and the name binds
# the function (`index/scopes.py` implicit calls, `semantics/decorators.py`).
NON_CALLING = frozenset({"staticmethod", "classmethod", "property", "abstractmethod", "abc.abstractmethod",
                         "functools.wraps", "wraps", "overload", "typing.overload", "override", "typing.override"})
# `@wraps(f)` makes the wrapper a decorator's product: a hop into it is named `decorator`
# (explore.py), though applying `wraps` is no edge of its own.
WRAPS = frozenset({"functools.wraps", "wraps"})
# A callee decorated only with these is a plain def for naming its hop.
PLAIN = NON_CALLING - WRAPS
# A getter run on attribute access (`semantics/properties.py`).
PROPERTY = ("property", "cached_property", "functools.cached_property", "abc.abstractproperty")
# A generator function turned into a context manager factory (`semantics/contextmanager.py`).
CONTEXT_MANAGER = ("contextlib.contextmanager", "contextmanager")
# The method kinds a decorator gives (`FuncInfo.kind`); `.setter`/`.getter`/`.deleter` make an
# accessor (index/redefinitions.py), whose hop is named like a plain def's (explore.py).
KINDS = {"staticmethod": "staticmethod", "classmethod": "classmethod", "property": "property",
         "cached_property": "property", "functools.cached_property": "property"}
ACCESSOR_SUFFIXES = (".setter", ".getter", ".deleter")


def decorator_name(node: ast.expr) -> str:
    """`@a.b` and `@a.b(...)` are `a.b`; what is not a dotted name keeps its trailing names."""
    if isinstance(node, ast.Call):
        node = node.func
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))
