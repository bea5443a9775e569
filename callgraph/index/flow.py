"""Statement order within one body: which bindings of a name reach each read of it.

Bindings (`index/scopes.py`) are flow-insensitive: every assignment to a name counts at every
read. Within one function (or module) body that is needlessly coarse for straight-line code:
after `a = dec1; a = dec2`, a read of `a` can only see `dec2`, and after
`d = {"a": f1}; d["a"] = f2`, `d["a"]` is `f2`. This module walks the body's statements in
order (branches joined, loops to a fixpoint, `try` handlers from every point of the body) and
records, for each read of a local name, its *histories*: the binding that made the value on
one path (`head`, None when no binding of this body reached on that path) followed by the item
stores into it on that path, each marked `strong` when it certainly ran after the ones before
(a store with a constant key then replaces that key).

Only reads in the same body use this; reads from nested functions (closures) and other
functions (globals) still see every binding, since they run at any later time. Names bound by
`:=`, or declared global/nonlocal, are not tracked (their reads fall back to every binding),
nor are reads inside statements this walk does not model. A comprehension's targets are its
own scope's (Python 3): no statement of the body rebinds them, so the body's reads of a name
that is also a comprehension's target (`x.dim()` before `[f(x) for x in (q, k)]`) see the
body's bindings only; a read of the target inside the comprehension (but in its first
iterable, evaluated outside) falls back to every binding, the comprehension's included, and so
does every read of a name only comprehensions bind.
"""
from __future__ import annotations

import ast
from typing import Callable, Optional

from .children import child_nodes
from .bindings import Binding

# A name reached by more paths than this at one read falls back to every binding.
MAX_HISTORIES = 12
# Loop bodies are walked at most this many times before the state is taken as stable.
MAX_LOOP_ROUNDS = 4

History = tuple  # (head: Binding | None, items: tuple[tuple[Binding, bool], ...])
TOP = "top"      # a name whose histories are not tracked at this point (fallback)
State = Optional[dict]  # name -> frozenset[History] | TOP; None: no path gets here


class _Loop:
    def __init__(self):
        self.breaks: list = []
        self.continues: list = []


