"""`setattr-hook`: storing or deleting an attribute runs the class's in-tree `__setattr__` /
`__delattr__`.

`obj.x = v` (also `obj.x += v`, and `setattr(obj, name, v)`) calls `type(obj).__setattr__(obj,
"x", v)`; `del obj.x` (and `delattr(obj, name)`) calls `type(obj).__delattr__(obj, "x")`, where
the class's MRO finds an in-tree definition (object's and torch's own are outside code).
transformers' `PreTrainedConfig.__setattr__` maps names through `attribute_map` on every
`self.x = v` of a config's `__init__`; SGLang's `ServerArgs.__setattr__` and vLLM's
`ultravox` config run code of their own on each store. Before, a store was no call at all: a
target reached only from such a hook was a false "unreachable".

The hook runs bound to the instance, its name and value left unbound (one context per
instance class, as `__getattribute__`'s: one per stored name would be thousands on
transformers' configs). An instance known only by its base type runs the hooks of the base's
in-tree subclasses that override them too (`class_hierarchy.cone_methods`). Stores are asked
about only where some file of the scope defines `__setattr__` / `__delattr__`
(`Project.dunder_names`). Not followed: a store through `obj.__dict__[k] = v` or
`object.__setattr__(obj, k, v)` (neither runs the hook, rightly), a class whose metaclass
defines `__setattr__` (a store on the class object).
"""
from __future__ import annotations

import ast
import weakref
from typing import FrozenSet

from ..values import Ctx, Value
from .binding import bind
from .class_hierarchy import cone_methods
from .getattr_hook import ANY_NAME
from .rule import CallArgs, Rule

STORE = "__setattr__"
DELETE = "__delattr__"
HOOKS = frozenset({STORE, DELETE})
# The builtins that store or delete an attribute by a name given as their second argument.
BUILTINS = {"setattr": STORE, "delattr": DELETE}
# FuncInfo -> its builtin stores' synthetic calls (builtin_stores).
_BUILTIN_STORES: "weakref.WeakKeyDictionary[object, list]" = weakref.WeakKeyDictionary()


class SetattrHook(Rule):
    """storing an attribute (`obj.x = v`, `setattr(obj, name, v)`) runs the class's in-tree
    `__setattr__`, deleting one (`del obj.x`, `delattr`) its `__delattr__`, with the instance
    bound; an instance known only by its base type runs its in-tree subclasses' overrides too"""

    name = "setattr-hook"
    where = ("semantics/setattr_hook.py", "explore.py")


RULE = SetattrHook()


def store_calls(node: ast.Attribute, defined_dunders: FrozenSet[str]) -> list[tuple[str, ast.Call]]:
    """The hook's synthetic call `obj.x()` of a store or deletion, placed at it, of kind
    "setattr" ("delattr"), where some file of the scope defines that hook; none otherwise."""
    kind = "delattr" if isinstance(node.ctx, ast.Del) else "setattr"
    if (DELETE if kind == "delattr" else STORE) not in defined_dunders:
        return []
    return [(kind, ast.copy_location(ast.Call(func=node, args=[], keywords=[]), node))]


def builtin_stores(fn, defined_dunders: FrozenSet[str]) -> list[tuple[str, ast.Call]]:
    """The same synthetic calls for each `setattr(obj, name, v)` / `delattr(obj, name)` of
    `fn`'s body, placed at the call (the name is not read: the hook runs for any). Memoised."""
    if HOOKS.isdisjoint(defined_dunders):
        return []
    out = _BUILTIN_STORES.get(fn)
    if out is None:
        out = _BUILTIN_STORES[fn] = []
        for call in fn.calls():
            func = call.func
            if isinstance(func, ast.Name) and func.id in BUILTINS and call.args and not isinstance(
                    call.args[0], ast.Starred) and BUILTINS[func.id] in defined_dunders:
                kind = "delattr" if func.id == "delattr" else "setattr"
                ctx = ast.Del() if kind == "delattr" else ast.Store()
                made = ast.Call(func=ast.Attribute(value=call.args[0], attr=ANY_NAME, ctx=ctx), args=[], keywords=[])
                out.append((kind, ast.copy_location(made, call)))
    return out


def runs(ev, owners: FrozenSet[Value], kind: str) -> list[tuple[str, Ctx]]:
    """The in-tree `__setattr__` (kind "setattr") or `__delattr__` a store or deletion on each
    of `owners` runs, each bound to its instance."""
    out = {}
    for fn, inst in cone_methods(ev, owners, DELETE if kind == "delattr" else STORE):
        out[(fn.qual, bind(fn, inst, CallArgs([]), None))] = None
    return list(out)
