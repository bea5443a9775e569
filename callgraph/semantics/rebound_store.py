"""`rebound-store`: torch's `register_parameter` rebound around a block (accelerate's `init_on_device`).

SGLang (`models/transformers.py`, `_init_on_device_without_buffers`) and vLLM
(`models/transformers/utils.py`, `init_on_device_without_buffers`) keep the original store
method, install a replacement on the class for the length of a `with` block, and put the
original back:

    old = nn.Module.register_parameter
    def replacement(module, name, param):
        old(module, name, param)
        if param is not None:
            param_cls = type(module._parameters[name])
            module._parameters[name] = param_cls(module._parameters[name].to(device), **kwargs)
    try: nn.Module.register_parameter = replacement; yield
    finally: nn.Module.register_parameter = old

`attribute-store` reads a store function used as a value as "its calls are not read" (every
attribute of the tree's module classes open). This rule reads the value instead, when every
use of it is one the store table can account for:
- the alias is a local of one function, bound once (`old = nn.Module.register_parameter`,
  torch's class named as `nn.Module`, `torch.nn.Module` or `torch.nn.modules.module.Module`),
  bound nowhere else in that function's nested scopes, and each of its reads is either a call
  (`old(a, b, c)`: the original store, `a.register_parameter(b, c)`, read as such: the name
  `b`, the value `c`, into `a`) or the value put back on the class (`nn.Module.register_parameter
  = old`). Any other read (passed, returned, stored elsewhere, in a `partial`) keeps
  attribute-store's answer: the store function is used as a value.
- a *pure replacement*: a def of that function, bound once, whose every read is the value
  installed on the class (`nn.Module.register_parameter = replacement`), with exactly three
  positional parameters (`module, name, param`) that its body never rebinds. It then runs only
  as `x.register_parameter(n, p)` (torch's `Module.__setattr__` calls it for a `Parameter`
  value): its `old(module, name, param)` as a statement of its body is that triggering store,
  whose name and value the table already reads where it is made, so it adds nothing. Its other
  stores are read like any store function's (a table store of a value not known opens the
  attributes it may name, naming the replacement's line), but for one:
- the re-made parameter: after that statement, `module._parameters[name] = C(...)` where `C` is
  `type(module._parameters[name])` (directly, or through a local bound once to it, `type` not
  rebound in the module or the function). torch's `register_parameter` raises `TypeError` for a
  value that is not a `Parameter` (or None, which `type(None)(...)` refuses too), so the slot
  holds the triggering store's parameter and `C(...)` is an instance of its class, of an
  in-tree `Parameter` subclass too (vLLM's `BasevLLMParameter`): this store adds, for each value
  the other stores naming the attribute put there, an instance of the same class (made anew:
  the arguments its constructor was given are not known), and nothing for a value that cannot
  be a `Parameter` (a constant, a function, a class, an exact instance of an in-tree
  `nn.Module` class). When the scope registers a parameter registration hook
  (`register_module_parameter_registration_hook`: its result replaces the parameter before the
  store, with no check of its type), the re-made parameter is any value: the attribute stays open.
What is not read: the replacement's effect on calls (a call of `x.register_parameter(...)` runs
torch's method, never the replacement's code, in the call graph), and a table's alias
(`kwargs = module._parameters[name].__dict__; kwargs[k] = v` writes into the parameter's
`__dict__`, which attribute-store does not follow for any receiver).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import FrozenSet, Iterable

from ..index.scopes import FuncInfo, dotted_text, walk_local
from ..values import Value, VExt, VInst
from .open_values import module_only
from .rule import Rule

STORE = "register_parameter"
# How the tree names torch's module class (text): the class whose method is rebound.
CLASSES = frozenset({"nn.Module", "torch.nn.Module", "torch.nn.modules.module.Module"})
# Text whose presence in a scope file may replace a registered parameter by any value.
HOOK_TEXT = "parameter_registration_hook"


class ReboundStore(Rule):
    """`old = nn.Module.register_parameter` kept to be called as the original store and put
    back, around a replacement installed on the class: the alias's calls are stores as
    `a.register_parameter(b, c)`, the replacement's pass-through call is the triggering store,
    and its `module._parameters[name] = type(module._parameters[name])(...)` a new instance of
    the class of what the triggering store put there; any other use of the alias keeps
    attribute-store's answer (a store function used as a value)"""

    name = "rebound-store"
    where = ("semantics/rebound_store.py", "semantics/attribute_store.py")
    on_edges = False  # it reads stores for attribute-store, which names the hop


