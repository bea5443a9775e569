"""`computed-getattr`: `getattr(obj, name)` where the name is built from constant parts:
every attribute of the receiver's class that the name can spell.

SGLang's fused ops pick their platform forward with `getattr(self, f"forward_{platform_key}")`;
its multimodal helper picks `getattr(model, f"get_{modality_id}_feature")`. Both were
"getattr with a computed name", a blocker, even where the receiver's class is known.

An f-string or a `+` of strings evaluates to the strings it can spell when each formatted
part is a known string (at most `MAX_SPELLINGS` of them), else to a pattern (`StrPattern`:
its constant parts around wildcards, `forward_*`). `getattr` with a pattern is resolved only
when the receiver's attributes are all known: an instance of an in-tree class whose bases are
all read and are the tree's own, markers (`abc.ABC`...) or `torch.nn.Module` (whose own
attributes are `open_values.NN_MODULE_API`); no class of its MRO defines `__getattr__` or
`__getattribute__` nor is decorated (but for `@dataclass` and the like), and none of its
methods sets an attribute by a name the source does not spell (`setattr(self, name, v)`, `self.add_module(name, m)`, `self.__dict__.update(...)`).
Then the candidates are every method, class attribute and `self.x` assignment of the MRO
whose name matches; each is looked up as if named by a constant. A pattern with no constant
part, any other receiver, or a match against nothing known stays unresolved with its reason;
on an outside module or class (`getattr(vllm_ops, f"{act}_and_mul")`) the attribute is outside
code, as it is for a constant name.
A getattr whose name is any of more than `MAX_NAMES` strings (the keys of a config's
`to_dict()`, which hold every config class's `model_type` once `self.__class__` is read) is
unknown, not each name read on each receiver: hundreds of names on hundreds of config classes
made a million attribute reads of one call site (transformers' `get_text_config`).
As for every attribute, a value assigned to the instance from outside its class's code is not
seen.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import FrozenSet, Optional

from ..values import Value, VConst, VExt, VInst, VUnknown
from .open_values import NN_MODULE_API
from .rule import Call, Outcome, Rule

# Strings an f-string or a `+` spells before its varying parts become a wildcard.
MAX_SPELLINGS = 16
# Distinct constant names a getattr reads one by one; past it, the read is unknown.
MAX_NAMES = 32
COMPUTED = "getattr with a computed name (a registry? name the class with --bind)"
DYNAMIC_ATTRS = ("__getattr__", "__getattribute__")


def answers_any_name(cm, qual: str) -> bool:
    """Whether an in-tree class of `qual`'s MRO defines `__getattr__` / `__getattribute__`: its
    instances may answer a read no definition or store shows."""
    return any(name in info.methods for k in cm.mro(qual) if (info := cm.info(k)) is not None
               for name in DYNAMIC_ATTRS)

REGISTERING = ("add_module", "register_module", "register_buffer", "register_parameter")
_MODULE_PREFIXES = ("torch.nn.", "nn.")
# Class decorators that add no attribute a computed name could spell.
INERT_CLASS_DECORATORS = frozenset({"dataclass", "final", "total_ordering", "runtime_checkable", "unique"})
_READ = (ast.Name, ast.Attribute, ast.Constant)  # formatted parts whose values are read (others: any string)


@dataclass(frozen=True, slots=True)
class StrPattern:
    """A string known up to its wildcard parts: `parts` are constant strings and None (any
    string). Held as a `VConst`'s value: not a `str`, so nothing takes it for a name."""

    parts: tuple

    def glob(self) -> str:
        return "".join("*" if p is None else _escape(p) for p in self.parts)

    def constant(self) -> str:
        return "".join(p for p in self.parts if p is not None)

    def __str__(self) -> str:
        return "".join("*" if p is None else p for p in self.parts)


def _escape(text: str) -> str:
    return "".join(f"[{c}]" if c in "*?[" else c for c in text)


