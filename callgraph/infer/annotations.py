"""The evaluator's parameters without an argument: defaults and annotations.

A parameter no call site binds (an entry point's, a widened context's) is typed from what the
source says about it: `self`/`cls` of a method, its default value, and its annotation (`X`,
`Optional[X]`, `Union[X, Y]`, `X | Y`, `"X"`, `list[X]`); an annotation names instances of a
base type, which calls dispatch on by class hierarchy, and an outside class named by one may
be any subclass (semantics/open_values.py). A mixin of `Evaluator`.
"""
from __future__ import annotations

import ast
from typing import FrozenSet

from ..index.scopes import FuncInfo, dotted_text, first_param
from ..semantics import class_hierarchy, open_values, typed_kwargs
from ..semantics.protocol import Scope
from ..values import NONE, SOME_LITERAL, Ctx, Value, VClass, VConst, VExt, VInst, VSeq, VUnknown, memoised, unknown


def unbound_parameter(name: str, qual: str) -> str:
    """Why a parameter with no argument bound, no default and no annotation has no value."""
    return f"parameter '{name}{_unbound_tail(qual)}"


def about_own_parameter(why: str, qual: str) -> bool:
    """Whether `why` (an unresolved row's reason, met in `qual`) is `unbound_parameter` of one
    of `qual`'s own parameters (the export keeps those rows: whole_tree.downstream)."""
    return why.startswith("parameter '") and why.endswith(_unbound_tail(qual))


def _unbound_tail(qual: str) -> str:
    return f"' of {qual} has no argument bound on this path"


