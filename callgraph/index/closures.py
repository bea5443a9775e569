"""Which nested functions run the same in every calling context of the functions around them.

A nested function's value carries the context it was defined in (its closure), so that the
names it reads from the functions around it have their values there. When none of the names
it reads is one those functions bind from their arguments or from code (every such name is a
`def`, a `class` or an `import` there, and each nested `def` so named is itself of this kind),
the closure cannot change what it does: transformers' `PreTrainedConfig.to_dict` defines a
recursive `to_list(value)` that reads only `to_list`, and keeping `to_dict`'s context in it
worked the recursion out again for each of 1,309 config classes (1,287 heads, five rounds each).
"""
from __future__ import annotations

import ast
import weakref

from .scopes import MODULE_CODE, FuncInfo

_FUNCTION_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def context_free(functions: dict, fn: FuncInfo) -> bool:
    """Whether `fn`, a function nested in a function, reads nothing of the enclosing
    functions' contexts (see the module's docstring); `functions`: the project's, by name."""
    found = _FREE.get(fn)
    if found is None:
        found = _FREE[fn] = _free(functions, fn, (fn,))
    return found


def _free(functions: dict, fn: FuncInfo, visiting: tuple) -> bool:
    """`visiting`: the functions whose answer depends on this one's; a def naming one of them
    other than `fn` itself (mutual recursion) is not followed: not context-free."""
    parent = fn.parent
    if fn.cls is not None or parent is None or parent.name == MODULE_CODE or not isinstance(fn.node, _FUNCTION_NODES):
        return False
    own = fn.locals()
    params = fn.param_names()
    names = {n.id for n in ast.walk(fn.node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    outer = parent
    while outer is not None and outer.name != MODULE_CODE:
        if any(isinstance(n, ast.Nonlocal) for n in ast.walk(outer.node)):
            return False  # a name the functions around it may rebind from inside
        outer = outer.parent
    for name in names:
        if name in own or name in params:
            continue
        outer = parent
        while outer is not None and outer.name != MODULE_CODE:
            if name in outer.param_names():
                return False
            bindings = outer.locals().get(name)
            if bindings:
                for b in bindings:
                    if b.kind == "def":
                        target = functions.get(b.target)
                        if target is fn:
                            continue  # its own name: recursion
                        if target is None or target in visiting:
                            return False
                        known = _FREE.get(target)
                        if known is None:
                            known = _free(functions, target, visiting + (target,))
                        if not known:
                            return False
                    elif b.kind not in ("class", "import"):
                        return False
                break
            outer = outer.parent
    return True


# FuncInfo -> whether it is context-free; weak, so a finished analysis's functions are not kept
_FREE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
