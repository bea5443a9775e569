"""`protocol` (operators): `a + b`, `-a`, `a < b`, `k in obj`, `a += b`, truth tests and
f-strings run dunder methods of their operands' classes.

`a + b` calls `type(a).__add__(a, b)` and, where that is missing or gives NotImplemented,
`type(b).__radd__(b, a)`; `a += b` tries `__iadd__` first; `-a` / `+a` / `~a` call `__neg__` /
`__pos__` / `__invert__`; `a < b` calls `__lt__` and reflected `b.__gt__(a)`, `a == b` both
operands' `__eq__` (`!=`: `__ne__`, whose default calls `__eq__`); `k in obj` calls
`obj.__contains__(k)` (else it iterates `obj`); and a truth test (`if x:`, `while x:`, `not x`,
`x and y`, `x if c else y`, `assert x`, a comprehension's `if`) calls `__bool__`, else
`__len__`; `f"{x}"` calls `__format__`, whose default calls `__str__`, whose default calls
`__repr__` (`f"{x!r}"`: `__repr__`); `fmt % x` (unless `fmt` is a number) the `__str__` and
`__repr__` of `x`, of each item of a tuple display, each value of a dict display; a dict or set
display or comprehension (`{k: v}`, `{x}`), `k in obj` and a dict's or set's method (`d.get(k)`,
`d.pop`, `setdefault`, `s.add`, `discard`, `remove`) the keys' `__hash__`; `await x` x's
`__await__`. An in-tree class defining one runs code there: before, an operator's value was an
outside value and its method never an edge, so a target reached only through one was a false
"unreachable".

Each operand is asked about only for the dunders some file of the scope defines
(`Project.dunder_names`: transformers defines `__mul__`, `__eq__`, `__len__`..., few of the
others), so most tensor arithmetic costs nothing. Every method that may run is an edge named
`protocol` (the reflected one beside the direct one: which of them answers NotImplemented is
not followed), with the other operand bound. An operand not inferred blocks nothing, as for the
other implicit calls: each `a + b` of tensor code would be a blocker.
"""
from __future__ import annotations

import ast
from typing import FrozenSet

from ..values import Ctx, Value
from . import class_hierarchy
from .binding import bind
from .rule import CallArgs

# operator class -> (its method, the reflected one, the in-place one)
BINARY = {
    ast.Add: ("__add__", "__radd__", "__iadd__"), ast.Sub: ("__sub__", "__rsub__", "__isub__"),
    ast.Mult: ("__mul__", "__rmul__", "__imul__"), ast.MatMult: ("__matmul__", "__rmatmul__", "__imatmul__"),
    ast.Div: ("__truediv__", "__rtruediv__", "__itruediv__"),
    ast.FloorDiv: ("__floordiv__", "__rfloordiv__", "__ifloordiv__"),
    ast.Mod: ("__mod__", "__rmod__", "__imod__"), ast.Pow: ("__pow__", "__rpow__", "__ipow__"),
    ast.LShift: ("__lshift__", "__rlshift__", "__ilshift__"), ast.RShift: ("__rshift__", "__rrshift__", "__irshift__"),
    ast.BitAnd: ("__and__", "__rand__", "__iand__"), ast.BitOr: ("__or__", "__ror__", "__ior__"),
    ast.BitXor: ("__xor__", "__rxor__", "__ixor__"),
}
UNARY = {ast.USub: "__neg__", ast.UAdd: "__pos__", ast.Invert: "__invert__"}
# comparison class -> (the left operand's method, the right operand's)
COMPARE = {
    ast.Eq: (("__eq__",), ("__eq__",)), ast.NotEq: (("__ne__", "__eq__"), ("__ne__", "__eq__")),
    ast.Lt: (("__lt__",), ("__gt__",)), ast.LtE: (("__le__",), ("__ge__",)),
    ast.Gt: (("__gt__",), ("__lt__",)), ast.GtE: (("__ge__",), ("__le__",)),
}
TRUTH = ("__bool__", "__len__")
PERCENT = ("__str__", "__repr__")
# dict and set methods that hash their first argument (on any receiver: which one is a dict is
# not asked; a key that is no in-tree instance runs nothing)
HASHING = frozenset({"get", "pop", "setdefault", "add", "discard", "remove", "fromkeys", "__contains__"})  # what `fmt % x` may run on each value formatted (`%s`, `%r`)
CONTAINS = ("__contains__", "__iter__", "__getitem__")  # `in`: the container's, else iterating it
# an f-string's conversion (-1 none, `!s`, `!r`, `!a`) -> what formatting the value may run
FORMAT = {-1: ("__format__", "__str__", "__repr__"), 115: ("__str__", "__repr__"), 114: ("__repr__",),
          97: ("__repr__",)}


