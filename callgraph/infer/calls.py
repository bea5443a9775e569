"""Calls: what a call site runs (its targets) and what it returns.

One dispatch per (call site, context) answers both, memoised. What calling each kind of value
does (a function, a class, a module instance, a partial, a container, an external) is a rule of
`callgraph.semantics`; this module walks the callee's possible values and asks the registry's
rules for each, in order.
"""
from __future__ import annotations

import ast
from typing import FrozenSet

from .. import semantics
from ..index.scopes import FuncInfo
from ..semantics import bound as bound_rule, container_subclass, external, open_values, registry, return_type
from ..semantics.builtins_model import seq_method
from ..semantics.computed_getattr import RULE as COMPUTED_GETATTR
from ..semantics.container_subclass import held
from ..semantics.binding import OR_DEFAULT, bind
from ..semantics.protocol import Inference, Scope
from ..semantics.rule import Call, CallArgs, Dispatch, Target
from ..values import (EMPTY, UNSETTLED, Ctx, Value, VClass, VConst, VExt, VInst, VSeq, VSuper, VUnknown, ordered, unsettled_values,
                      widen_cycle)

# A call that may run more functions than this (a method of a base type dispatched to every
# override: `self.encoder(...)` typed `PreTrainedModel` runs 2,505 `forward`s in transformers)
# keeps every target as an edge, but its value is unknown rather than the union of all their
# return values: inferring those (and what they call) was 1.6 GB and 25 CPU s for one function.
MAX_RETURNING_TARGETS = 128


PASSING = COMPUTED_GETATTR.name

_NOTHING = Dispatch()  # a dispatch in progress, as its first readers see it (never changed)


def _union(a: FrozenSet[Value], b: FrozenSet[Value]) -> FrozenSet[Value]:
    return a | b


def _joined(a: Dispatch, b: Dispatch) -> Dispatch:
    """A dispatch doing what either does: the stand-in of a cycle's next round."""
    return Dispatch(results=a.results | b.results, targets=_uniq(a.targets + b.targets),
                    returning=_uniq(a.returning + b.returning), externals=list(dict.fromkeys(a.externals + b.externals)),
                    unresolved=list(dict.fromkeys(a.unresolved + b.unresolved)), tags=a.tags | b.tags)


def _uniq(targets: list) -> list:
    return list({(t.fn, t.ctx, t.rule, t.key): t for t in targets}.values())


def _same_dispatch(a: Dispatch, b: Dispatch) -> bool:
    return (a.results == b.results and a.tags == b.tags and len(a.targets) == len(b.targets)
            and len(a.returning) == len(b.returning) and a.unresolved == b.unresolved and a.externals == b.externals)


def _widened_dispatch(d: Dispatch) -> Dispatch:
    d.results = widen_cycle(d.results)
    return d


def _unsettled_dispatch(d: Dispatch) -> Dispatch:
    d.unresolved.append(UNSETTLED)
    d.results = unsettled_values(d.results)
    return d