def spell(pieces: list[FrozenSet[Value] | str]) -> FrozenSet[Value]:
    """The strings (or the pattern) a concatenation of `pieces` spells: a piece is a constant
    string or the values of a formatted part."""
    words: list[tuple] = [()]
    for piece in pieces:
        if isinstance(piece, str):
            words = [w + (piece,) for w in words]
            continue
        texts = _texts(piece)
        if texts is None or len(words) * len(texts) > MAX_SPELLINGS:
            words = [w + (None,) for w in words]
        else:
            words = [w + t for w in words for t in texts]
    out = set()
    for w in words:
        parts = _joined(w)
        if all(p is not None for p in parts):
            out.add(VConst("".join(parts)))
        else:
            out.add(VConst(StrPattern(parts)))
    return frozenset(out)


def _texts(values: FrozenSet[Value]) -> Optional[list[tuple]]:
    """Each value as a tuple of parts, or None when one is not a known string or pattern."""
    out = []
    for v in values:
        if not isinstance(v, VConst):
            return None
        if isinstance(v.value, str):
            out.append((v.value,))
        elif isinstance(v.value, StrPattern):
            out.append(v.value.parts)
        else:
            return None
    return out or None


def _joined(parts: tuple) -> tuple:
    """Adjacent constants joined, adjacent wildcards merged."""
    out: list = []
    for p in parts:
        if p is None:
            if not out or out[-1] is not None:
                out.append(None)
        elif out and out[-1] is not None:
            out[-1] += p
        else:
            out.append(p)
    return tuple(out)


def joined_str(ev, node: ast.JoinedStr, scope, tags) -> FrozenSet[Value]:
    """`f"forward_{key}"`: the strings it spells, or its pattern."""
    pieces: list = []
    for part in node.values:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            pieces.append(part.value)
        elif isinstance(part, ast.FormattedValue) and part.conversion == -1 and part.format_spec is None \
                and isinstance(part.value, _READ):  # a name or attribute read, never a call inferred
            pieces.append(ev.eval(part.value, scope, set()))
        else:
            pieces.append(frozenset({VExt("builtins.str()")}))  # `{x!r}`, `{x:>4}`: any string
    return spell(pieces)


def added(left: FrozenSet[Value], right: FrozenSet[Value]) -> FrozenSet[Value] | None:
    """`left + right` where one side is only strings (or patterns): what it spells; None when
    neither side is a string."""
    if _texts(left) is None and _texts(right) is None:
        return None
    return spell([left, right])


class ComputedGetattr(Rule):
    """`getattr(obj, f"forward_{key}")` / `getattr(obj, "get_" + name)`: a name built from
    constant parts is each string it can spell, or a pattern (`forward_*`) matched against every
    attribute of the receiver's class (methods, class attributes, `self.x` assignments along the
    MRO), when those are all known (no `__getattr__`, no attribute set by a computed name, bases
    read and in-tree or `nn.Module`); otherwise the site stays unresolved"""

    name = "computed-getattr"
    where = ("semantics/computed_getattr.py", "infer/evaluator.py", "infer/sequences.py", "infer/calls.py")
    kinds = (VExt,)

    def applies(self, call: Call) -> bool:
        return call.value.name == "builtins.getattr" and len(call.args.pos) >= 2 and any(
            isinstance(a, VConst) and isinstance(a.value, StrPattern) for a in call.args.pos[1])

    def apply(self, call: Call) -> Outcome:
        ev, args, tags = call.ev, call.args, call.tags
        tags.add(self.name)
        return read(ev, args, tags)


def read(ev, args, tags: set[str]) -> FrozenSet[Value]:
    """What `getattr(obj, name[, default])` gives: each constant name read on the receivers,
    each pattern matched (`matching`), any other name unknown; more than MAX_NAMES constant
    names are unknown together."""
    out: set[Value] = set()
    names = [a for a in args.pos[1] if isinstance(a, VConst) and isinstance(a.value, str)]
    if len(names) > MAX_NAMES:
        out.add(VUnknown(f"getattr with any of {len(names)} names"))
        names = []
    for attr in names:
        out |= ev.attribute(args.pos[0], attr.value, tags)
    for attr in args.pos[1]:
        if isinstance(attr, VConst) and isinstance(attr.value, StrPattern):
            out |= matching(ev, args.pos[0], attr.value, tags)
        elif not (isinstance(attr, VConst) and isinstance(attr.value, str)):
            out.add(VUnknown(COMPUTED))
    if len(args.pos) >= 3:
        out |= args.pos[2]
    return frozenset(out)


