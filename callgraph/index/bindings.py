"""How a name gets a value: the one record the scope tables (`scopes.py`) and the statement-order
walk (`flow.py`) share. It sits below both so that neither imports the other for it.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

# A subscript key that is not a constant (`x[k] = v`): the store may go to any entry.
ANY_KEY = ...


@dataclass(frozen=True, slots=True)
class Binding:
    """One way a name gets a value.

    kind: 'def' | 'class' | 'import' | 'assign' | 'annot' | 'iter' | 'with' | 'global' | 'caught'
    - def/class: `target` is the qualified name of the definition
    - import: `target` is the dotted name imported (module or module attribute)
    - assign: `expr` is the value, `path` the position inside tuple unpacking (() for plain)
    - iter: `expr` is the iterable (for-loops, comprehensions), `path` as for assign
    - annot: `expr` is a type annotation (`x: T` with or without a value)
    - caught: `expr` is the class (or tuple of classes) an `except ... as x` clause names
    - item: `expr` was put into the container `x`. path () for one element (`x.append(e)`),
      ("*",) for the elements of an iterable (`x.extend(es)`), ("**",) for a mapping's items
      (`x.update(m)`), ("=",) for a subscript store (`x[k] = e`, whose key is `keys[-1]`);
      `keys` is the chain of subscripts from `x` down to the store (`x["a"]["b"] = e`:
      ("a", "b"); `x["a"].append(e)`: ("a",)), each a constant or ANY_KEY
    """

    kind: str
    expr: ast.AST | None = None
    path: tuple = ()
    target: str = ""
    keys: tuple = ()
