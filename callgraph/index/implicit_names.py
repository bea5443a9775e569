"""The methods a piece of syntax may run without naming them in a call, by name.

`a + b` runs `__add__` / `__radd__`, `for x in xs` runs `__iter__` / `__next__`, `obj.attr`
may run a property's getter (a decorated def named `attr`), `__getattr__`,
`__getattribute__` or a descriptor's `__get__`; `len(x)` runs `__len__`. The name-level bound
(`relevance.py`) counts these as calls of those names: a def whose only way to the target is
such a hidden call is one that may lead there. Without them, `obj.touch()` on an object not
inferred, where `touch` only reads a property whose getter reaches the target, was ruled out:
a false "unreachable".

`ACCESSOR` prefixes an attribute's name: `.attr` is "what reading, storing or deleting `attr`
may run", which the summary gives to decorated defs and to class attributes set by a call
(`x = property(f)`, `x = cached_property(f)`, `x = D(...)`). Finalizers (`__del__`, run when
the collector decides) are not counted.
"""
from __future__ import annotations

import ast

ACCESSOR = "."
ANY_ACCESSOR = ".*"  # any accessor: a read by a name not known (`getattr(obj, name)`)
_READ = ("__getattr__", "__getattribute__", "__get__")
_STORE = ("__setattr__", "__set__")
_DELETE = ("__delattr__", "__delete__")
_ITER = ("__iter__", "__next__", "__getitem__", "__len__", "__aiter__", "__anext__")
_TRUTH = ("__bool__", "__len__")
_TEXT = ("__format__", "__str__", "__repr__")
_HASH = ("__hash__", "__eq__")

_BINARY = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.MatMult: "matmul", ast.Div: "truediv",
           ast.FloorDiv: "floordiv", ast.Mod: "mod", ast.Pow: "pow", ast.LShift: "lshift", ast.RShift: "rshift",
           ast.BitOr: "or", ast.BitXor: "xor", ast.BitAnd: "and"}
_UNARY = {ast.USub: ("__neg__",), ast.UAdd: ("__pos__",), ast.Invert: ("__invert__",), ast.Not: _TRUTH}
_COMPARE = {ast.Eq: ("__eq__",), ast.NotEq: ("__ne__", "__eq__"), ast.Lt: ("__lt__", "__gt__"),
            ast.LtE: ("__le__", "__ge__"), ast.Gt: ("__gt__", "__lt__"), ast.GtE: ("__ge__", "__le__"),
            ast.In: ("__contains__",) + _ITER, ast.NotIn: ("__contains__",) + _ITER}

# Outside functions and methods that call an argument's dunders (`math.floor(x)`, `copy.deepcopy`,
# `pickle.dumps`, `stack.enter_context(cm)`), by the function's name, called as a method of their
# module or imported by name (`from copy import deepcopy`).
_REDUCE = ("__reduce_ex__", "__reduce__", "__getstate__", "__setstate__")
_OUTSIDE: dict[str, tuple[str, ...]] = {
    "floor": ("__floor__",), "ceil": ("__ceil__",), "trunc": ("__trunc__",), "copy": ("__copy__",) + _REDUCE,
    "deepcopy": ("__deepcopy__",) + _REDUCE, "dumps": _REDUCE, "dump": _REDUCE,
    "enter_context": ("__enter__", "__exit__"), "enter_async_context": ("__aenter__", "__aexit__"),
}

# Builtins that call an argument's dunders (by the builtin's name, whatever it is bound to).
BUILTINS: dict[str, tuple[str, ...]] = {
    "len": ("__len__",), "str": _TEXT, "repr": ("__repr__",), "format": _TEXT, "print": _TEXT,
    "ascii": ("__repr__",), "hash": ("__hash__",), "iter": _ITER, "next": ("__next__", "__anext__"),
    "bool": _TRUTH, "int": ("__int__", "__index__", "__trunc__"), "float": ("__float__", "__index__"),
    "complex": ("__complex__", "__float__", "__index__"), "bytes": ("__bytes__", "__index__") + _ITER,
    "abs": ("__abs__",), "round": ("__round__",), "divmod": ("__divmod__", "__rdivmod__"),
    "pow": ("__pow__", "__rpow__"), "isinstance": ("__instancecheck__",), "issubclass": ("__subclasscheck__",),
    "dir": ("__dir__",), "reversed": ("__reversed__",) + _ITER, "getattr": _READ, "hasattr": _READ,
    "setattr": _STORE, "delattr": _DELETE, "list": _ITER, "tuple": _ITER, "set": _ITER + _HASH,
    "frozenset": _ITER + _HASH, "dict": _ITER + _HASH + ("keys",), "sorted": _ITER + ("__lt__", "__gt__"),
    "min": _ITER + ("__lt__", "__gt__"), "max": _ITER + ("__lt__", "__gt__"), "sum": _ITER + ("__add__", "__radd__"),
    "any": _ITER + _TRUTH, "all": _ITER + _TRUTH, "enumerate": _ITER, "zip": _ITER, "map": _ITER,
    "filter": _ITER + _TRUTH, "aiter": _ITER, "anext": ("__anext__",), "vars": (), "callable": (),
    **_OUTSIDE,
}
# Methods of builtin types that hash or format what they are given (`d.get(k)`, `"{}".format(x)`,
# `logger.info("%s", x)`), by the method's name.
METHODS: dict[str, tuple[str, ...]] = {
    **{m: _HASH for m in ("get", "pop", "setdefault", "add", "discard", "remove", "__contains__", "index", "count")},
    **{m: _TEXT for m in ("format", "format_map", "debug", "info", "warning", "warn", "error", "exception",
                          "critical", "log", "write")},
    "join": _ITER + _TEXT, "update": _ITER + _HASH + ("keys",), "extend": _ITER, "fromkeys": _ITER + _HASH,
    **_OUTSIDE,
}


