"""`isinstance-narrowing`: a branch that `isinstance` decides, in one calling context, does not run.

vLLM's quantization configs pick a layer's method by the layer's class:
`get_quant_method(self, layer, prefix)` is `if isinstance(layer, LinearBase): return
Fp8LinearMethod(self) elif isinstance(layer, RoutedExperts): return Fp8MoEMethod(...)`. Reading
every `return` gave each linear layer every MoE method too, so `self.quant_method.apply(...)`
in `ColumnParallelLinear.forward` ran the whole fused-MoE tree. At run time, when `layer` is a
`ColumnParallelLinear`, `isinstance(layer, RoutedExperts)` is False and that branch never runs.

The online config picks a table the same way, `if issubclass(layer_cls, LinearBase): table =
_ONLINE_LINEAR_METHODS elif issubclass(layer_cls, RoutedExperts): table = _ONLINE_MOE_METHODS`,
with `layer_cls = type(layer)`; a read of `table` after the `if` saw both tables.

So, in a calling context, an `if` (or `elif`) whose test is built from `isinstance(x, C)` or
`issubclass(k, C)` (with `not`, `and`, `or`) is decided when every piece is: when the test is
certainly False the body's call sites are not explored, its `return`s give nothing and the
values it binds (assignments, loop iterables, `with` managers) reach no read; when certainly
True, the same for the `else` branch. A piece `isinstance(x, C)` is decided only when
- every value `x` may hold in the context is an instance of an in-tree class (for
  `issubclass`, an in-tree class; none unknown,
  outside, a container or a constant: any of those leaves the test undecided), and each is
  taken for its class *or any in-tree subclass* (an exact instance too), all of whose bases
  are read. The class is the one the constructor rule gives: vLLM's `PluggableLayer.__new__` /
  `CustomOp.__new__` build `op_registry_oot[cls.__name__]` instead when an out-of-tree plugin
  registered one, which no code of the tree does (`register_oot` is never applied in it);
- no class that `x` may be defines `__class__` (isinstance also reads `obj.__class__`);
- every value `C` may hold is an in-tree class, or a tuple of them, whose metaclass is `type`:
  no `metaclass=` keyword along its MRO and no outside base but `object` and `torch.nn.Module`
  (an `abc.ABC` may be given virtual subclasses by `register`, a Protocol matches by
  structure, a metaclass may define `__instancecheck__`; any of those leaves it undecided).
It is True when `C` is in the MRO of every class `x` may be, False when it is in none. Two
more pieces: `a is b` / `a is not b` where both sides hold only classes and None, at least one
class among them (a class is one object: the same when both sides are that one class, never
when no value is shared; vLLM's Quark config tests `method_cls is UnquantizedFusedMoEMethod`),
`x is None` is `none_narrowing.py`'s piece; and a name that is a plain local bound exactly once
(`is_routed_experts = issubclass(layer_type, RoutedExperts)` ... `if is_routed_experts:`),
read as the expression it was bound to, evaluated where it was bound. In an `and`, a piece
after `x is not None` reads `x` without None (`and` runs left to right). A helper inferred for
more than `MAX_RETURN_CONTEXTS` argument sets is widened keeping bound, besides `self`, the
parameters its tests read (`tested_names`), so a widely shared `get_quant_method(layer)` still
decides per layer. A test
the evaluator cannot read (no values, a recursion guard) is undecided; undecided is the
default, and then both branches run, as before. Nothing else is narrowed: the name `x` keeps
its values inside the branch (the branch only runs or does not). A branch certainly taken that
cannot finish (its last statement a `return`, `raise`, `continue` or `break`:
`index.flow.completes`) kills the statements after the `if` in its own block too:
`if not isinstance(layer, ExpertsLayer): return LinearMethod()` then `return MoEMethod()`.
This module is also the branch machinery the `none-narrowing` rule decides its pieces in.
"""
from __future__ import annotations

import ast
import weakref
from typing import FrozenSet, Optional

from ..index.flow import completes
from ..values import VClass, VConst, VInst, VSeq
from . import none_narrowing
from .protocol import Scope
from .rule import Rule

# Outside bases whose metaclass is plain `type` and which define no __instancecheck__ or
# __subclasshook__: a class with only these (and in-tree ones) answers isinstance by its MRO.
PLAIN_BASES = frozenset({"builtins.object", "torch.nn.Module", "torch.nn.modules.module.Module"})


