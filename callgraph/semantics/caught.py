"""`caught`: what `except E as e` binds is an instance of `E` or of any subclass of it.

Any call in the `try` body may raise any exception, so `e` may be an instance of every class
the clause names and of each of their subclasses: an in-tree class's own cone (known by its
base type), and for an outside class (`Exception`, `ValueError`, `torch.cuda.OutOfMemoryError`)
that class itself (whose methods are leaves) and every in-tree class deriving from it: for a
builtin exception, from it or from any builtin exception below it (`class Busy(RuntimeError)`
is caught by `except Exception`). Before, `e` was an outside value, and `except MyError as e:
e.report()` ran no `report`: a false "unreachable". A class the clause names but the analysis
does not infer leaves `e` unknown, with its reason.
"""
from __future__ import annotations

import builtins
import weakref
from typing import FrozenSet

from ..values import Value, VClass, VExt, VInst, VSeq, VUnknown
from .rule import Rule


class Caught(Rule):
    """`except E as e` binds an instance of `E` or of any subclass: an in-tree class's cone, an
    outside class's own instance and every in-tree class deriving from it"""

    name = "caught"
    where = ("semantics/caught.py", "index/scopes.py", "infer/evaluator.py")
    on_edges = False  # it makes values; a call on `e` is named by its own rule


RULE = Caught()

# project -> outside class name -> the in-tree classes deriving from it directly
_BELOW: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def values(ev, classes: FrozenSet[Value], depth: int = 0) -> FrozenSet[Value]:
    """The exceptions a clause naming `classes` (a class, a tuple of them) may bind."""
    out: set[Value] = set()
    for v in classes:
        if v.__class__ is VClass:
            out.add(VInst(v.qual, exact=False))
        elif v.__class__ is VSeq and depth < 2:  # `except (A, B) as e`
            out |= values(ev, v.elems, depth + 1)
        elif v.__class__ is VExt:
            out.add(VExt(v.name + "()"))
            out |= {VInst(k, exact=False) for k in outside_subclasses(ev, v.name)}
        elif v.__class__ is VUnknown:
            out.add(VUnknown(f"an exception of a class not inferred ({v.why})"))
    return frozenset(out) or frozenset({VUnknown("an exception of a class not inferred")})


def outside_subclasses(ev, name: str) -> tuple[str, ...]:
    """The in-tree classes with an outside base that is `name` or (for a builtin exception) a
    builtin class below it; their own subclasses are their cones'. Memoised per project."""
    table = _BELOW.setdefault(ev.p, {})
    found = table.get(name)
    if found is not None:
        return found
    table[name] = ()  # while in progress
    short = name.rpartition(".")[2]
    base = getattr(builtins, short, None) if name.startswith("builtins.") else None
    if isinstance(base, type):
        below = {f"builtins.{n}" for n, t in vars(builtins).items() if isinstance(t, type) and issubclass(t, base)}
    else:
        below = {name}
    out = set()
    for header in sorted({b.rpartition(".")[2] for b in below}):
        for path in ev.p.subclass_candidates(header, None):
            mod = ev.p.module_of_path(path)
            if mod is None:
                continue
            for info in ev.p.classes_in(mod):
                if any(b.name in below for b in ev.classes.bases(info.qual) if b.__class__ is VExt):
                    out.add(info.qual)
    found = table[name] = tuple(sorted(out))
    return found
