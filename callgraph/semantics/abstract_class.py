"""`abstract-class`: calling an in-tree abstract class (abc) makes no instance.

`ABCMeta` refuses to instantiate a class that has an abstract method its MRO does not
override (`object.__new__` raises TypeError before `__init__` runs). transformers'
`Cache.update` does `self.layers.append(self.layer_class_to_replicate())` with
`layer_class_to_replicate: type[CacheLayerMixin | LinearAttentionCacheLayerMixin]`: `type[X]` is
the class X or a subclass (class-hierarchy), and X itself, an exact instance of
`LinearAttentionCacheLayerMixin(ABC)`, had no `update`, so `self.layers[i].update(...)` was a
blocker of every negative through a cache. X cannot be made: only its concrete subclasses
(`LinearAttentionAndFullAttentionLayer`, which takes `update` from `DynamicLayer`) can be there.

A class counts as abstract only when all of this holds, else it is instantiated as before:
- its metaclass is `abc.ABCMeta` (a base `abc.ABC`, or `metaclass=ABCMeta`), and no class of
  its MRO names another metaclass or has a base from outside other than `abc.ABC`, `object`,
  `typing.Generic` (an outside base could define the method, `__new__` or the metaclass);
- no class of its MRO defines `__new__` or is decorated (a class decorator may add methods and
  recompute the abstract set, as `dataclass` does through `abc.update_abstractmethods`);
- some method of its MRO is decorated `@abstractmethod` (abc's, outermost or under
  `property` / `staticmethod` / `classmethod` only), and the first class of the MRO that binds
  that name binds it there, by that def, at the top of its body (a name also bound by an
  assignment or inside an `if`/`try` in that body counts as overridden);
- no file of the scope mentions `__abstractmethods__` or `update_abstractmethods` (code that
  edits the abstract set after the class is made).
"""
from __future__ import annotations

import ast
import weakref

from ..values import VClass, VExt
from .protocol import Scope
from .rule import Rule

ALLOWED_BASES = frozenset({"abc.ABC", "builtins.object", "typing.Generic"})
ABC_META = frozenset({"abc.ABCMeta"})
ABSTRACT = frozenset({"abc.abstractmethod", "abc.abstractproperty", "abc.abstractclassmethod",
                      "abc.abstractstaticmethod"})
WRAPPERS = frozenset({"builtins.property", "builtins.staticmethod", "builtins.classmethod"})
EDITS = ("__abstractmethods__", "update_abstractmethods")


class AbstractClass(Rule):
    """calling an in-tree abstract class (metaclass `abc.ABCMeta`, an `@abstractmethod` its MRO
    does not override, nothing from outside in its MRO but `abc.ABC`) raises TypeError: no
    instance, no `__init__` (transformers' `type[LinearAttentionCacheLayerMixin]()`)"""

    name = "abstract-class"
    where = ("semantics/abstract_class.py", "semantics/constructor.py")
    on_edges = False


RULE = AbstractClass()

# Project -> whether some scope text edits abstract sets; ClassModel -> qual -> abstract or not.
_EDITED: "weakref.WeakKeyDictionary[object, bool]" = weakref.WeakKeyDictionary()
_MEMO: "weakref.WeakKeyDictionary[object, dict]" = weakref.WeakKeyDictionary()


def abstract(ev, qual: str) -> bool:
    """Whether calling in-tree class `qual` raises (abc): then it makes no instance."""
    memo = _MEMO.setdefault(ev.classes, {})
    if qual not in memo:
        memo[qual] = False  # a cycle through the bases reads as instantiable
        memo[qual] = _abstract(ev, qual)
    return memo[qual]


def _abstract(ev, qual: str) -> bool:
    cm = ev.classes
    order = cm.mro(qual)
    meta = False
    for k in order:
        info = ev.p.classes.get(k)
        if info is None or info.node.decorator_list:
            return False  # a class decorator may add the methods (dataclass's update_abstractmethods)
        for b in cm.bases(k):
            if isinstance(b, VExt):
                if b.name not in ALLOWED_BASES:
                    return False
                meta = meta or b.name == "abc.ABC"
            elif not isinstance(b, VClass):
                return False  # a base not resolved
        for kw in info.node.keywords:
            if kw.arg == "metaclass":
                found = ev.eval(kw.value, Scope(info.module), set())
                if not found or not all(isinstance(v, VExt) and v.name in ABC_META for v in found):
                    return False
                meta = True
    if not meta or cm.method(qual, "__new__") is not None:
        return False
    names = {n for k in order for n in _abstract_defs(ev, k)}
    if not names or _edited(ev.p):
        return False
    for name in sorted(names):
        for k in order:
            binding = _top_binding(ev.p.classes[k].node, name)
            if binding is None:
                continue  # not bound in this class's body: the next class of the MRO
            if isinstance(binding, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                    _is_abstract(ev, ev.p.classes[k], binding):
                return True
            break  # bound concretely first: overridden
    return False


def _abstract_defs(ev, qual: str) -> set[str]:
    info = ev.p.classes[qual]
    out = set()
    for stmt in info.node.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and _is_abstract(ev, info, stmt):
            out.add(stmt.name)
    return out


def _is_abstract(ev, info, fn: ast.AST) -> bool:
    """abc's abstractmethod outermost, or under property / staticmethod / classmethod only."""
    decorators = fn.decorator_list
    scope = Scope(info.module)
    for i, dec in enumerate(decorators):
        names = {v.name for v in ev.eval(dec, scope, set()) if isinstance(v, VExt)}
        if names & ABSTRACT:
            return all({v.name for v in ev.eval(d, scope, set()) if isinstance(v, VExt)} & WRAPPERS
                       for d in decorators[:i])
    return False


def _top_binding(cls: ast.ClassDef, name: str) -> ast.AST | None:
    """The statement that binds `name` last at the top of the class body; a statement of
    another kind (an assignment, an import, a nested block) that binds it wins over a def, so
    that doubt reads as overridden. None: the body does not bind it."""
    found = None
    for stmt in cls.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if stmt.name == name:
                found = stmt  # a later def of the name replaces an earlier one
        elif any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(stmt)) \
                or any(isinstance(n, ast.alias) and (n.asname or n.name).split(".")[0] == name for n in ast.walk(stmt)) \
                or any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == name
                       for n in ast.walk(stmt)):
            return stmt  # bound otherwise: counts as overridden
    return found


def _edited(project) -> bool:
    if project not in _EDITED:
        _EDITED[project] = any(word in text for _, text in project.texts() for word in EDITS)
    return _EDITED[project]
