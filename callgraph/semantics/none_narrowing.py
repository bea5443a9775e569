"""`none-narrowing`: `x is None` / `x is not None` decided in one calling context.

transformers' attention functions are called with `attention_mask=None` by the vision towers
(`VisionAttention.forward` in Qwen2-VL), and guard on it: `if attention_mask is not None:
... _upad_input(...)` in `_flash_attention_forward`, `if hidden_states is None or ...: return
hidden_states` in `pack_gqa`. Every literal used to be one value (`0`, `True`, `None` alike), so
no such test was ever decided, and the branch for a mask that is never there stayed open, a
blocker of the proof that the vision tower does not reach the text model.

A piece `x is None` (`None is x`, `x is not None`) of an `if`'s test is decided by the branch
machinery of `isinstance_narrowing.py` (`not`, `and`, `or`, a local bound once to a test, and
a branch certainly taken that cannot finish kills the statements after the `if`) when `x` is:
- a local of the function whose `if` it is that is only ever assigned literals, None or the
  function's parameters (a local bound to a call is not read: inferring a call while this
  function's branches are being decided re-enters the decision, `_plain_local`), or one of its
  parameters bound in this calling context (a parameter with no argument bound, an entry's or a widened context's, may be
  anything, None included); not module code's global, not a closure's or a global name, not
  declared `global`/`nonlocal` there or `nonlocal` by a function nested in it (which may
  rebind it at any time), not bound by `:=` or only by comprehensions; and
- every value it may hold there is None (True), or none is and each is a value that is never
  None: a literal, an exact instance of an in-tree class with no in-tree `__new__` along its
  MRO (a `__new__` may return None, and then `__init__` does not run), a class, a function,
  a module, a container, a bound method, a partial, a `super()` proxy (False).
Anything else leaves the piece undecided, and then both branches run: an unknown value, an
outside one (any outside call may return None), an instance known only by an annotation or a
base type (a caller may pass None where `x: Foo` is annotated), an attribute (`self.x`: code
outside the class may set it, `model.lm_head = None`), an empty value set (a recursion guard,
code not inferred). `x == None` and `x != None` are never decided (`__eq__` may answer
anything), nor `x is True` or other literals' identity.

What makes the values honest about None: a literal is `VConst(Lit(type))` and None is
`VConst(None)` (`values.py`); a function returns None where it may run to its end or has a
bare `return` (`return_type.py`); `next(it, d)`, `min/max(..., default=d)`, `dict.get(k)`
(for any key: a `pop` before is not followed), `getattr(o, n, d)` give their default too; a dict whose keys are not known iterates to any
literal or None beside its values (`containers.py`). Premises, as for `isinstance-narrowing`:
the evaluator's value sets are complete where they hold nothing unknown or outside (a store
into a container through an alias, `e = d; e["k"] = None`, is not seen: docs/rules.md, "What
is not modelled"); a call of an `async def` reads as its awaited value (testing an un-awaited
coroutine against None is a bug this does not model); `locals()`, `exec` and frame hacks do
not rebind a local.
"""
from __future__ import annotations

import ast
import weakref
from typing import Optional

from ..index.scopes import MODULE_CODE
from ..values import VClass, VConst, VFunc, VInst, VMixin, VModule, VPartial, VSeq, VSeqMethod, VSuper
from .protocol import Scope
from .rule import Rule


class NoneNarrowing(Rule):
    """an `if`/`elif` whose test is built from `x is None` / `x is not None` (with `not`/`and`/`or`)
    runs only the branch it picks, when `x` is a local or a parameter bound in the calling
    context and every value it may hold there is None, or none is and each is never None (a
    literal, an exact in-tree instance without an in-tree `__new__`, a class, a function, a
    container); an unknown or outside value, an instance known by an annotation, an attribute
    or an unbound parameter keeps both branches (transformers' `attention_mask=None` handed to
    `_flash_attention_forward`: `if attention_mask is not None:` does not run)"""

    name = "none-narrowing"
    where = ("semantics/none_narrowing.py", "semantics/isinstance_narrowing.py", "values.py",
             "semantics/return_type.py", "infer/evaluator.py")
    on_edges = False


