"""`reach --arg NAME=TYPE`: what the entry is called with, stated by the user.

An entry's parameters have no call site that binds them: each holds its default and what its
annotation names, and an unannotated one (`def forward(self, x, position_ids)`) may be anything,
so `position_ids[..., None].float()` stays a blocker however the tree's own callers call it.
`--arg position_ids=torch.LongTensor` binds the parameter to what that type names, read as an
annotation in the entry's module (`torch.Tensor`, `Optional[Cache]`, an in-tree class: any
subclass of it, as for every annotation); a dotted name the module does not import is read as
the outside class it spells. The answer then holds under that premise, and says so
(`Proof.assumptions`, printed as "assuming the entry's x: torch.Tensor").
"""
from __future__ import annotations

import ast
from typing import FrozenSet

from .errors import BindingError
from .index.scopes import FuncInfo, first_param
from .semantics import open_values
from .semantics.binding import param_names
from .semantics.protocol import Scope
from .values import Value, VInst, VUnknown


def typed(ev, fn: FuncInfo, args: dict[str, str]) -> dict[str, FrozenSet[Value]]:
    """Parameter name -> the values its type names; a BindingError (one line, exit 3) for a name
    the entry does not have, its `self`, or a type that cannot be read."""
    out: dict[str, FrozenSet[Value]] = {}
    names = param_names(fn)
    for name, text in args.items():
        if name not in names:
            raise BindingError(f"--arg {name}={text}: {fn.qual} has no parameter {name!r} "
                               f"(its parameters: {', '.join(names) or 'none'})")
        if fn.cls is not None and fn.kind != "staticmethod" and name == first_param(fn):
            raise BindingError(f"--arg {name}={text}: {name!r} is the method's own instance, "
                               f"an exact {fn.cls.qual}")
        try:
            node = ast.parse(text.strip(), mode="eval").body
        except SyntaxError:
            raise BindingError(f"--arg {name}={text}: {text!r} is not a type expression") from None
        vals = ev.annotation(node, Scope(fn.module), set())
        if all(isinstance(v, VUnknown) for v in vals) and _dotted(node):
            vals = _by_name(ev, text.strip())
        if all(isinstance(v, VUnknown) for v in vals) and not _open_by_design(vals):
            raise BindingError(f"--arg {name}={text}: {text!r} names nothing {fn.module.name} can see "
                               f"(write the type as that module does, or its dotted name)")
        out[name] = vals
    return out


def _by_name(ev, dotted: str) -> FrozenSet[Value]:
    """A dotted name the entry's module does not import: an in-tree class by its qualified name
    (any subclass of it, as an annotation names), else the outside class it spells."""
    module, _, _ = dotted.rpartition(".")
    if ev.p.locate(module) is not None and ev.p.module(module) is not None and dotted in ev.p.classes:
        return frozenset({VInst(dotted, exact=False)})
    return frozenset({open_values.annotated(dotted)})


def _dotted(node: ast.AST) -> bool:
    """`torch.LongTensor`: a dotted name (a bare name the module does not have is a typo)."""
    if not isinstance(node, ast.Attribute):
        return False
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _open_by_design(vals) -> bool:
    """An outside base (`nn.Module`): read, and what it names is any subclass (unknown)."""
    return any("any subclass may be there" in v.why or "is a Protocol" in v.why for v in vals)