RULE = ComputedGetattr()


def matching(ev, receivers: FrozenSet[Value], pattern: StrPattern, tags: set[str]) -> FrozenSet[Value]:
    """The attributes `pattern` can name on each receiver, or unknown with the reason."""
    if not pattern.constant():
        return frozenset({VUnknown(COMPUTED)})
    out: set[Value] = set()
    for v in receivers:
        if isinstance(v, VUnknown):
            out.add(v)
            continue
        if isinstance(v, VExt) and "(" not in v.name and not v.name.startswith("<"):
            # an outside module or class: any attribute is outside code, as for a constant name
            out.add(VExt(f"{v.name}.{pattern}"))
            continue
        names, why = known_attributes(ev.classes, v)
        if names is None:
            out.add(VUnknown(f"getattr with a name matching '{pattern}' on {why}"))
            continue
        glob = pattern.glob()
        found = sorted(n for n in names if fnmatchcase(n, glob))
        if not found:
            out.add(VUnknown(f"getattr with a name matching '{pattern}': no attribute of {v.qual.rsplit('.', 1)[-1]} "
                             "matches (set from outside?)"))
        for n in found:
            out |= ev.attribute(frozenset({v}), n, tags)
    return frozenset(out)


def known_attributes(cm, v: Value) -> tuple[frozenset | None, str]:
    """Every attribute name an instance `v` can have, or (None, why not) when they are not all
    known from its classes' code."""
    if not isinstance(v, VInst):
        return None, "a value whose attributes are not all known"
    short = v.qual.rsplit(".", 1)[-1]
    if not v.exact:
        return None, f"{short}, known only by a base type (a subclass may add attributes)"
    if cm.unknown_bases(v.qual):
        return None, f"{short}, whose bases are not all read"
    ext = cm.external_bases(v.qual)
    if any(not b.startswith(_MODULE_PREFIXES) for b in ext):
        return None, f"{short}, whose outside base {ext[0]} may have any attribute"
    names: set[str] = set(NN_MODULE_API) if ext else set(dir(object))
    for k in cm.mro(v.qual):
        info = cm.info(k)
        if info is None:
            return None, f"{short}, whose bases are not all read"
        if any(d in info.methods for d in DYNAMIC_ATTRS):
            return None, f"{short}, whose class defines __getattr__"
        if any(_decorator_name(d) not in INERT_CLASS_DECORATORS for d in info.node.decorator_list):
            return None, f"{short}, whose class {info.name} is decorated (the decorator may add attributes)"
        names.update(info.methods)
        names.update(info.attrs)
        names.update(info.self_attrs())
        for fn in info.methods.values():
            spelled = _registered_names(fn)
            if spelled is None:
                return None, f"{short}, which sets attributes by computed names ({fn.name})"
            names.update(spelled)
    return frozenset(names), ""


def _decorator_name(node: ast.AST) -> str:
    node = node.func if isinstance(node, ast.Call) else node
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def _registered_names(fn) -> set[str] | None:
    """Names `fn` registers on `self` by a call (`add_module("x", m)`); None when one is computed
    (`setattr(self, name, v)`, `self.add_module(name, m)`, `self.__dict__.update(...)`)."""
    out: set[str] = set()
    for call in fn.calls():
        f = call.func
        if isinstance(f, ast.Name) and f.id == "setattr":
            name = call.args[1] if len(call.args) > 1 else None
        elif isinstance(f, ast.Attribute) and f.attr in REGISTERING:
            name = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "name"), None)
        elif isinstance(f, ast.Attribute) and f.attr == "update" and isinstance(f.value, ast.Attribute) \
                and f.value.attr == "__dict__":
            return None
        else:
            continue
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            out.add(name.value)
        else:
            return None
    return out


__all__ = ["RULE", "StrPattern", "added", "joined_str", "known_attributes", "matching"]
