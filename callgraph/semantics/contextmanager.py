"""`with m as x` and `@contextlib.contextmanager`: what a with-statement binds.

At run time `with m as x` binds `m.__enter__()`'s return value. An in-tree class defining
`__enter__` is asked for it; external managers (files, locks, most of torch's) return
themselves, so the manager stands for what is bound. A generator function decorated with
`@contextmanager` returns a `_GeneratorContextManager`, whose `__enter__` runs outside the tree:
its value is that external object, never the generator's elements.
"""
from __future__ import annotations

from typing import FrozenSet

from ..index import decorator_names
from ..index.scopes import FuncInfo
from ..values import Value, VExt, VInst
from .binding import self_context
from .protocol import Inference
from .rule import Rule

DECORATORS = decorator_names.CONTEXT_MANAGER


class ContextManager(Rule):
    """`with m as x` binds what an in-tree `m.__enter__()` returns, and the manager itself where
    `__enter__` is not in the tree (files and locks return themselves); a
    `@contextmanager` function returns an external `_GeneratorContextManager`"""

    name = "contextmanager"
    where = ("semantics/contextmanager.py",)
    on_edges = False  # it makes values; a call on what `with` bound is named by its own rule


def entered(ev: Inference, managers: FrozenSet[Value]) -> FrozenSet[Value]:
    """What `with m as x` binds for each manager value `m`."""
    out: set[Value] = set()
    for m in managers:
        found = ev.classes.method(m.qual, "__enter__") if isinstance(m, VInst) else None
        if found is None:
            out.add(m)
            continue
        out |= ev.returns(found[0], self_context(found[0], m))
    return frozenset(out)


def returned(fn: FuncInfo) -> FrozenSet[Value] | None:
    """A `@contextmanager` function's return value, or None for any other function."""
    if any(d in fn.decorators for d in DECORATORS):
        return frozenset({VExt("contextlib._GeneratorContextManager")})
    return None


RULE = ContextManager()