class Flow:
    """One walk over a body. `bindings(stmt)` gives the bindings a statement makes itself, by
    name in source order (the same Binding objects the scope's table holds): a simple
    statement's, or a compound statement's header's (not its body's)."""

    def __init__(self, bindings: Callable[[ast.AST], dict], untracked: set[str]):
        self.bindings = bindings
        self.untracked = untracked
        self.reads: dict[int, object] = {}  # id(Name node) -> frozenset[History] | TOP
        # Loops walk their body up to MAX_LOOP_ROUNDS times: each statement's bindings and
        # each root's reads are found once.
        self._made: dict[int, dict] = {}
        self._loads: dict[int, list] = {}
        self.loops: list[_Loop] = []
        self.trying: list[list] = []        # states seen inside the try bodies being walked

    # -- reads ------------------------------------------------------------------------------
    def _record(self, nodes, state: State) -> None:
        if state is None:
            return
        for root in nodes:
            if root is None:
                continue
            loads = self._loads.get(id(root))
            if loads is None:
                loads = self._loads[id(root)] = _loads_in(root, self.untracked)
            for n in loads:
                h = state.get(n.id)
                if h is None:
                    continue  # no binding of this body reached: fall back
                prev = self.reads.get(id(n))
                self.reads[id(n)] = h if prev is None else _join_h(prev, h)

    def _made_by(self, s: ast.AST) -> dict:
        """The bindings statement `s` makes itself: a compound statement's are its header's (a
        for's target, a with's `as` targets), its body's statements being statements of their
        own (FuncInfo._scan files each binding under its closest statement)."""
        made = self._made.get(id(s))
        if made is None:
            made = self._made[id(s)] = self.bindings(s)
        return made

    # -- statements -------------------------------------------------------------------------
    def block(self, stmts, state: State) -> State:
        for s in stmts:
            if state is None:
                return None
            state = self.stmt(s, state)
            for seen in self.trying:
                seen.append(state)
        return state

    def stmt(self, s: ast.stmt, state: dict) -> State:
        if isinstance(s, ast.If):
            self._record([s.test], state)
            return join(self.block(s.body, state), self.block(s.orelse, state))
        if isinstance(s, (ast.For, ast.AsyncFor, ast.While)):
            return self._loop(s, state)
        if isinstance(s, (ast.With, ast.AsyncWith)):
            for item in s.items:
                self._record([item.context_expr], state)
            state = self._bind(state, self._made_by(s))
            return self.block(s.body, state)
        if isinstance(s, ast.Try) or type(s).__name__ == "TryStar":
            return self._try(s, state)
        if isinstance(s, getattr(ast, "Match", ())):
            self._record([s.subject], state)
            out = state  # no case matched
            for case in s.cases:
                self._record([case.guard], state)
                out = join(out, self.block(case.body, state))
            return out
        if isinstance(s, (ast.Return, ast.Raise)):
            self._record([s], state)
            return None
        if isinstance(s, ast.Break):
            if self.loops:
                self.loops[-1].breaks.append(state)
            return None
        if isinstance(s, ast.Continue):
            if self.loops:
                self.loops[-1].continues.append(state)
            return None
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = s.args
            self._record([*s.decorator_list, *a.defaults, *[d for d in a.kw_defaults if d is not None]], state)
        elif isinstance(s, ast.ClassDef):
            self._record([*s.decorator_list, *s.bases, *[k.value for k in s.keywords]], state)
        else:
            self._record([s], state)
        return self._bind(state, self._made_by(s), additive=isinstance(s, ast.AugAssign))

    def _loop(self, s, state: dict) -> State:
        header = s.iter if not isinstance(s, ast.While) else s.test
        self._record([header], state)
        loop = _Loop()
        self.loops.append(loop)
        head, end = state, None
        for _ in range(MAX_LOOP_ROUNDS):
            body_in = self._bind(head, self._made_by(s)) if not isinstance(s, ast.While) else head
            if isinstance(s, ast.While):
                self._record([s.test], head)
            end = self.block(s.body, body_in)
            new_head = join(head, end)
            for c in loop.continues:
                new_head = join(new_head, c)
            if new_head == head:
                break
            head = new_head
        else:
            head = _top_all(head)
            body_in = self._bind(head, self._made_by(s)) if not isinstance(s, ast.While) else head
            end = self.block(s.body, body_in)
        self.loops.pop()
        out = self.block(s.orelse, join(head, end))
        for b in loop.breaks:
            out = join(out, b)
        return out

    def _try(self, s, state: dict) -> State:
        seen = [state]
        self.trying.append(seen)
        end = self.block(s.body, state)
        self.trying.pop()
        anywhere = None
        for st in seen:
            anywhere = join(anywhere, st)
        out = self.block(s.orelse, end)
        for h in s.handlers:
            self._record([h.type], anywhere)
            entry = anywhere
            if h.name and entry is not None:
                entry = self._bind(entry, {h.name: [Binding("caught", h.type, ())]})
            out = join(out, self.block(h.body, entry))
        if s.finalbody:
            # the finally block also runs on the way out of an uncaught exception
            self.block(s.finalbody, join(anywhere, out))
            out = self.block(s.finalbody, out) if out is not None else None
        return out

    # -- transfer ---------------------------------------------------------------------------
    def _bind(self, state: dict, made: dict, additive: bool = False) -> dict:
        if not made:
            return state
        state = dict(state)
        for name, bs in made.items():
            if name in self.untracked:
                continue
            for b in bs:
                cur = state.get(name)
                if b.kind == "item":
                    state[name] = cur if cur == TOP else _store(cur or frozenset({(None, ())}), b)
                elif b.kind == "global":
                    continue
                elif b.kind == "annot" or additive:
                    state[name] = cur if cur == TOP else _cap((cur or frozenset()) | {(b, ())})
                else:
                    state[name] = frozenset({(b, ())})
        return state


def _store(hists: frozenset, b: Binding):
    out = set()
    for head, items in hists:
        if any(ib is b or ib == b for ib, _ in items):
            # the same store again (a loop): order is lost, so no store of this path replaces
            out.add((head, tuple((ib, False) for ib, _ in items)))
        else:
            out.add((head, items + ((b, True),)))
    return _cap(frozenset(out))


def _cap(hists: frozenset):
    return TOP if len(hists) > MAX_HISTORIES else hists


def _join_h(a, b):
    if a == TOP or b == TOP:
        return TOP
    return _cap(a | b)


def join(a: State, b: State) -> State:
    if a is None:
        return b
    if b is None:
        return a
    out = {}
    for name in a.keys() | b.keys():
        ha, hb = a.get(name), b.get(name)
        unbound = frozenset({(None, ())})
        out[name] = _join_h(ha if ha is not None else unbound, hb if hb is not None else unbound)
    return out


