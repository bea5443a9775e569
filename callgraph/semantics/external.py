"""`external`: calls out of the analysed roots, recorded by the name they are imported by.

The whole-tree export (PyCG's format, whose benchmark counts them) records every call into code
outside the roots as an edge to an import name, never to a guess at what that code does: an
external function or class by its dotted name (`torch.cat`, `builtins.len`); a method of an
instance of an external class by the class (`a = ext.Cls(); a.fun()` is `ext.Cls.fun`; a value
is taken for a class by PEP 8's CapWords, since the class itself is not read); the external
base's `__init__` when an in-tree class with no `__init__` of its own is constructed; a builtin
container's methods (`builtins.dict.items`; the stores `append`/`update` are data, modelled by
the container rule, not calls). The result of some other call (`torch.cat(...).view`) has no
import name and is no edge. A reach query records none of these: they cannot lead back into
the tree, and a callback handed to them is the `callback` rule's.
"""
from __future__ import annotations

from typing import Iterator

from ..model import Hop
from .rule import Dispatch, Rule


class External(Rule):
    """(whole-tree export only) a call into code outside the analysed roots, by its import name
    (`builtins.len`, `torch.cat`); a method of an instance of an external class by the class
    (`a = ext.Cls(); a.fun()` is `ext.Cls.fun`, a class by PEP 8's CapWords); the external
    base's `__init__` when an in-tree class without one is constructed; a builtin container's
    methods (`builtins.dict.items`; the stores `append`/`update` are modelled as data, not calls)"""

    name = "external"
    where = ("semantics/external.py", "explore.py", "infer/calls.py", "semantics/constructor.py",
             "semantics/containers.py")


RULE = External()


def callee_name(name: str) -> str | None:
    """The import name an external callee value is recorded by, or None when it has none: an
    external function or class (`torch.cat`), or a method of an instance of an external class
    (`ext.Cls().fun` is `ext.Cls.fun`; a class by PEP 8's CapWords, since the class itself is
    not read). The result of some other call (`torch.cat(...).view`) has no import name."""
    if name.startswith("<"):
        return None
    if "(" not in name:
        return name
    head, sep, attr = name.partition("().")
    if sep and "(" not in head and "(" not in attr and "." not in attr and head.rsplit(".", 1)[-1][:1].isupper():
        return f"{head}.{attr}"
    return None


def called(d: Dispatch, value_name: str) -> None:
    """An external value (`values.VExt`, by its name) is called: its import name, if it has one."""
    name = callee_name(value_name)
    if name is not None:
        d.externals.append(name)


def base_init(d: Dispatch, bases: list[str]) -> None:
    """An in-tree class with no `__init__` is constructed: its first external base's runs,
    when that base is named (not the result of a call, not an unknown)."""
    if bases and "(" not in bases[0] and not bases[0].startswith("<"):
        d.externals.append(f"{bases[0]}.__init__")


def builtin_method(d: Dispatch, kind: str, attr: str) -> None:
    """A method of a builtin container (`dict.items`) runs."""
    d.externals.append(f"builtins.{kind}.{attr}")


def hops(caller: str, names: list[str], site: str, text: str) -> Iterator[Hop]:
    """The export's edges of one call site into outside code."""
    for name in names:
        yield Hop(caller, name, site, text, RULE.name)
