"""Evaluate expressions to abstract values, in a calling context.

This is the index side of resolution: names through the function's own bindings, enclosing
functions, module globals, imports and builtins; attributes through the MRO of in-tree classes
and `self.x = ...` assignments (`classes.py`); subscripts and iteration through containers
(`sequences.py`); parameters without an argument through defaults and annotations
(`annotations.py`). Calls are handed to `calls.py`. Every memo table doubles as a recursion guard
(an in-progress entry reads as what was found so far), so recursive and mutually recursive code
in the analysed tree terminates; `fixpoint.Solver` keeps what a cycle gives only once it has
settled.
"""
from __future__ import annotations

import ast
import builtins
from typing import Callable, FrozenSet, Iterable

from ..fixpoint import MISSING, Solver
from ..index import closures
from ..index.project import Project
from ..registries import Registries
from ..index.scopes import MODULE_CODE, Binding, FuncInfo, ModuleInfo, first_param
from ..semantics import (binding, bound, caught, computed_getattr, contextmanager, decorators, isinstance_narrowing, leaf_annotation, module_getattr,
                         module_store, return_type)
from ..semantics.builtins_model import builtin_lacks
from ..semantics import containers
from ..semantics.containers import apply_stores, remote_stores
from ..semantics.protocol import Scope
from ..values import (BOOL, EMPTY, Ctx, Lit, Value, VClass, VConst, VExt, VFunc, VInst, VModule, VPartial, VSeq, VSeqMethod,
                      VSuper, VUnknown, Shared, covered, forget_orders, join_values, memoised, unknown, unsettled_values,
                      widen_cycle)
from . import calls, classes
from .annotations import Annotations
from .sequences import Sequences

BUILTIN_NAMES = frozenset(dir(builtins))
# Return values inferred through at most this many nested helper calls; deeper is unknown.
MAX_INFER_DEPTH = 12
# Argument sets a helper's return value is inferred for before its parameters are widened.
MAX_RETURN_CONTEXTS = 6


def _eval_other(ev: "Evaluator", node: ast.AST, scope: Scope, tags: set[str]) -> FrozenSet[Value]:
    return frozenset({VExt("<expr>")})


_EVALS: dict[type, Callable] = {}  # node class -> Evaluator._eval_<its name> (or _eval_other)