RULE = ReboundStore()


@dataclass(frozen=True)
class Rebinding:
    """What one file's rebinding reads, by node id: the alias loads read (`old = nn.Module.
    register_parameter`), the pure replacements' pass-through calls (the triggering store),
    the other calls of an alias (stores), and the re-made parameters' table stores."""

    read: FrozenSet[int] = frozenset()
    triggering: FrozenSet[int] = frozenset()
    calls: FrozenSet[int] = frozenset()
    recopies: FrozenSet[int] = frozenset()


NONE = Rebinding()


def read(fns: Iterable[FuncInfo]) -> Rebinding:
    """The rebindings the functions of one file make (their aliases that are read, by id)."""
    read_ids: set[int] = set()
    triggering: set[int] = set()
    calls: set[int] = set()
    recopies: set[int] = set()
    for fn in fns:
        if not isinstance(fn.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue  # an alias in module code (or a lambda) is a global others may use
        for node in walk_local(fn.node):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                    and _is_slot(node.value):
                found = _alias(fn, node.targets[0].id, node)
                if found is not None:
                    read_ids.add(id(node.value))
                    triggering |= found[0]
                    calls |= found[1]
                    recopies |= found[2]
    if not read_ids:
        return NONE
    return Rebinding(frozenset(read_ids), frozenset(triggering), frozenset(calls), frozenset(recopies))


def copies(cm, stored: Iterable[Value]) -> set[Value]:
    """What the re-made parameter can be, given what the stores naming the attribute put
    there: an instance of the class of each value that may be a `Parameter`, made anew."""
    out: set[Value] = set()
    for v in stored:
        if isinstance(v, VInst):
            if v.exact and not cm.unknown_bases(v.qual) and module_only(cm, cm.mro(v.qual)):
                continue  # an nn.Module, never a tensor: register_parameter raised
            out.add(VInst(v.qual, v.exact) if v.init else v)
        elif isinstance(v, VExt):
            out.add(v)  # an outside instance: the copy's class is the one it has
        # a constant, a function, a class, a module: not a Parameter, torch raised
    return out


def hooked(texts) -> str:
    """A scope file that may register a parameter registration hook, if any (its display)."""
    for path, text in texts:
        if HOOK_TEXT in text:
            return str(path)
    return ""


def _is_slot(node: ast.AST) -> bool:
    """`nn.Module.register_parameter` (the method on torch's class, read or assigned)."""
    return isinstance(node, ast.Attribute) and node.attr == STORE and dotted_text(node.value) in CLASSES


def _binders(root: ast.AST, name: str) -> list[ast.AST]:
    """Every node under `root` that binds or declares `name` (any scope under it)."""
    out = []
    for n in ast.walk(root):
        if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load):
            out.append(n)
        elif isinstance(n, ast.arg) and n.arg == name:
            out.append(n)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == name:
            out.append(n)
        elif isinstance(n, ast.alias) and (n.asname or n.name.split(".")[0]) == name:
            out.append(n)
        elif isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names:
            out.append(n)
        elif isinstance(n, ast.ExceptHandler) and n.name == name:
            out.append(n)
        elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name == name:
            out.append(n)
        elif isinstance(n, ast.MatchMapping) and n.rest == name:
            out.append(n)
    return out