def _top_all(state: State) -> State:
    return None if state is None else {k: TOP for k in state}


def _walk_expr(root: ast.AST):
    """Nodes of a statement or expression that run with it: lambda bodies run later."""
    stack = [root]
    while stack:
        cur = stack.pop()
        yield cur
        if isinstance(cur, ast.Lambda):
            stack.extend(cur.args.defaults)
            stack.extend(d for d in cur.args.kw_defaults if d is not None)
            continue
        if isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        stack += child_nodes(cur)


def _loads_in(root: ast.AST, untracked: set[str]) -> list[ast.Name]:
    """The reads of tracked names among `_walk_expr(root)`'s nodes. (The walk, specialised:
    the flow walk meets every expression of every body that needs statement order.)"""
    out = []
    stack = [root]
    kinds = _KINDS
    shadowed: dict[int, frozenset] = {}  # id(node) -> names a comprehension around it binds
    while stack:
        cur = stack.pop()
        kind = kinds.get(cur.__class__)
        if kind is None:
            kind = _kind_of(cur.__class__)
        if kind == _NAME:
            if isinstance(cur.ctx, ast.Load) and cur.id not in untracked \
                    and not (shadowed and cur.id in shadowed.get(id(cur), ())):
                out.append(cur)
        elif kind == _LAMBDA:
            stack.extend(cur.args.defaults)
            stack.extend(d for d in cur.args.kw_defaults if d is not None)
        elif kind == _NODE:
            children = child_nodes(cur)
            if isinstance(cur, _COMPREHENSIONS):
                # its targets are its own scope's: a read of one inside it (but in the first
                # iterable, evaluated outside) is not this body's; it falls back to every binding
                inner = shadowed.get(id(cur), frozenset()) | {
                    t.id for g in cur.generators for t in ast.walk(g.target) if isinstance(t, ast.Name)}
                first = cur.generators[0]
                scoped = [c for c in children if c is not first]
                scoped += [first.target] + list(first.ifs)
                for c in scoped:
                    for sub in ast.walk(c):
                        shadowed[id(sub)] = inner | shadowed.get(id(sub), frozenset())
            stack += children
    return out


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


_NODE, _NAME, _LAMBDA, _SCOPE = range(4)
_KINDS: dict[type, int] = {}


def _kind_of(cls: type) -> int:
    if issubclass(cls, ast.Name):
        kind = _NAME
    elif issubclass(cls, ast.Lambda):
        kind = _LAMBDA
    elif issubclass(cls, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        kind = _SCOPE
    else:
        kind = _NODE
    _KINDS[cls] = kind
    return kind


def completes(stmts) -> bool:
    """Whether a block may finish normally (fall through to what follows it). Its last
    statement decides: an earlier one that never finishes makes it never finish too, so this
    may answer True where the block cannot finish, never False where it can."""
    if not stmts:
        return True
    s = stmts[-1]
    if isinstance(s, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
        return False
    if isinstance(s, ast.If):
        return completes(s.body) or completes(s.orelse)
    if isinstance(s, ast.Try) or type(s).__name__ == "TryStar":
        if s.finalbody and not completes(s.finalbody):
            return False
        return (completes(s.body) and completes(s.orelse)) or any(completes(h.body) for h in s.handlers)
    return True  # a loop (its test may fail), a `with` (its manager may swallow), a match, ...


def untracked_names(body_nodes) -> set[str]:
    """Names bound inside expressions (comprehension targets, `:=`) or declared global/nonlocal."""
    out: set[str] = set()
    for root in body_nodes:
        for n in _walk_expr(root):
            if isinstance(n, ast.comprehension) or isinstance(n, ast.NamedExpr):
                for t in ast.walk(n.target):
                    if isinstance(t, ast.Name):
                        out.add(t.id)
            elif isinstance(n, (ast.Global, ast.Nonlocal)):
                out.update(n.names)
    return out


def body_reads(body: list, bindings: Callable[[ast.AST], dict], untracked: set[str] | None = None,
               params: frozenset = frozenset()) -> dict:
    """id(Name node) -> its histories, for the reads of one body that can be told apart.
    `untracked`: the body's `untracked_names`, where the caller has them from a walk of its own.
    `params`: parameters the body rebinds, bound on entry to their argument (a head of None)."""
    flow = Flow(bindings, untracked_names(body) if untracked is None else untracked)
    flow.block(body, {p: frozenset({(None, ())}) for p in params if p not in flow.untracked})
    return {k: v for k, v in flow.reads.items() if v != TOP}