class Evaluator(Sequences, Annotations):
    """Names, attributes, calls and return values here; containers in `sequences.py`, parameters
    without an argument in `annotations.py`."""

    def __init__(self, project: Project, binds: dict[str, str] | None = None, max_depth: int = MAX_INFER_DEPTH,
                 max_return_contexts: int = MAX_RETURN_CONTEXTS, registries: Registries | None = None):
        self.p = project
        self.binds = dict(binds or {})
        self.solver = Solver()  # what its memo tables keep through recursion (fixpoint.py)
        self.registries = registries if registries is not None else Registries(project)
        self.classes = classes.ClassModel(self)
        self.calls = calls.CallModel(self)
        self._names: dict = {}        # names read with no calling context (module and class code)
        self._local_names: dict = {}  # ... within one calling context: forget_local() drops these
        self._returns: dict = {}
        # one object per distinct value kept for the run: contexts that differ in what the
        # answer does not depend on rebuild equal values (transformers' export: 1,205 config
        # classes bound to `cls` of `PreTrainedConfig._get_config_dict`, 4 distinct answers)
        self.shared = Shared()
        self._attrs: dict = {}
        self._return_contexts: dict[str, set] = {}  # function -> the contexts its return was inferred for
        self.stores_memo: dict = {}  # id(module) -> stores into its globals (semantics/containers.py)
        self._depth = 0
        self.max_depth = max_depth
        self.max_return_contexts = max_return_contexts

    def memo_size(self) -> int:
        """Entries forget_local() would drop (call sites dispatched; local names grow alongside)."""
        return len(self.calls._memo)

    def close(self) -> None:
        """Drop every memo. The evaluator and its models refer to each other, so with the
        cyclic collector paused (gcpause.py) nothing else would free them before exit."""
        self.forget_local()
        self._names.clear()
        self._returns.clear()
        self.shared.clear()
        self._attrs.clear()
        self.stores_memo.clear()
        self.solver.reset()
        forget_orders()
        self.classes = classes.ClassModel(self)
        self.calls = calls.CallModel(self)

    def forget_local(self) -> None:
        """Drop the memos that belong to one calling context: each call site's dispatch and
        each local name's values. A whole-tree export meets every context about once, so these
        only grow (700 MB on SGLang's `srt`); global names, return values and class attributes,
        which every context reuses, are kept. Call only between queries, never during one:
        the memos double as recursion guards."""
        self.calls._memo.clear()
        self.calls._full.clear()
        self._local_names.clear()

    def _name_table(self, ctx: Ctx | None) -> dict:
        """The memo of names read in `ctx`: kept for good without one, dropped by forget_local."""
        return self._names if ctx is None else self._local_names

    def _share(self, ctx: Ctx | None) -> Shared | None:
        """What keeps the values of `_name_table(ctx)` once each: the table kept for good only
        (sharing would keep the values of a dropped one alive)."""
        return self.shared if ctx is None else None

    # -- entry points ----------------------------------------------------------------------
    def eval(self, node: ast.AST | None, scope: Scope, tags: set[str]) -> FrozenSet[Value]:
        if node is None:
            return EMPTY
        method = _EVALS.get(node.__class__)
        if method is None:
            method = _EVALS[node.__class__] = getattr(Evaluator, "_eval_" + type(node).__name__, _eval_other)
        return method(self, node, scope, tags)

    def scope_of(self, fn: FuncInfo, ctx: Ctx | None) -> Scope:
        return Scope(fn.module, fn, ctx)

    def returns(self, fn: FuncInfo, ctx: Ctx) -> FrozenSet[Value]:
        key = ctx
        found = self.solver.read(self._returns, key)
        if found is not MISSING:
            return found
        seen = self._return_contexts.get(fn.qual)
        if seen is None:
            seen = self._return_contexts[fn.qual] = set()
        # contexts, not computations, are counted: a cycle's rounds work one context out again
        if ctx not in seen and len(seen) >= self.max_return_contexts and ctx.binds:
            # widen: this helper was already inferred for many argument sets. The answer is the
            # widened context's, looked up again at each call and not kept under `ctx`: kept,
            # it froze what the widened context read when first asked (an inference depth limit
            # reached there) for every later call with `ctx`, and its key held `ctx`'s argument
            # sets for the whole run (transformers' export: 115k such entries, 333 MB of the peak).
            tested = isinstance_narrowing.tested_names(fn)  # what its isinstance tests read
            keep = tuple(b for b in ctx.binds if (b[0] == first_param(fn) and fn.cls is not None) or b[0] in tested)
            wide = Ctx(ctx.fn, keep, ctx.closure)
            if wide != ctx:
                return self.returns(fn, wide)
        seen.add(ctx)
        if self._depth >= self.max_depth:
            return unknown(f"inference depth limit ({self.max_depth}) reached at {fn.qual}")
        self._depth += 1
        try:
            # in progress, it reads as what was found so far (a recursive helper); the solver
            # keeps what a cycle gave only once it has settled
            return self.solver.compute(self._returns, key, lambda: self._returns_of(fn, ctx), EMPTY,
                                       join_values, same=covered, unsettled=unsettled_values, widen=widen_cycle)
        finally:
            self._depth -= 1

    def _returns_of(self, fn: FuncInfo, ctx: Ctx) -> FrozenSet[Value]:
        result = return_type.returned(self, fn, self.scope_of(fn, ctx))
        return self.shared(leaf_annotation.returned(self, fn, result))  # `-> torch.Tensor` over what was not inferred

    def bound_factory(self, node: ast.Call, scope: Scope) -> tuple[str, ...]:
        """The classes a user --bind names for this call (`semantics/bound.py`)."""
        return bound.classes(self.binds, node, scope.mod.display)

    # -- names -----------------------------------------------------------------------------
    def _eval_Name(self, node: ast.Name, scope: Scope, tags: set[str]) -> FrozenSet[Value]:
        return self.lookup(node.id, scope, tags, node)

    def lookup(self, name: str, scope: Scope, tags: set[str], node: ast.Name | None = None) -> FrozenSet[Value]:
        """A name's values where it is read. A read in the body that binds the name (`node`
        given) sees the bindings that reach it in statement order; other reads see them all."""
        fn, ctx = scope.fn, scope.ctx
        while fn is not None:
            found = fn.local_read(name)
            if name in fn.param_names():
                bound = ctx.get(name) if ctx is not None else None
                if bound is not None:
                    if name != first_param(fn) or fn.cls is None:
                        tags.add(binding.RULE.name)
                    if binding.OR_DEFAULT in bound:   # the argument may be missing: its default too
                        bound = (bound - {binding.OR_DEFAULT}) | self.missing_argument(fn, name, ctx, tags)
                    if binding.OPAQUE_UNKNOWN in bound:  # `x: torch.Tensor` given a value not inferred
                        bound = leaf_annotation.narrowed(self, fn, name, bound, binding.OPAQUE_UNKNOWN)
                else:
                    bound = self.unbound_param(fn, name, ctx, tags)
                if found is None:
                    return bound
                # rebound in the body: the argument where no rebinding reached the read
                return self._rebound_param(fn, name, bound, found[0], scope, ctx, tags, node)
            if found is not None:
                local, ordered = found
                same = fn is scope.fn and ctx is scope.ctx and scope.cls is None
                fscope = scope if same else Scope(fn.module, fn, ctx)
                remote = self._remote(fn, name, fscope)
                hists = fn.reaching(node) if ordered and node is not None and fn is scope.fn else None
                if hists is not None:
                    return self._histories(hists, fscope, tags, ("flow", fn.qual, name, hists), remote)
                return self.bindings(local, fscope, tags, ("local", fn.qual, name, ctx), remote)
            parent = fn.parent
            ctx = ctx.closure if ctx is not None and ctx.closure is not None else (Ctx(parent.qual) if parent else None)
            fn = parent
        if scope.cls is not None and name in scope.cls.attrs:
            return self.bindings(scope.cls.attrs[name], Scope(scope.mod, cls=scope.cls), tags, ("cls", scope.cls.qual, name))
        return self.global_name(scope.mod, name, tags)

    def _rebound_param(self, fn: FuncInfo, name: str, arg: FrozenSet[Value], local: list, scope: Scope,
                       ctx: Ctx | None, tags: set[str], node: ast.Name | None) -> FrozenSet[Value]:
        """A parameter the body rebinds (`if model_class is None: model_class = ...`): the
        rebinding's values where it reaches the read, the argument's where none does."""
        same = fn is scope.fn and ctx is scope.ctx and scope.cls is None
        fscope = scope if same else Scope(fn.module, fn, ctx)
        hists = fn.reaching(node) if node is not None and fn is scope.fn else None
        if hists is None:  # order not followed here: the argument and every rebinding
            return arg | self.bindings(local, fscope, tags, ("local", fn.qual, name, ctx))
        out: set[Value] = set()
        if any(head is None for head, _ in hists):
            out |= arg
        bound = frozenset(h for h in hists if h[0] is not None)
        if bound:
            out |= self._histories(bound, fscope, tags, ("flow", fn.qual, name, bound))
        return frozenset(out)

    def global_name(self, mod: ModuleInfo, name: str, tags: set[str], _seen: frozenset = frozenset()) -> FrozenSet[Value]:
        if name in mod.globals:
            remote = [(b, Scope(f.module, f, None)) for b, f in remote_stores(self, mod).get(name, ())]
            own = self.bindings(self._module_bindings(mod, name, remote), Scope(mod), tags,
                                ("global", mod.name, name), remote)
            return own | module_store.values(self, mod, name, tags)  # `m.Y = v` elsewhere
        for star in mod.star_imports:
            if star in _seen:
                continue
            smod = self.p.module(star)
            if smod is not None:
                found = self.global_name(smod, name, tags, _seen | {mod.name})
                if found and not all(isinstance(v, VUnknown) for v in found):
                    return found
            elif not self.p.is_namespace(star):
                return frozenset({VExt(f"{star}.{name}")})
        if name in BUILTIN_NAMES:
            return frozenset({VExt(f"builtins.{name}")})
        if name == "__file__" or name == "__name__":
            return frozenset({VConst(Lit("str"))})
        return unknown(f"name '{name}' is not defined in {mod.display}")

    def _module_bindings(self, mod: ModuleInfo, name: str, remote) -> list[Binding]:
        """A module global's bindings, as a read from another function sees them. A module's
        `x: T = v` binds `v`; its annotation `T` counts as a value too (any `T` set from
        outside) only when the tree may set an attribute of that name (`mod.x = w`,
        `setattr(mod, "x", w)`: `Project.attribute_stored`) or nothing in the tree gives `x` a
        value (`x: T` alone, filled from outside). transformers' `ALL_ATTENTION_FUNCTIONS:
        AttentionInterface = AttentionInterface()` is that one instance, exactly."""
        bs = mod.globals[name]
        if not any(b.kind == "annot" for b in bs):
            return bs
        valued = any(b.kind not in ("annot", "global") for b in bs) or any(r[0].kind != "item" for r in remote)
        if not valued or self.p.attribute_stored(name):
            return bs
        return [b for b in bs if b.kind != "annot"]

    def _rebound(self, out: set[Value], remote, tags: set[str]) -> tuple[set[Value], list]:
        """`out` with the values of the remote bindings that rebind the name (a function's
        `global X; X = v`), and the remote item stores left to apply."""
        stores = []
        for r in remote:
            if r[0].kind == "item":
                stores.append(r)
            else:
                out = out | self.binding_value(r[0], r[1], tags)
        return out, stores

    def _remote(self, fn: FuncInfo, name: str, scope: Scope) -> list:
        """Stores other functions make into this name: module code's globals only."""
        if fn.name != MODULE_CODE:
            return []
        return [(b, Scope(f.module, f, None)) for b, f in remote_stores(self, fn.module).get(name, ())]

    def bindings(self, bindings: Iterable[Binding], scope: Scope, tags: set[str], key, remote=()) -> FrozenSet[Value]:
        def compute(btags: set[str]) -> set[Value]:
            out: set[Value] = set()
            items: list = []
            for b in bindings:
                if b.kind == "item":
                    items.append((b, scope))
                else:
                    out |= self.binding_value(b, scope, btags)
            out, stores = self._rebound(out, remote, btags)
            return self.fill(out, items + stores, btags) if items or stores else out

        return memoised(self.solver, self._name_table(scope.ctx), (key, scope.ctx), tags, compute, self._share(scope.ctx))

    def _histories(self, hists, scope: Scope, tags: set[str], key, remote=()) -> FrozenSet[Value]:
        """A read's values from the histories that reach it (`index/flow.py`): each path's
        binding, then its stores in order; stores from other functions may come at any time."""
        def compute(btags: set[str]) -> set[Value]:
            out: set[Value] = set()
            rebound, remote_items = self._rebound(set(), remote, btags)
            for head, items in sorted(hists, key=_history_order):
                vals = self.binding_value(head, scope, btags) if head is not None else EMPTY
                vals = set(vals) | rebound  # a `global` rebinding may run at any time
                stores = [(b, scope, strong) for b, strong in items] + remote_items
                out |= self.fill(vals, stores, btags) if stores else vals
            return out

        return memoised(self.solver, self._name_table(scope.ctx), (key, scope.ctx), tags, compute, self._share(scope.ctx))

    def binding_value(self, b: Binding, scope: Scope, tags: set[str]) -> FrozenSet[Value]:
        if b.kind == "def":
            fn = self.p.functions.get(b.target)
            if fn is None:
                return unknown(f"definition {b.target} not indexed")
            closure = scope.ctx if scope.fn is not None else None
            if closure is not None and closure.binds and closures.context_free(self.p.functions, fn):
                closure = Ctx(closure.fn)  # nothing it reads depends on where it was defined
            value = frozenset({VFunc(fn.qual, None, closure)})
            if fn.decorators and fn.cls is None:
                value = decorators.decorated(self, fn, value, scope, tags)
            return value
        if b.kind == "class":
            return frozenset({VClass(b.target)})
        if b.kind == "import":
            return self.dotted(b.target)
        if b.kind == "global":
            return EMPTY
        if b.kind == "annot":
            return self.annotation(b.expr, Scope(scope.mod, scope.fn, scope.ctx), tags) if not b.path else EMPTY
        if b.kind == "caught":  # `except E as e`: an instance of E or of a subclass
            return caught.values(self, self.eval(b.expr, scope, tags))
        if b.expr is not None and scope.fn is not None and id(b.expr) in isinstance_narrowing.dead_nodes(self, scope.fn, scope):
            return EMPTY  # bound in a branch `isinstance` rules out in this context
        vals = self.eval(b.expr, scope, tags) if b.expr is not None else frozenset({VExt("exception")})
        if b.kind == "iter":
            vals = self.iterate(vals, tags)
        elif b.kind == "with":
            vals = contextmanager.entered(self, vals)
        return self.unpack(vals, b.path, tags) if b.path else vals

    def fill(self, values: set[Value], items: list, tags: set[str]) -> set[Value]:
        """Containers with what was put into them (`layers.append(Layer(i))`, `table["k"] = f`):
        `items` are (Binding, Scope[, strong]) stores applied in order (`semantics/containers.py`)."""
        return apply_stores(self, values, items, tags)

    def dotted(self, name: str) -> FrozenSet[Value]:
        """The value of an imported dotted name: an in-tree module, a name in one, or external.
        A name of an in-tree file that was skipped (unparsable, over the size limit) is unknown
        with the reason, never external: external code could not reach the target, that file can."""
        if self.p.module(name) is not None:
            return frozenset({VModule(name)})
        head, _, attr = name.rpartition(".")
        if head:
            mod = self.p.module(head)
            if mod is not None:
                hooked = module_getattr.values(self, mod, attr, set())  # `from m import x`: m.__getattr__
                if attr in mod.globals or mod.star_imports:
                    found = self.global_name(mod, attr, set())
                    return found if hooked is None else found | hooked
                if hooked is not None:
                    return hooked
                if self.p.locate(name) is not None or self.p.is_namespace(name):
                    return frozenset({VModule(name)})
                return unknown(f"'{attr}' is not defined in {mod.display}")
        if self.p.is_namespace(name):
            return frozenset({VModule(name)})
        skipped = self.p.skipped_module(name)
        if skipped is not None:
            return unknown(skipped)
        return frozenset({VExt(name)})

    # -- attributes ------------------------------------------------------------------------
    def _eval_Attribute(self, node: ast.Attribute, scope: Scope, tags: set[str]) -> FrozenSet[Value]:
        return self.attribute(self.eval(node.value, scope, tags), node.attr, tags)

    def attribute(self, values: FrozenSet[Value], attr: str, tags: set[str]) -> FrozenSet[Value]:
        out: set[Value] = set()
        for v in values:
            out |= self.attribute_of(v, attr, tags)
        if not out and values and all(isinstance(v, VConst) for v in values):
            # only literals, none with the attribute (`self.ws = None` and nothing else seen):
            # the value it has at run time was not inferred; functions passed to a call on it
            # still count as callbacks, and the call itself is unresolved (open_values)
            return frozenset({VExt(f"<object>.{attr}")})
        return frozenset(out)

    def attribute_of(self, v: Value, attr: str, tags: set[str]) -> FrozenSet[Value]:
        if isinstance(v, VModule):
            mod = self.p.module(v.name)
            if mod is not None and (attr in mod.globals or mod.star_imports):
                found = self.global_name(mod, attr, tags)
                if not all(isinstance(x, VUnknown) for x in found) or attr in mod.globals:
                    hooked = module_getattr.values(self, mod, attr, tags)  # PEP 562: m.__getattr__
                    return found if hooked is None else found | hooked
            return self.dotted(f"{v.name}.{attr}")
        if isinstance(v, (VInst, VClass, VSuper)):
            return self.classes.attribute(v, attr, tags)
        if isinstance(v, VExt):
            return frozenset({VExt(f"{v.name}.{attr}")})
        if isinstance(v, VUnknown):
            return frozenset({v})
        if isinstance(v, VSeq):
            return containers.attribute(v, attr)
        if isinstance(v, VConst):
            types = v.value.types() if v.value.__class__ is Lit else (type(v.value).__name__,)
            present = [t for t in types if not builtin_lacks(t, attr)]
            if not present:
                return EMPTY  # `self.x = None` elsewhere: no value, not `None.view`
            return frozenset({VExt(f"builtins.{present[0] if len(present) == 1 else 'object'}.{attr}")})
        if isinstance(v, VFunc):
            return frozenset({VExt(f"builtins.function.{attr}")})
        # a container's bound method, a partial, a mixin method: what else it carries is not
        # modelled; said as such (it used to read as a value only ever set to None or a literal)
        return unknown(f"'.{attr}' of {_described(v)}, whose other attributes are not modelled")

    # -- the rest --------------------------------------------------------------------------
    def _eval_Call(self, node: ast.Call, scope: Scope, tags: set[str]) -> FrozenSet[Value]:
        return self.calls.result(node, scope, tags)

    def _eval_Constant(self, node: ast.Constant, scope, tags):
        # None and strings as themselves; any other literal by its type (`Lit`), never None
        value = node.value
        if value is None or value.__class__ is str:
            return frozenset({VConst(value)})
        return frozenset({_LITERALS.get(value.__class__) or VConst(Lit(type(value).__name__))})

    def _eval_JoinedStr(self, node, scope, tags):
        return computed_getattr.joined_str(self, node, scope, tags)

    def _eval_BoolOp(self, node: ast.BoolOp, scope, tags):
        out: set[Value] = set()
        for v in node.values:
            out |= self.eval(v, scope, tags)
        return frozenset(out)

    def _eval_IfExp(self, node: ast.IfExp, scope, tags):
        return self.eval(node.body, scope, tags) | self.eval(node.orelse, scope, tags)

    def _eval_NamedExpr(self, node: ast.NamedExpr, scope, tags):
        return self.eval(node.value, scope, tags)

    def _eval_Await(self, node: ast.Await, scope, tags):
        return self.eval(node.value, scope, tags)

    def _eval_Lambda(self, node: ast.Lambda, scope: Scope, tags):
        fn = self.p.lambda_info(node, scope.fn, scope.mod)
        return frozenset({VFunc(fn.qual, None, scope.ctx if scope.fn is not None else None)})

    def _eval_UnaryOp(self, node, scope, tags):
        return frozenset({VExt("<operator result>")})

    def _eval_Compare(self, node, scope, tags):
        # `is`, `in` and their negations give a bool; `==`, `<`, ... give what the operand's
        # method returns: a tensor for tensors (`(ids == ids.min()).nonzero()`), as `a + b` does
        if all(isinstance(op, _BOOL_COMPARISONS) for op in node.ops):
            return frozenset({BOOL})
        return frozenset({VExt("<operator result>")})


_BOOL_COMPARISONS = (ast.Is, ast.IsNot, ast.In, ast.NotIn)
# the literal values of ast.Constant's non-string, non-None types, one object each
_LITERALS = {t: VConst(Lit(t.__name__)) for t in (int, float, bool, bytes, complex, type(...))}


def _history_order(history) -> tuple:
    """Source order of a history's bindings, then whether each store is strong: a total order
    that leaves nothing to the set's own (a Binding hashes its node by address)."""
    items = history[1]
    return (tuple(_binding_pos(b) for b in (history[0], *(ib for ib, _ in items))), tuple(s for _, s in items))


def _binding_pos(b) -> tuple:
    if b is None:
        return (-1, -1, "", "", ())
    return (getattr(b.expr, "lineno", 0), getattr(b.expr, "col_offset", 0), b.kind, b.target, b.path)


def _described(v: Value) -> str:
    if isinstance(v, VSeqMethod):
        return f"a container's own '.{v.attr}'"
    if isinstance(v, VPartial):
        return "a functools.partial object"
    return f"a {type(v).__name__} value"


__all__ = ["Evaluator", "Scope"]