def calls(node: ast.AST, defined: FrozenSet[str]) -> list[tuple[str, ast.Call]]:
    """The synthetic calls `operand.__dunder__(other)` the operator or truth test `node` makes,
    placed at the operand, for the dunders among `defined` (the scope's): ("operator", call)."""
    out: list[tuple[ast.AST, str, ast.AST | None]] = []  # (receiver, method, argument)
    if isinstance(node, ast.BinOp):
        names = BINARY.get(node.op.__class__)
        if names:
            out += [(node.left, names[0], node.right), (node.right, names[1], node.left)]
        if isinstance(node.op, ast.Mod) and not _number(node.left):  # `"%s" % x` formats x
            out += [(item, m, None) for item in _formatted(node.right) for m in PERCENT]
    elif isinstance(node, ast.AugAssign):
        names = BINARY.get(node.op.__class__)
        if names:
            t = node.target  # read before it is stored (its Store context reads the same here)
            out += [(t, names[2], node.value), (t, names[0], node.value), (node.value, names[1], t)]
    elif isinstance(node, ast.UnaryOp):
        if isinstance(node.op, ast.Not):
            out += [(node.operand, m, None) for m in TRUTH]
        elif node.op.__class__ in UNARY:
            out.append((node.operand, UNARY[node.op.__class__], None))
    elif isinstance(node, ast.Compare):
        left = node.left
        for op, right in zip(node.ops, node.comparators):
            if isinstance(op, (ast.In, ast.NotIn)):
                out += [(right, m, left if m != "__iter__" else None) for m in CONTAINS]
                out.append((left, "__hash__", None))  # a set's or dict's membership hashes the key
            elif op.__class__ in COMPARE:
                mine, theirs = COMPARE[op.__class__]
                out += [(left, m, right) for m in mine] + [(right, m, left) for m in theirs]
            left = right
    elif isinstance(node, (ast.Dict, ast.Set, ast.DictComp, ast.SetComp)):  # `{k: v}`, `{x}` hash the keys
        out += [(k, "__hash__", None) for k in _keys(node)]
    elif isinstance(node, ast.Call):  # `d.get(k)`, `s.add(k)`: a dict's or set's method hashes the key
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in HASHING and node.args and _hashable(node.args[0]):
            out.append((node.args[0], "__hash__", None))
    elif isinstance(node, ast.Await):  # `await x` runs x's `__await__`
        out.append((node.value, "__await__", None))
    elif isinstance(node, ast.FormattedValue):  # f"{x}" formats x: `__format__`, whose default is str(x)
        out += [(node.value, m, None) for m in FORMAT.get(node.conversion, FORMAT[-1])]
    else:
        for test in tests(node):
            out += [(test, m, None) for m in TRUTH]
    made = []
    for receiver, method, arg in out:
        if method in defined:
            func = ast.copy_location(ast.Attribute(value=receiver, attr=method, ctx=ast.Load()), receiver)
            call = ast.Call(func=func, args=[arg] if arg is not None else [], keywords=[])
            made.append(("operator", ast.copy_location(call, receiver)))
    return made


def _keys(node: ast.AST) -> list[ast.AST]:
    """The keys a dict or set display (or comprehension) hashes, but constants'."""
    if isinstance(node, ast.Dict):
        keys = [k for k in node.keys if k is not None]  # `**m` merges keys hashed already
    elif isinstance(node, ast.Set):
        keys = [e for e in node.elts if not isinstance(e, ast.Starred)]
    else:
        keys = [node.key if isinstance(node, ast.DictComp) else node.elt]
    return [k for k in keys if _hashable(k)]


def _hashable(node: ast.AST) -> bool:
    """Whether a key may be an in-tree instance (not a literal, a display or an f-string)."""
    return not isinstance(node, (ast.Constant, ast.JoinedStr, ast.List, ast.Tuple, ast.Dict, ast.Set, ast.Starred))


def _number(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, (int, float, complex))


def _formatted(right: ast.AST) -> list[ast.AST]:
    """The values `fmt % right` formats: a tuple's items, a dict display's values, else the
    operand itself (a value known only at run time: a tuple's items are its own, not followed)."""
    if isinstance(right, ast.Tuple):
        return [e for e in right.elts if not isinstance(e, ast.Starred)]
    if isinstance(right, ast.Dict):
        return list(right.values)
    return [right]


def tests(node: ast.AST) -> list[ast.AST]:
    """The expressions a statement or expression `node` tests for truth (not `not x`'s: an
    operator's)."""
    if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
        return [node.test]
    if isinstance(node, ast.BoolOp):
        return node.values[:-1]  # the last operand's value is the result, untested
    if isinstance(node, ast.comprehension):
        return list(node.ifs)
    return []


def runs(ev, owners: FrozenSet[Value], call: ast.Call, scope) -> list[tuple[str, Ctx]]:
    """The in-tree methods the synthetic `call` (`calls`) runs on each of `owners`, each with
    its owner and the other operand bound."""
    found = class_hierarchy.cone_methods(ev, owners, call.func.attr)
    if not found:
        return []
    args = CallArgs([ev.eval(a, scope, set()) for a in call.args])
    return [(fn.qual, bind(fn, owner, args, None)) for fn, owner in found]
