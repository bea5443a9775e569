"""`mro`: a method or class attribute not defined on the class comes from a base, in the order of
Python's C3 linearisation (`type.mro()`).

Only in-tree classes take part (an external base adds no in-tree definitions; what the tree
does not define falls to the external base, `classes.py`). A hierarchy C3 rejects (Python
raises `TypeError` at class creation) is read depth-first instead, so every base is still
searched.
"""
from __future__ import annotations

from typing import Callable, Sequence

from .rule import Rule


class Mro(Rule):
    """a method inherited from a base class (C3 linearisation)"""

    name = "mro"
    where = ("semantics/mro.py", "infer/classes.py")


def linearise(qual: str, parents: Sequence[str], mro_of: Callable[[str], Sequence[str]]) -> tuple[str, ...]:
    """C3 of class `qual` with in-tree direct bases `parents`; `mro_of` gives a base's own."""
    seqs = [list(mro_of(p)) for p in parents] + [list(parents)]
    result = [qual]
    while True:
        seqs = [s for s in seqs if s]
        if not seqs:
            break
        for s in seqs:
            head = s[0]
            if not any(head in t[1:] for t in seqs):
                break
        else:  # inconsistent hierarchy: fall back to depth-first order
            for s in seqs:
                result.extend(x for x in s if x not in result)
            break
        result.append(head)
        for t in seqs:
            if t and t[0] == head:
                t.pop(0)
    return tuple(result)


def inherited(owner: str, qual: str, tags: set[str]) -> None:
    """A definition found on `owner` for a lookup on `qual`: the hop went through the MRO."""
    if owner != qual:
        tags.add(RULE.name)


RULE = Mro()
