"""`enum-member`: a class-body assignment of an `enum.Enum` subclass is a member, an instance of
that class, not the literal written there.

SGLang picks backends with enums whose members carry methods: `resolve_mxfp8_dense_gemm_backend()`
returns `Mxfp8DenseGemmBackend.FLASHINFER_TRTLLM`, and `Fp8LinearMethod.apply` calls
`self.mxfp8_dense_backend.is_gfx95()`. Read as the literal `"flashinfer_trtllm"`, the receiver
was "a value the tree only sets to None or a literal" and every such call a blocker of the
negatives through a linear layer. At run time `Cls.NAME` is the member, an instance of `Cls`
(`type(Cls.NAME) is Cls`), whose methods are the class's.

`Cls.NAME` (or `member.NAME`) is the member when all of this holds, else it reads as before:
- the class defining `NAME` has `enum.Enum` (or `IntEnum`, `StrEnum`, `Flag`, `IntFlag`,
  `ReprEnum`, or a class of those names from another package, `strenum.StrEnum`) among the
  outside bases of its MRO, and no class decorator but `enum.unique`
  (a decorator may replace the class);
- `NAME` does not start with `_` (dunders, `_sunder_` names and private names are not members),
  is bound in that class body only by plain assignments (`NAME = v` or `NAME: T = v`, no
  unpacking, no `def`/`class`/import of that name), and each value is written as data: a
  constant, a tuple or list of such, a unary or binary operation on such, or `auto()`; a value
  that may be a function or descriptor (not a member) keeps the literal reading.
The member is `VInst(Cls)`, exact, told apart from the other members by its name (in `init`, under
a key no parameter can have), so a table keyed by members keeps its keys apart. Its `name` is that
string; its `value` is the constant written, when no class of its MRO defines `__new__`,
`__init__` or `_generate_next_value_` (which choose another value) and the value is a plain
constant; otherwise `value` stays an outside attribute, any value.
Not modelled (read as before): members made by the functional API (`Enum("E", "A B")`), by
`enum.member(...)`, aliases (`B = A`), `Cls(value)` / `Cls["NAME"]` lookups (which the
constructor rule reads as an instance of `Cls`, with no name), and iteration over the class.
"""
from __future__ import annotations

import ast
from typing import FrozenSet, Optional

from ..values import Value, VConst, VInst
from .protocol import Scope
from .rule import Rule

# Outside bases whose class bodies make members, by their last name: the standard library's
# (`enum.Enum`...) and the packages that copy it (`strenum.StrEnum`, `aenum.Enum`).
ENUM_BASES = frozenset({"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag", "ReprEnum"})
INERT_DECORATORS = frozenset({"unique", "enum.unique"})
# The key a member's name is kept under in `VInst.init`: no parameter can be called this.
MEMBER_KEY = "<enum member>"
_VALUE_CHOOSERS = ("__new__", "__init__", "_generate_next_value_")


class EnumMember(Rule):
    """`Cls.NAME` of an `enum.Enum` subclass (a class-body assignment of data, the name not
    starting with `_`) is the member, an instance of `Cls` whose methods run on it, not the
    literal written; its `name` is that string and its `value` the constant written"""

    name = "enum-member"
    where = ("semantics/enum_members.py", "infer/classes.py")


def member(cm, info, attr: str, tags: set[str]) -> Optional[FrozenSet[Value]]:
    """The member `info.qual.attr` (`info`: the class whose body binds `attr`), or None when
    that binding is not a member by the rules above."""
    if attr.startswith("_") or not is_enum(cm, info):
        return None
    bindings = info.attrs.get(attr, ())
    assigns = [b for b in bindings if b.kind == "assign"]
    if not assigns or any(b.kind not in ("assign", "annot") for b in bindings):
        return None
    if any(b.path or b.expr is None or not _data(b.expr) for b in assigns):
        return None
    tags.add(RULE.name)
    return frozenset({VInst(info.qual, True, ((MEMBER_KEY, frozenset({VConst(attr)})),))})


def is_enum(cm, info) -> bool:
    if any(not _inert(d) for d in info.node.decorator_list):
        return False
    return any(b.rsplit(".", 1)[-1] in ENUM_BASES for b in cm.external_bases(info.qual))


def member_name(v: Value) -> Optional[str]:
    """The name of the member `v` is, or None when `v` is not one made here."""
    if isinstance(v, VInst) and v.exact:
        for key, vals in v.init:
            if key == MEMBER_KEY:
                names = [c.value for c in vals if isinstance(c, VConst) and isinstance(c.value, str)]
                return names[0] if len(names) == 1 else None
    return None


def attribute(cm, v: VInst, attr: str, tags: set[str]) -> Optional[FrozenSet[Value]]:
    """`member.name` / `member.value` of a member made here, or None (read as before)."""
    name = member_name(v)
    if name is None:
        return None
    if attr in ("name", "_name_"):
        tags.add(RULE.name)
        return frozenset({VConst(name)})
    if attr in ("value", "_value_"):
        if any(m in info.methods for k in cm.mro(v.qual) if (info := cm.info(k)) is not None
               for m in _VALUE_CHOOSERS):
            return None
        info = cm.info(v.qual)
        assigns = [b for b in (info.attrs.get(name, ()) if info is not None else ()) if b.kind == "assign"]
        if assigns and all(isinstance(b.expr, ast.Constant) for b in assigns):
            tags.add(RULE.name)
            scope = Scope(info.module, cls=info)  # read as the evaluator reads any constant
            return frozenset(v for b in assigns for v in cm.ev.eval(b.expr, scope, tags))
    return None


def _data(node: ast.AST) -> bool:
    """Whether `node` is written as data: a member's value, never a function or descriptor."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_data(e) for e in node.elts)
    if isinstance(node, ast.UnaryOp):
        return _data(node.operand)
    if isinstance(node, ast.BinOp):
        return _data(node.left) and _data(node.right)
    if isinstance(node, ast.Call) and not node.args and not node.keywords:
        f = node.func
        return (isinstance(f, ast.Name) and f.id == "auto") or (
            isinstance(f, ast.Attribute) and f.attr == "auto" and isinstance(f.value, ast.Name) and f.value.id == "enum")
    return False


def _inert(dec: ast.AST) -> bool:
    return isinstance(dec, (ast.Name, ast.Attribute)) and ast.unparse(dec) in INERT_DECORATORS


RULE = EnumMember()