class Annotations:
    def unbound_param(self, fn: FuncInfo, name: str, ctx: Ctx | None, tags: set[str]) -> FrozenSet[Value]:
        """A parameter with no argument bound in context `ctx`: its default and annotation."""
        if fn.cls is not None and name == first_param(fn) and fn.kind != "staticmethod":
            if fn.kind == "classmethod":
                return frozenset({VClass(fn.cls.qual)})
            return frozenset({VInst(fn.cls.qual, exact=False)})
        # the same in every context of fn but for the enclosing function's (defaults are
        # evaluated there): every read of an unbound parameter asks again
        closure = ctx.closure if ctx else None
        return memoised(self.solver, self._name_table(closure), (("param", fn.qual, name), closure), tags,
                        lambda ptags: self._param_default(fn, name, closure, ptags), self._share(closure))

    def missing_argument(self, fn: FuncInfo, name: str, ctx: Ctx | None, tags: set[str]) -> FrozenSet[Value]:
        """A parameter whose argument a call may leave out (binding.OR_DEFAULT): then it holds
        its default, exactly, so a literal default is not widened to an unknown as an entry's
        unannotated parameter is (a caller may pass anything there; here none passes)."""
        closure = ctx.closure if ctx else None
        if name not in fn.defaults():
            return self.unbound_param(fn, name, ctx, tags)
        return memoised(self.solver, self._name_table(closure), (("missing", fn.qual, name), closure), tags,
                        lambda ptags: self._param_default(fn, name, closure, ptags, missing=True))

    def _param_default(self, fn: FuncInfo, name: str, closure: Ctx | None, tags: set[str],
                       missing: bool = False) -> FrozenSet[Value]:
        a = fn.node.args
        if a.vararg and a.vararg.arg == name:
            return frozenset({VSeq(unknown(f"*{name} of {fn.qual}"), "tuple")})
        if a.kwarg and a.kwarg.arg == name:
            typed = typed_kwargs.values(self, a.kwarg.annotation, Scope(fn.module, fn.parent, closure), tags)
            return typed if typed is not None else frozenset({VSeq(unknown(f"**{name} of {fn.qual}"), "dict")})
        out: set[Value] = set()
        positional = a.posonlyargs + a.args
        defaults = fn.defaults()
        outer = Scope(fn.module, fn.parent, closure)
        if name in defaults:
            out |= self.eval(defaults[name], outer, tags)
        ann = next((p.annotation for p in positional + a.kwonlyargs if p.arg == name), None)
        if ann is not None:
            out |= self.annotation(ann, outer, tags)
        if not out or (ann is None and not missing and all(isinstance(v, VConst) for v in out)):
            out.add(VUnknown(unbound_parameter(name, fn.qual)))
        return frozenset(out)

    def annotation(self, ann: ast.AST, scope: Scope, tags: set[str] | None = None) -> FrozenSet[Value]:
        """Instances an annotation describes: `X`, `Optional[X]`, `Union[X, Y]`, `X | Y`, "X",
        `list[X]`, `dict[K, X]`, `Annotated[X, ...]`. A class from outside the tree names a base
        (`nn.Module`: any subclass, the tree's own included); `type[X]` is the class X or an
        in-tree subclass of it (semantics/class_hierarchy.py); what is not
        read is unknown, never nothing (`Callable[...] | None` is not only None)."""
        if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
            try:
                ann = ast.parse(ann.value, mode="eval").body
            except SyntaxError:
                return unknown(f"annotation {ann.value!r} not read")
        if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
            return self.annotation(ann.left, scope, tags) | self.annotation(ann.right, scope, tags)
        if isinstance(ann, ast.Subscript):
            return self._generic_annotation(ann, scope, tags)
        if isinstance(ann, ast.Constant) and ann.value is None:
            return frozenset({NONE})
        out = set()
        for v in self.eval(ann, scope, set()):
            if isinstance(v, VClass) and self.classes.is_protocol(v.qual):
                out.add(open_values.structural(v.qual))  # any class with those methods
            elif isinstance(v, VClass):
                out.add(VInst(v.qual, exact=False))
            elif isinstance(v, VExt):  # `xs: list` holds any object; `x: nn.Module` is any subclass
                out.add(open_values.bare_container(v.name) or open_values.annotated(v.name))
            elif isinstance(v, VUnknown):
                out.add(v)
        return frozenset(out) or unknown(f"annotation {dotted_text(ann) or type(ann).__name__} not read")

    def _generic_annotation(self, ann: ast.Subscript, scope: Scope, tags: set[str] | None) -> FrozenSet[Value]:
        head = self.eval(ann.value, scope, set())
        names = {v.name for v in head if isinstance(v, VExt)}
        inner = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
        if names & {"typing.Optional", "typing.Union"}:
            out: set[Value] = set()
            for elt in inner:
                out |= self.annotation(elt, scope, tags)
            return frozenset(out)
        if names & open_values.WRAPPING_ANNOTATIONS:
            return self.annotation(inner[0], scope, tags)
        if names & open_values.TYPE_ANNOTATIONS:  # `type[X]`: the class X or a subclass of it
            return class_hierarchy.type_annotation(self, self.annotation(inner[0], scope, tags), tags)
        if names & open_values.LITERAL_ANNOTATIONS:  # `Literal["eager", None]`: literals, None if named
            none = any(isinstance(e, ast.Constant) and e.value is None for e in inner)
            return frozenset({SOME_LITERAL, NONE}) if none else frozenset({SOME_LITERAL})
        if names & open_values.SEQUENCE_ANNOTATIONS or names & open_values.MAPPING_ANNOTATIONS:
            kind = "dict" if names & open_values.MAPPING_ANNOTATIONS else "list"
            elts = [e for e in (inner[-1:] if kind == "dict" else inner) if not (isinstance(e, ast.Constant) and e.value is ...)]
            elems: set[Value] = set()
            for elt in elts:
                elems |= self.annotation(elt, scope)
            return frozenset({VSeq(frozenset(elems), kind)})
        classes = [v for v in head if isinstance(v, VClass)]
        if classes and len(classes) == len(head):  # an in-tree generic class: `Registry[T]`
            return frozenset(VInst(c.qual, exact=False) for c in classes)
        text = dotted_text(ann.value) or "a generic"
        return unknown(f"{text}[...] known only by an annotation: not read")

