"""`protocol` (with-statements): the dunder calls a `with` statement makes without a call expression.

`with m as x:` runs `type(m).__enter__(m)` before the block and `type(m).__exit__(m, exc_type,
exc, tb)` after it (`async with`: `__aenter__` / `__aexit__`). A manager class of the tree runs
code there: a dump writer flushing in `__exit__`, a capture context switching modes in
`__enter__`. Before, only the manager's construction (`Mgr(...)`, its `__init__`) was an edge,
so a target reached from `__enter__` or `__exit__` was a false "unreachable". The exploration
dispatches the two as synthetic calls placed at the manager's source position, `m.__enter__()`
and `m.__exit__(None, None, None)`, so an in-tree `__enter__` / `__exit__` is an edge named
`protocol`. As for loops (`iter_protocol.py`), a manager not inferred blocks nothing here (its
methods' names lead nowhere by themselves); what `with` binds is `contextmanager.py`'s.
"""
from __future__ import annotations

import ast


def calls(node: ast.AST) -> list[ast.Call]:
    """The calls a `with` / `async with` statement makes on each of its managers, in order:
    `__enter__` then `__exit__` (`__aenter__` / `__aexit__`); none for any other node."""
    if isinstance(node, ast.With):
        names = ("__enter__", "__exit__")
    elif isinstance(node, ast.AsyncWith):
        names = ("__aenter__", "__aexit__")
    else:
        return []
    out = []
    for item in node.items:
        m = item.context_expr
        for name, nargs in zip(names, (0, 3)):
            c = ast.Call(func=ast.Attribute(value=m, attr=name, ctx=ast.Load()),
                         args=[ast.Constant(value=None) for _ in range(nargs)], keywords=[])
            ast.copy_location(c, m)
            ast.copy_location(c.func, m)
            for a in c.args:
                ast.copy_location(a, m)
            out.append(c)
    return out