class IsinstanceNarrowing(Rule):
    """an `if`/`elif` whose test `isinstance(x, C)` / `issubclass(k, C)` (with `not`/`and`/`or`) is
    decided in the calling context runs only the branch it picks (the other's calls, returns and
    bindings count for nothing): `x` is an instance of in-tree classes only (each taken
    with every in-tree subclass), `C` in-tree classes whose metaclass is `type` (no ABC, Protocol
    or `metaclass=`), and `C` is in the MRO of all or none of them (vLLM's
    `get_quant_method(layer)`: a linear layer gets no MoE method); otherwise both branches run"""

    name = "isinstance-narrowing"
    where = ("semantics/isinstance_narrowing.py", "explore.py", "semantics/return_type.py", "infer/evaluator.py")
    on_edges = False


RULE = IsinstanceNarrowing()


def dead_nodes(ev, fn, scope: Scope) -> FrozenSet[int]:
    """ids of the call nodes and `return` values of `fn` that cannot run in `scope`'s context."""
    ifs = _candidate_ifs(fn)
    if not ifs:
        return frozenset()
    key = ("isinstance-narrowing", fn.qual, scope.ctx)
    # undecided (nothing dead) while it is being worked out: a stand-in that hides nothing, but
    # what it decides from values worked out in a cycle is kept only once that has settled
    return ev.solver.solve(ev.stores_memo, key, lambda: _dead(ev, ifs, scope), frozenset(), conservative=True)


def _dead(ev, ifs: list, scope: Scope) -> FrozenSet[int]:
    dead: set[int] = set()
    for branch in ifs:
        if id(branch.node) in dead:
            continue  # inside a branch already dead
        verdict = _decide(ev, branch.node.test, scope)
        if verdict is False:
            dead |= branch.body_ids
            if branch.else_exits:  # `if x is not None: ... else: return`: what follows needs the body
                dead |= branch.after_ids()
        elif verdict is True:
            dead |= branch.else_ids
            if branch.body_exits:  # `if x is None: return`: nothing after the `if` runs
                dead |= branch.after_ids()
    return frozenset(dead)


def _candidate_ifs(fn) -> list:
    """The `if` statements of `fn`'s own body (nested defs excluded) whose test calls
    `isinstance` or compares by `is`, each with the ids of the nodes under its body and under
    its `else`, whether each of those can never finish (a `return`, `raise`, `continue` or
    `break` last: `completes`), and the ids of the nodes of the statements after the `if` in
    its own block (which run only if the branch taken finishes)."""
    found = _IFS.get(fn)
    if found is not None:
        return found
    out = []
    if not isinstance(fn.node, ast.Lambda) and (
            any(isinstance(c.func, ast.Name) and c.func.id in _TESTS for c in fn.calls())
            or any(isinstance(n, ast.Compare) and any(isinstance(op, (ast.Is, ast.IsNot)) for op in n.ops)
                   for n in ast.walk(fn.node))):
        blocks = [fn.node.body]
        while blocks:
            block = blocks.pop()
            for i, st in enumerate(block):
                if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    continue
                if isinstance(st, ast.If) and _decidable(st.test):
                    out.append(_Branch(st, block, i))
                for field in ("body", "orelse", "finalbody"):
                    if getattr(st, field, None):
                        blocks.append(getattr(st, field))
                for handler in getattr(st, "handlers", None) or ():
                    blocks.append(handler.body)
                if isinstance(st, ast.Match):
                    for case in st.cases:
                        blocks.append(case.body)
        out.sort(key=lambda b: (b.node.lineno, b.node.col_offset))  # outer ifs first
    _IFS[fn] = out
    return out


class _Branch:
    """One candidate `if`: the ids of the nodes under its body and its `else`, whether each can
    never finish (its last statement a `return`, `raise`, `continue` or `break`:
    `index.flow.completes`), and the statements after it in its own block, which run only if
    the branch taken finishes."""

    __slots__ = ("node", "body_ids", "else_ids", "body_exits", "else_exits", "_block", "_at", "_after")

    def __init__(self, node: ast.If, block: list, at: int):
        self.node = node
        self.body_ids = _ids(node.body)
        self.else_ids = _ids(node.orelse)
        self.body_exits = not completes(node.body)
        self.else_exits = bool(node.orelse) and not completes(node.orelse)
        self._block, self._at, self._after = block, at, None

    def after_ids(self) -> frozenset:
        if self._after is None:  # asked only when a branch that cannot finish is certainly taken
            self._after = _ids(self._block[self._at + 1:])
        return self._after