class CallModel:
    def __init__(self, ev: Inference):
        self.ev = ev
        self.rules = semantics.by_kind()  # value class -> its rules, in registry order
        self._memo: dict = {}  # (call node, context, caller) -> Dispatch
        self._full: dict = {}  # ... -> its value: results and the return values of its targets

    def result(self, node: ast.Call, scope: Scope, tags: set[str]) -> FrozenSet[Value]:
        """The call's values. Return values of the functions it runs are inferred only here,
        on demand: exploring a call site needs its targets, not what they return."""
        key = (id(node), scope.ctx, scope.fn.qual if scope.fn else scope.mod.name)
        # in progress, a call's value reads as empty: the solver keeps what a cycle through a
        # return value gave once it has settled (the dispatch is read inside, so that what
        # depends on it in progress is known)
        full = self.ev.solver.solve(self._full, key, lambda: self._full_result(self.dispatch(node, scope)), EMPTY,
                                    _union, unsettled=unsettled_values, widen=widen_cycle)
        d = self.dispatch(node, scope)
        if d.returning:
            tags.add(return_type.RULE.name)
        if PASSING in d.tags:  # getattr(obj, f"forward_{k}") gives obj's attributes: its rule types them
            tags.add(PASSING)
        return full

    def _full_result(self, d: Dispatch) -> FrozenSet[Value]:
        out = set(d.results)
        many = len({t.fn for t in d.returning})
        if many > MAX_RETURNING_TARGETS:
            out.add(VUnknown(f"return value of {many} possible callees (more than {MAX_RETURNING_TARGETS}) "
                             "not inferred"))
        else:
            for t in d.returning:
                fn = self.ev.p.functions.get(t.fn)
                if fn is not None:
                    out |= self.ev.returns(fn, t.ctx)
        return frozenset(out)

    def dispatch(self, node: ast.Call, scope: Scope) -> Dispatch:
        key = (id(node), scope.ctx, scope.fn.qual if scope.fn else scope.mod.name)
        # in progress, a dispatch reads as one with no target (a call whose callee is worked out
        # from its own value); the solver keeps what a cycle gave once it has settled
        return self.ev.solver.solve(self._memo, key, lambda: self._dispatch(node, scope), _NOTHING, _joined,
                                    _same_dispatch, _unsettled_dispatch, widen=_widened_dispatch)

    def _dispatch(self, node: ast.Call, scope: Scope) -> Dispatch:
        tags: set[str] = set()
        d = Dispatch()
        bound = self.ev.bound_factory(node, scope)
        if bound:  # a --bind FACTORY=CLASS[,CLASS...] names what this factory returns
            d.results = bound_rule.construct_all(self, bound, self.args(node, scope, set()), d, tags)
            d.tags = frozenset(tags)
            return d
        callee = self.ev.eval(node.func, scope, tags)
        args = self.args(node, scope, set(), light=not any(self._wants_args(v) for v in callee))
        results: set[Value] = set()
        for v in ordered(callee) if len(callee) > 1 else callee:  # in one order, run to run
            results |= self.call_value(v, args, node, scope, d, tags)
        found = self.ev.registries.site(node)
        if found is not None:  # a registry factory: its table says what it builds
            results = registry.dispatch(self, found, node, scope, d, tags, results)
        elif callee and all(isinstance(v, VConst) for v in callee):
            # only None or literals inferred, yet called: the callable is set where the tree's
            # code was not read (from outside the class?), not an inert external
            lit = open_values.only_literals()
            d.unresolved.append(lit.why)
            results.add(lit)
        d.results = frozenset(results)
        d.tags = frozenset(tags)
        return d

    def _wants_args(self, v: Value) -> bool:
        """Whether the argument values matter for calling `v`: binding in-tree parameters, or a
        modelled external (containers, partial, builtins). Other externals only need arguments
        that may be functions handed over (callbacks), and unknown callees none."""
        if isinstance(v, VExt):
            return semantics.wants_args(v.name)
        return not isinstance(v, (VUnknown, VConst))

    def args(self, node: ast.Call, scope: Scope, tags: set[str], light: bool = False) -> CallArgs:
        """Argument values. `light`: only names, attributes, lambdas and the in-tree classes
        constructed in place are evaluated (what a callback, or an object an outside function
        may call or return, can be); other nested calls are not, since their return values are
        costly to infer and an external callee ignores them."""
        a = CallArgs()
        if light:
            for arg in list(node.args) + [kw.value for kw in node.keywords]:
                if isinstance(arg, (ast.Name, ast.Attribute, ast.Lambda)):
                    a.pos.append(self.ev.eval(arg, scope, tags))
                elif isinstance(arg, ast.Call) and isinstance(arg.func, (ast.Name, ast.Attribute)):
                    # `register_forward_hook(Hook())`: an in-tree class constructed in place is
                    # its instance (the construction is its own call site)
                    made = frozenset(VInst(v.qual, True) for v in self.ev.eval(arg.func, scope, tags)
                                     if v.__class__ is VClass and v.qual in self.ev.p.classes)
                    if made:
                        a.pos.append(made)
            return a
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                a.has_star = True
                a.star = a.star | self.ev.iterate(self.ev.eval(arg.value, scope, tags), set())
            elif a.has_star:
                a.star = a.star | self.ev.eval(arg, scope, tags)
            else:
                a.pos.append(self.ev.eval(arg, scope, tags))
        for kw in node.keywords:
            vals = self.ev.eval(kw.value, scope, tags)
            if kw.arg is not None:
                a.kw[kw.arg] = vals
                continue
            self._spread(a, vals)
        a.complete = True
        return a

    @staticmethod
    def _spread(a: CallArgs, vals: FrozenSet[Value]) -> None:
        """`f(**m)`, m one of `vals`: a dict of known keys fills those keywords; any other mapping
        fills every parameter not named otherwise (kw_star). Over several possible mappings
        (`f(**D[k])`) a keyword holds what each mapping gives it, and where one of them may lack
        it (another dict's keys, an unknown mapping) it may also be the other mapping's values or
        the parameter's default (binding.OR_DEFAULT): before, the first dict's value alone was
        kept, so a callback passed in the second was never followed."""
        spread: dict[str, FrozenSet[Value]] = {}
        keysets = []   # each known dict's keys
        rest = EMPTY   # what the other mappings hold
        for m in vals:
            if isinstance(m, VSeq) and m.kind == "dict" and m.keys is not None:
                for k, kv in m.keys:
                    spread[k] = spread.get(k, EMPTY) | kv
                keysets.append({k for k, _ in m.keys})
            else:
                a.has_kw_star = True
                rest = rest | (m.elems if isinstance(m, VSeq) else frozenset({m}))
        a.kw_star = a.kw_star | rest
        # the keys every possible mapping certainly names (none when some mapping's are unknown)
        certain = set.intersection(*keysets) if keysets and len(keysets) == len(vals) else set()
        for k, kv in spread.items():
            if k not in certain:
                kv = kv | rest | {OR_DEFAULT}
            a.kw[k] = a.kw.get(k, EMPTY) | kv

    # -- dispatch on one callee value -------------------------------------------------------
    def call_value(self, v: Value, args: CallArgs, node: ast.Call, scope: Scope, d: Dispatch, tags: set[str]) -> FrozenSet[Value]:
        """The values of calling `v`: the first of the registry's rules for its kind that
        answers (adding the targets that run to `d`); what no rule models is external, unknown
        or nothing."""
        cls = v.__class__
        if cls is VExt:
            external.called(d, v.name)
        rules = self.rules.get(cls)
        if rules:
            call = Call(self, v, args, node, scope, d, tags)
            for rule in rules:
                if rule.applies(call):
                    found = rule.apply(call)
                    if found is not None:
                        return found
        if cls is VExt:
            why = open_values.opaque_call(v.name)
            if why is not None:  # an outside factory's result called: any module may be there
                d.unresolved.append(why)
                return frozenset({VUnknown(why)})
            return frozenset({VExt(v.name + "()")})
        if cls is VUnknown:
            d.unresolved.append(v.why)
            return frozenset({v})
        if cls is VSuper or cls is VConst or cls is VSeq:
            return EMPTY  # calling a literal, a list/tuple/dict or a super object raises: no value
        return frozenset({VExt("<call result>")})

    def invoke(self, fn: FuncInfo, self_val: Value | None, args: CallArgs, closure: Ctx | None, rule: str,
               d: Dispatch, returning: bool = True, key: str = "") -> FrozenSet[Value]:
        """`fn` runs, with `rule` on the edge: a target of `d` whose return value is the call's
        (unless `returning` is False: a callback, an `__init__`)."""
        target = Target(fn.qual, bind(fn, self_val, args, closure), rule, key)
        d.targets.append(target)
        if returning:
            d.returning.append(target)
        return EMPTY

    def call_held(self, v: VInst, name: str, key: FrozenSet[Value] | None) -> FrozenSet[Value]:
        """`v.name(key)` for a method of the base container reading the items `v` holds."""
        args = CallArgs()
        if key is not None:
            args.pos.append(key)
        out: set[Value] = set()
        for seq in held(v):
            out |= seq_method(self.ev, seq, name, args, set())
        return frozenset(out)

    def add_target(self, qual: str, ctx: Ctx, rule: str, d: Dispatch) -> None:
        """`qual` runs in `ctx` (already bound), its return value not the call's."""
        d.targets.append(Target(qual, ctx, rule))

    def dunder(self, v: VInst, name: str, tags: set[str], iterate: bool = False,
               key: FrozenSet[Value] | None = None) -> FrozenSet[Value]:
        """Values of `iter(obj)` / `obj[key]` for in-tree classes defining the protocol (`key`:
        the subscript's values, bound to `__getitem__`'s parameter), or reading the items a
        dict/list subclass was constructed with (semantics/container_subclass.py)."""
        found = self.ev.classes.method(v.qual, name)
        if held(v):
            tags.add(container_subclass.RULE.name)
        if found is None:
            if held(v):
                if iterate:
                    return self.ev.iterate(held(v), tags)
                return self.call_held(v, name, key)
            if self.ev.classes.is_container(v.qual):
                return frozenset({VUnknown(f"item of a {v.qual.rsplit('.', 1)[-1]} container")})
            if self.ev.classes.external_bases(v.qual):
                # a subclass of an external container (nn.ModuleList, list, dict...)
                return frozenset({VExt(f"{v.qual}.{name}()")})
            return frozenset({VUnknown(f"{v.qual.rsplit('.', 1)[-1]} has no {name}")})
        fn = found[0]
        args = CallArgs()
        if key is not None:
            args.pos.append(key)
        vals = self.ev.returns(fn, bind(fn, v, args, None))
        if not iterate:
            return vals
        # iter(obj) gives an iterator; its elements are what the iterator's __next__ returns
        # (an iterator's __iter__ returns itself: asking it again would never end).
        out: set[Value] = set()
        for it in vals:
            if isinstance(it, VInst):
                nxt = self.ev.classes.method(it.qual, "__next__")
                if nxt is not None:
                    out |= self.ev.returns(nxt[0], bind(nxt[0], it, CallArgs(), None))
                else:
                    out.add(VUnknown(f"iterator {it.qual.rsplit('.', 1)[-1]} has no __next__"))
            else:
                out |= self.ev.iterate(frozenset({it}), tags)
        return frozenset(out)