RULE = NoneNarrowing()

# Values that are never None, whatever they hold.
_NEVER_NONE = (VClass, VFunc, VModule, VPartial, VSeq, VSeqMethod, VMixin, VSuper)


def tested(test: ast.expr) -> Optional[tuple[ast.Name, bool]]:
    """(`x`, True) for `x is None` / `None is x`, (`x`, False) for `x is not None`; else None."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot))):
        return None
    left, right = test.left, test.comparators[0]
    if _is_none(left):
        left, right = right, left
    if isinstance(left, ast.Name) and _is_none(right):
        return left, isinstance(test.ops[0], ast.Is)
    return None


def _is_none(e: ast.expr) -> bool:
    return isinstance(e, ast.Constant) and e.value is None


def decide(ev, test: ast.expr, scope: Scope) -> Optional[bool]:
    """True / False when `test` (a `tested` comparison) is certainly that in `scope`, else None."""
    found = tested(test)
    if found is None:
        return None
    name, is_ = found
    none = is_none(ev, name, scope)
    return None if none is None else (none if is_ else not none)


def is_none(ev, name: ast.Name, scope: Scope) -> Optional[bool]:
    """Whether the read `name` is certainly None (True), certainly not (False), or either."""
    fn, ctx = scope.fn, scope.ctx
    if fn is None or ctx is None or fn.name == MODULE_CODE or scope.cls is not None:
        return None
    x = name.id
    if x in fn.param_names():
        if ctx.get(x) is None:
            return None  # no argument bound here: an entry's, or a widened context's
    elif fn.local_read(x) is None or not _plain_local(fn, x):
        return None  # a closure's, a global, a builtin; a local bound to what needs inferring
    fn.locals()  # the scan that fills `_untracked`
    if x in (fn._untracked or ()) or x in _rebound_inside(fn):
        return None
    values = ev.eval(name, scope, set())
    if not values:
        return None
    nones = 0
    for v in values:
        if v.__class__ is VConst:
            if v.value is None:
                nones += 1
        elif not _never_none(ev, v):
            return None
    if nones == len(values):
        return True
    return False if nones == 0 else None


def _plain_local(fn, x: str) -> bool:
    """Whether every binding of the local `x` in `fn` is a plain assignment of a literal, None or
    one of `fn`'s parameters: what it holds is read without inferring a call. (Inferring one
    while this function's branches are being decided re-enters the decision, read as "nothing
    dead" there, and what was inferred meanwhile is kept: on vLLM, `resolved =
    self.resolve_quant_method_cls(...)` then `if resolved is not None:` gave a linear layer
    every online MoE method.)"""
    params = fn.param_names()
    for b in fn.locals().get(x, ()):
        if b.kind != "assign" or b.path or b.expr is None:
            return False
        e = b.expr
        if not (isinstance(e, ast.Constant) or (isinstance(e, ast.Name) and e.id in params)):
            return False
    return True


def _never_none(ev, v) -> bool:
    if isinstance(v, _NEVER_NONE):
        return True
    if v.__class__ is VInst:
        # exact: made here by its constructor; `__new__` in the tree may return None instead
        return v.exact and ev.classes.info(v.qual) is not None and ev.classes.method(v.qual, "__new__") is None
    return False


def _rebound_inside(fn) -> frozenset:
    """Names the functions nested in `fn` declare `nonlocal`: they may rebind them at any time."""
    found = _NONLOCAL.get(fn)
    if found is None:
        names: set[str] = set()
        for n in ast.walk(fn.node):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n is not fn.node:
                for m in ast.walk(n):
                    if isinstance(m, ast.Nonlocal):
                        names.update(m.names)
        found = _NONLOCAL[fn] = frozenset(names)
    return found


_NONLOCAL: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # FuncInfo -> _rebound_inside