# FuncInfo -> its candidate ifs (pure, read off the AST once); weak, so that a finished
# analysis's functions and trees are not kept alive by this table
_IFS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def tested_names(fn) -> frozenset:
    """The parameters `fn`'s `isinstance`/`issubclass` tests read directly (`layer` in
    `isinstance(layer, LinearBase)`): a helper inferred for many argument sets is widened
    (`MAX_RETURN_CONTEXTS`) keeping these bound, so its branches stay decided per layer."""
    found = _TESTED.get(fn)
    if found is not None:
        return found
    names = set()
    for branch in _candidate_ifs(fn):
        for n in ast.walk(branch.node.test):
            if (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _TESTS and n.args
                    and isinstance(n.args[0], ast.Name)):
                names.add(n.args[0].id)
    out = frozenset(names) & frozenset(fn.param_names())
    _TESTED[fn] = out
    return out


_TESTED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # FuncInfo -> tested_names


def _decidable(test: ast.expr) -> bool:
    """Whether the test may be decided: it calls isinstance/issubclass, compares by `is`, or
    names a local (which may be bound to such a test)."""
    return any((isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _TESTS)
               or (isinstance(n, ast.Compare) and any(isinstance(op, (ast.Is, ast.IsNot)) for op in n.ops))
               or isinstance(n, ast.Name) for n in ast.walk(test))