def attribute(node: ast.Attribute) -> tuple[str, ...]:
    """What a read, store or deletion of `node.attr` may run: the accessor of that name, and the
    hooks of the kind (a method call `x.m()` reads `m` first)."""
    hooks = _STORE if isinstance(node.ctx, ast.Store) else _DELETE if isinstance(node.ctx, ast.Del) else _READ
    return (ACCESSOR + node.attr,) + hooks


def of_node(node: ast.AST) -> tuple[str, ...]:
    """The dunder names `node` itself may run (not its children's); () for most nodes."""
    cls = node.__class__
    if cls is ast.BinOp:
        name = _BINARY.get(node.op.__class__)
        extra = _TEXT if node.op.__class__ is ast.Mod else ()
        return (f"__{name}__", f"__r{name}__") + extra if name else ()
    if cls is ast.AugAssign:
        name = _BINARY.get(node.op.__class__)
        return (f"__i{name}__", f"__{name}__", f"__r{name}__") if name else ()
    if cls is ast.UnaryOp:
        return _UNARY.get(node.op.__class__, ())
    if cls is ast.Compare:
        out: tuple = ()
        for op in node.ops:
            out += _COMPARE.get(op.__class__, ())
        return out
    if cls in (ast.BoolOp, ast.If, ast.While, ast.IfExp, ast.Assert):
        return _TRUTH
    if cls is ast.Subscript:
        if isinstance(node.ctx, ast.Store):
            return ("__setitem__",) + _HASH
        if isinstance(node.ctx, ast.Del):
            return ("__delitem__",) + _HASH
        return ("__getitem__", "__class_getitem__", "__missing__", "__index__") + _HASH
    if cls in (ast.For, ast.AsyncFor, ast.YieldFrom):
        return _ITER
    if cls is ast.comprehension:
        return _ITER + (_TRUTH if node.ifs else ())
    if cls in (ast.With, ast.AsyncWith):
        return ("__enter__", "__exit__", "__aenter__", "__aexit__")
    if cls is ast.Await:
        return ("__await__",)
    if cls in (ast.JoinedStr, ast.FormattedValue):
        return _TEXT
    if cls in (ast.Dict, ast.Set, ast.DictComp, ast.SetComp):
        return _HASH + (("keys", "__getitem__") if cls is ast.Dict and None in node.keys else ())
    if cls is ast.Starred or (cls in (ast.Tuple, ast.List) and isinstance(node.ctx, ast.Store)):
        return _ITER
    if cls is ast.ClassDef:  # a class statement runs its bases' hooks and a metaclass
        return ("__init_subclass__", "__set_name__", "__prepare__", "__new__", "__init__") \
            if node.bases or node.keywords else ("__set_name__",)
    return ()


def of_call(node: ast.Call) -> tuple[str, ...]:
    """The dunders a call runs beside its callee: a builtin's (by its name), a builtin method's
    (by the method's name), `**m`'s `keys` and `__getitem__`."""
    f = node.func
    out: tuple = ()
    if isinstance(f, ast.Name):
        out = BUILTINS.get(f.id, ())
    elif isinstance(f, ast.Attribute):
        out = METHODS.get(f.attr, ())
    if any(k.arg is None for k in node.keywords):
        out += ("keys", "__getitem__")
    return out


# What an implicit call of each kind (explore.py's) may run when its receiver is not inferred,
# by name: its synthetic call's attribute is the accessor's name (getter...) or the dunder's
# (item, operator); the hooks run whatever the name.
_BY_KIND = {"hook": ("__getattr__", "__getattribute__"), "get": ("__get__",), "set": ("__set__",),
            "delete": ("__delete__",), "setattr": ("__setattr__",), "delattr": ("__delattr__",)}


def of_implicit(kind: str, attr: str, any_name: str) -> tuple[str, ...]:
    """The names an implicit call of `kind` on a receiver not inferred may run (`attr`: its
    synthetic call's attribute; `any_name`: the attribute of a builtin read by a name not
    known)."""
    if kind in ("getter", "setter", "deleter"):
        return (ACCESSOR + attr,)
    if kind == "getattr":
        return ("__getattr__", "__getattribute__", ANY_ACCESSOR if attr == any_name else ACCESSOR + attr)
    if kind in _BY_KIND:
        return _BY_KIND[kind]
    return (attr,)  # item, operator, a loop's or a with's: the dunder itself
