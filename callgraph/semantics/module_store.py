"""`module-store`: a module global that code elsewhere sets by attribute holds what it sets.

`from pkg import m; m.Y = B()` (or `setattr(m, "Y", v)`, `vars(m)["Y"] = v`) in any function
of the tree rebinds `pkg.m`'s `Y` whenever it runs, as a function of `pkg.m` declaring
`global Y` does (`containers.remote_stores`): a read of `Y` (in `pkg.m`, or as `m.Y`, or
through `from pkg.m import Y`) may see `B()` beside the module's own bindings. A store counts
where its receiver may be the module: the module itself, or a value not inferred
(`sys.modules[name].Y = v`, a parameter). The read is unknown, naming the store, when such a
store puts there a value not known or not read off one expression, or lies in a file that
could not be read. The stores are those that spell the name, in the files whose text stores
an attribute so named on something other than `self` (`Project.files_storing`, one regex pass
over the texts: a name no text stores costs nothing; `self.name = v` is taken, by the
convention that names a method's instance `self`, as an instance's). A computed name
(`setattr(m, name, v)`) is not read here.
"""
from __future__ import annotations

import weakref
from typing import FrozenSet

from ..fixpoint import MISSING
from ..index.scopes import ModuleInfo
from ..values import Value, VModule, VUnknown
from .attribute_store import file_stores
from .protocol import Inference, Scope
from .rule import Rule


class ModuleStore(Rule):
    """a module global that code elsewhere sets by attribute (`m.Y = B()`, `setattr(m, "Y",
    v)`): every such store's value counts at each read of `Y`, beside the module's own
    bindings; unknown when one stores a value not known"""

    name = "module-store"
    where = ("semantics/module_store.py", "infer/evaluator.py", "index/project.py")


RULE = ModuleStore()

# Project -> path -> the file's stores (syntax only: shared by every query on the project).
_FILES: "weakref.WeakKeyDictionary[object, dict]" = weakref.WeakKeyDictionary()


def values(ev: Inference, mod: ModuleInfo, name: str, tags: set[str]) -> FrozenSet[Value]:
    """What stores elsewhere in the tree put into `mod`'s global `name` (empty: none can)."""
    if not ev.p.files_storing(name):  # no text in the scope stores an attribute so named
        return frozenset()
    memo = ev.stores_memo
    key = ("module-store", mod.name, name)
    found = ev.solver.read(memo, key)
    if found is MISSING:  # read in progress: unknown; kept once what it read has settled
        reading = frozenset({VUnknown(f"{mod.name}.{name} is read while the stores into it are read")})
        found = ev.solver.compute(memo, key, lambda: _values(ev, mod, name), reading, conservative=True)
    if found:
        tags.add(RULE.name)
    return found


def _values(ev: Inference, mod: ModuleInfo, name: str) -> FrozenSet[Value]:
    out: set[Value] = set()
    parsed = _FILES.setdefault(ev.p, {})
    for path in ev.p.files_storing(name):
        if path not in parsed:
            parsed[path] = file_stores(ev, path)
        if parsed[path] is None:
            return frozenset({VUnknown(f"{mod.name}.{name} may be set in {ev.p.display(path)}, which could not be read")})
        for store in parsed[path]:
            if store.name != name:
                continue
            scope = Scope(store.fn.module, store.fn, None)
            if store.receiver is not None and not _may_be_module(ev, store, scope, mod):
                continue
            where = f"{store.fn.module.display}:{store.node.lineno}"
            if store.value is None:
                return frozenset({VUnknown(f"{mod.name}.{name} may be set at {where} to a value not read")})
            stored = ev.eval(store.value, scope, set())
            if any(isinstance(v, VUnknown) for v in stored):
                return frozenset({VUnknown(f"{mod.name}.{name} may be set at {where} to a value not known")})
            out |= stored
    return frozenset(out)


def _may_be_module(ev: Inference, store, scope: Scope, mod: ModuleInfo) -> bool:
    """Whether the object the store writes into may be the module `mod` (a value not inferred may)."""
    if store.self_class is not None:
        return False  # a method's `self`: an instance, never a module
    return any(isinstance(v, VUnknown) or (isinstance(v, VModule) and v.name == mod.name)
               for v in ev.eval(store.receiver, scope, set()))