def _ids(stmts) -> frozenset:
    """The call nodes, nested ifs, `return` values and bound values (the right-hand side of an
    assignment, a loop's iterable, a `with`'s manager) under `stmts`."""
    out = set()
    for st in stmts:
        for n in ast.walk(st):
            if isinstance(n, (ast.Call, ast.If)):
                out.add(id(n))
            elif isinstance(n, (ast.Return, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
                if n.value is not None:
                    out.add(id(n.value))
            elif isinstance(n, (ast.For, ast.AsyncFor, ast.comprehension)):
                out.add(id(n.iter))
            elif isinstance(n, ast.withitem):
                out.add(id(n.context_expr))
    return frozenset(out)


def _decide(ev, test: ast.expr, scope: Scope, not_none: frozenset = frozenset(), depth: int = 0) -> Optional[bool]:
    """True / False when `test` is certainly that in `scope`, else None. `not_none`: names an
    earlier `x is not None` of the same `and` has ruled None out of (`and` runs left to right)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _decide(ev, test.operand, scope, not_none, depth)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        parts = []
        seen = not_none
        for v in test.values:
            parts.append(_decide(ev, v, scope, seen, depth))
            if isinstance(test.op, ast.And):
                seen = seen | _not_none_name(v)
        if isinstance(test.op, ast.And):
            return False if False in parts else (True if all(p is True for p in parts) else None)
        return True if True in parts else (False if all(p is False for p in parts) else None)
    if (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id in _TESTS
            and len(test.args) == 2 and not test.keywords):
        return _isinstance(ev, test, scope, _TESTS[test.func.id], not_none)
    if (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot))
            and not any(isinstance(e, ast.Constant) for e in (test.left, test.comparators[0]))):
        same = _identity(ev, test.left, test.comparators[0], scope)
        return None if same is None else (same if isinstance(test.ops[0], ast.Is) else not same)
    if none_narrowing.tested(test) is not None:  # `x is None`: semantics/none_narrowing.py
        return none_narrowing.decide(ev, test, scope)
    if isinstance(test, ast.Name) and depth < MAX_NAME_HOPS and scope.fn is not None:
        expr = _single_binding(scope.fn, test.id)
        if expr is not None:
            return _decide(ev, expr, scope, not_none, depth + 1)
    return None


# A test naming a local (`is_experts = issubclass(t, RoutedExperts)` ... `if is_experts:`) is
# read through this many such names.
MAX_NAME_HOPS = 2


def _single_binding(fn, name: str) -> Optional[ast.expr]:
    """The one value a plain local is ever bound to, when it has one: not a parameter, not
    declared global or nonlocal, not bound by a loop, a `with`, unpacking or a store into it."""
    if name in fn.param_names():
        return None
    bs = fn.locals().get(name)
    if not bs or len(bs) != 1:
        return None
    b = bs[0]
    if b.kind != "assign" or b.path or b.expr is None or name in (fn._untracked or ()):
        return None
    return b.expr


def _not_none_name(test: ast.expr) -> frozenset:
    if (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.IsNot)
            and isinstance(test.left, ast.Name) and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value is None):
        return frozenset({test.left.id})
    return frozenset()


def _identity(ev, left: ast.expr, right: ast.expr, scope: Scope) -> Optional[bool]:
    """`left is right` when both sides are classes or None, each an object of its own: True
    when both are one and the same, False when no value of one is a value of the other."""
    a = ev.eval(left, scope, set())
    b = ev.eval(right, scope, set())
    if not a or not b:
        return None
    for v in a | b:
        if not (v.__class__ is VClass or (v.__class__ is VConst and v.value is None)):
            return None
    if not any(v.__class__ is VClass for v in a | b):
        return None  # `x is None` alone is not decided here: only the identity of classes
    if len(a) == 1 and a == b:
        return True
    return False if not (a & b) else None


_TESTS = {"isinstance": VInst, "issubclass": VClass}  # the builtin -> the kind of its first argument


def _isinstance(ev, call: ast.Call, scope: Scope, kind: type, not_none: frozenset = frozenset()) -> Optional[bool]:
    name = call.func.id
    builtin = ev.lookup(name, scope, set(), call.func)
    if not builtin or any(getattr(v, "name", None) != f"builtins.{name}" for v in builtin):
        return None  # a local or in-tree `isinstance` is not the builtin
    classes = ev.classes
    objs = ev.eval(call.args[0], scope, set())
    kinds = ev.eval(call.args[1], scope, set())
    if not objs or not kinds:
        return None
    if isinstance(call.args[0], ast.Name) and call.args[0].id in not_none:
        objs = frozenset(v for v in objs if not (v.__class__ is VConst and v.value is None)) or objs
    cones = set()
    for v in objs:
        if v.__class__ is not kind or classes.info(v.qual) is None or not _cone_readable(ev, v.qual):
            return None
        cones.add(v.qual)
    answers: set = set()
    for k in kinds:
        tested = _classes_of(k)
        if tested is None or any(not _plain(classes, c) for c in tested):
            return None
        for q in cones:
            answers |= _cone_answers(ev, q, tuple(tested))
        if len(answers) > 1:
            return None
    return answers.pop() if len(answers) == 1 else None


# `x` known by its base (transformers' `model: PreTrainedModel`) is any of some 3,000 classes,
# and a helper's tests are asked in thousands of contexts: what a class's cone (it and its
# in-tree subclasses) answers is worked out once per class, not per test (the export spent
# 70 of 90 CPU s of `extract_weight_conversions_for_model` here). Through the solver, so that an
# answer read off bases still being worked out in a cycle is not kept past it.

def _cone_readable(ev, qual: str) -> bool:
    """Whether every class of `qual`'s cone has all its bases read and no `__class__` (which
    isinstance reads before the MRO)."""
    key = ("isinstance-cone", qual)
    return ev.solver.solve(ev.stores_memo, key, lambda: _readable(ev.classes, qual), False, conservative=True)


def _readable(classes, qual: str) -> bool:
    for q in [qual, *classes.subclasses(qual)]:
        if classes.info(q) is None or classes.unknown_bases(q) or any(
                "__class__" in classes.info(k).methods or "__class__" in classes.info(k).attrs
                for k in classes.mro(q)):
            return False
    return True


def _cone_answers(ev, qual: str, tested: tuple) -> frozenset:
    """What `isinstance(x, tested)` answers over the classes of `qual`'s cone: {True}, {False}
    or both."""
    key = ("isinstance-cone", qual, tested)
    return ev.solver.solve(ev.stores_memo, key, lambda: _answers(ev.classes, qual, tested),
                           frozenset({True, False}), conservative=True)


def _answers(classes, qual: str, tested: tuple) -> frozenset:
    out = set()
    for q in [qual, *classes.subclasses(qual)]:
        mro = classes.mro(q)
        out.add(any(c in mro for c in tested))
        if len(out) > 1:
            break
    return frozenset(out)


def _classes_of(v) -> Optional[list[str]]:
    """The classes an isinstance second argument names: one class, or a tuple of them."""
    if v.__class__ is VClass:
        return [v.qual]
    if v.__class__ is VSeq and v.kind == "tuple" and v.items is not None:
        out = []
        for item in v.items:
            if not item:
                return None
            for w in item:
                if w.__class__ is not VClass:
                    return None
                out.append(w.qual)
        return out
    return None


def _plain(classes, qual: str) -> bool:
    """Whether `isinstance(obj, qual)` is `qual in type(obj).__mro__`: an in-tree class whose
    metaclass is `type` and that no ABC or Protocol machinery can answer for."""
    if classes.info(qual) is None or classes.unknown_bases(qual):
        return False
    for k in classes.mro(qual):
        info = classes.info(k)
        if info is None or any(kw.arg == "metaclass" for kw in info.node.keywords):
            return False
        if "__instancecheck__" in info.methods or "__subclasshook__" in info.methods:
            return False
        if any(b.__class__ is not VClass and getattr(b, "name", None) not in PLAIN_BASES
               for b in classes.bases(k)):
            return False  # an outside base that is not plain, or one not read
    return True