def _alias(fn: FuncInfo, old: str, assign: ast.Assign):
    """(triggering calls, other calls, re-made parameters) for the alias `old` bound by
    `assign` in `fn`, or None when one of its uses is not read here."""
    root = fn.node
    if _binders(root, old) != [assign.targets[0]] or old in fn.param_names():
        return None
    parents = {id(c): p for p in ast.walk(root) for c in ast.iter_child_nodes(p)}
    alias_calls: list[ast.Call] = []
    for n in ast.walk(root):
        if isinstance(n, ast.Name) and n.id == old and isinstance(n.ctx, ast.Load):
            p = parents.get(id(n))
            if isinstance(p, ast.Call) and p.func is n:
                alias_calls.append(p)
            elif not (isinstance(p, ast.Assign) and p.value is n and all(_is_slot(t) for t in p.targets)):
                return None  # passed, returned, stored elsewhere: attribute-store keeps its answer
    triggering: set[int] = set()
    recopies: set[int] = set()
    for stmt in walk_local(root):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            passed = _pure_replacement(fn, root, stmt, old, parents)
            if passed is not None:
                triggering.add(id(passed))
                recopies |= _recopies(fn, stmt, passed)
    calls = {id(c) for c in alias_calls if id(c) not in triggering}
    return frozenset(triggering), frozenset(calls), frozenset(recopies)


def _pure_replacement(fn: FuncInfo, root: ast.AST, r: ast.AST, old: str, parents: dict):
    """The pass-through call `old(module, name, param)`, a statement of `r`'s body, when `r`
    is a pure replacement: bound once, only ever installed on the class, three positional
    parameters its body never rebinds. None otherwise."""
    if _binders(root, r.name) != [r]:
        return None
    for n in ast.walk(root):
        if isinstance(n, ast.Name) and n.id == r.name:
            p = parents.get(id(n))
            if not (isinstance(p, ast.Assign) and p.value is n and p.targets and all(_is_slot(t) for t in p.targets)):
                return None  # called or passed as itself: its parameters may be anything
    a = r.args
    params = [x.arg for x in a.posonlyargs + a.args]
    if len(params) != 3 or a.vararg or a.kwarg or a.kwonlyargs or r.decorator_list:
        return None
    for name in params:
        if _binders(r, name) != [x for x in a.posonlyargs + a.args if x.arg == name]:
            return None
    for stmt in r.body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and _passes(stmt.value, old, params):
            return stmt.value
    return None


def _passes(call: ast.Call, old: str, params: list[str]) -> bool:
    return isinstance(call.func, ast.Name) and call.func.id == old and not call.keywords \
        and len(call.args) == 3 and all(isinstance(a, ast.Name) and a.id == p for a, p in zip(call.args, params))


def _recopies(fn: FuncInfo, r: ast.AST, passed: ast.Call) -> set[int]:
    """The assignments `module._parameters[name] = type(module._parameters[name])(...)` of `r`
    after its pass-through statement (by id)."""
    module, name = passed.args[0].id, passed.args[1].id
    if _binders(fn.node, "type") or "type" in fn.module.globals:
        return set()  # `type` is not the builtin here
    after = passed.end_lineno or passed.lineno
    classes: set[str] = set()  # locals bound once, after the pass-through, to type(the slot)
    for n in walk_local(r):
        if isinstance(n, ast.Assign) and n.lineno > after and len(n.targets) == 1 \
                and isinstance(n.targets[0], ast.Name) and _type_of_slot(n.value, module, name) \
                and _binders(r, n.targets[0].id) == [n.targets[0]]:
            classes.add(n.targets[0].id)
    out = set()
    for n in walk_local(r):
        if isinstance(n, ast.Assign) and n.lineno > after and len(n.targets) == 1 \
                and _slot(n.targets[0], module, name) and isinstance(n.value, ast.Call):
            f = n.value.func
            if _type_of_slot(f, module, name) or (isinstance(f, ast.Name) and f.id in classes
                                                   and _bound_before(r, f.id, n.lineno)):
                out.add(id(n))
    return out


def _bound_before(r: ast.AST, local: str, line: int) -> bool:
    return all(b.lineno < line for b in _binders(r, local))


def _slot(node: ast.AST, module: str, name: str) -> bool:
    """`module._parameters[name]` (the replacement's own parameters)."""
    return isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) \
        and node.value.attr == "_parameters" and isinstance(node.value.value, ast.Name) \
        and node.value.value.id == module and isinstance(node.slice, ast.Name) and node.slice.id == name


def _type_of_slot(node: ast.AST, module: str, name: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type" \
        and len(node.args) == 1 and not node.keywords and _slot(node.args[0], module, name)


__all__ = ["CLASSES", "RULE", "NONE", "Rebinding", "copies", "hooked", "read"]
