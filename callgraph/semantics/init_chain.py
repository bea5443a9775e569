"""`init-chain`: a base class's `__init__` runs on an instance with the arguments the
subclass's `__init__` passes up (`super().__init__(...)`, `Base.__init__(self, ...)`), through
as many levels as the chain has.

vLLM's `LlamaModel.__init__(self, *, vllm_config, prefix="", layer_type=LlamaDecoderLayer)` builds
`self.layers` from `layer_type`; its subclasses pass their own decoder layer class up
(`super().__init__(vllm_config=..., layer_type=XDecoderLayer)`), and multimodal wrappers pass
a `language_model_cls`. Reading `self.layers` on a subclass instance with the base `__init__`'s
parameters unbound gave the default class only: the subclass's layers were missed, and the
analysis could say "unreachable" where the subclass's layer runs.

So the attributes a base `__init__` assigns are read in the contexts the chain binds: the
instance's own `__init__` (its construction's arguments, `VInst.init`), each chain call in it
dispatched there (its targets' contexts bind the base's parameters), and so on up the MRO. A
base `__init__` the chain does not reach from the instance's own `__init__` (called from a
helper method, say) keeps the plain context, as before.
"""
from __future__ import annotations

import ast

from ..index.scopes import first_param
from ..values import Ctx
from .protocol import Scope
from .rule import Rule

# Contexts of chained __init__s followed from one instance before giving up (the chain of a
# real tree is a few levels; conditional chain calls multiply it).
MAX_CHAIN_CONTEXTS = 32


class InitChain(Rule):
    """a base class's `__init__` runs with the arguments the subclass's `__init__` passes to
    `super().__init__(...)` / `Base.__init__(self, ...)`, through every level of the chain, so
    `self.layers` built from a `layer_type` / `decoder_layer_type` / `language_model_cls`
    parameter holds the class the subclass passed, not the base's default"""

    name = "init-chain"
    where = ("semantics/init_chain.py", "semantics/init_attribute.py")


RULE = InitChain()


def contexts_on(ev, v, fn, init, tags: set[str]) -> list[Ctx]:
    """The contexts in which method `fn` runs on instance `v` when it assigns `v`'s attributes:
    its own `__init__` (`init`, found on `v`'s class) with the arguments of `v`'s construction,
    a base's `__init__` with those its subclass chains up, any other method with only `self`
    bound."""
    binds = ((first_param(fn), frozenset({v})),)
    if init is not None and fn is init[0]:
        return [Ctx(fn.qual, tuple(sorted(binds + v.init, key=lambda kv: kv[0])) if v.init else binds)]
    if init is not None and fn.name == "__init__" and v.exact:
        own = init[0]
        own_binds = ((first_param(own), frozenset({v})),)
        own_ctx = Ctx(own.qual, tuple(sorted(own_binds + v.init, key=lambda kv: kv[0])) if v.init else own_binds)
        chained = chain_contexts(ev, own, own_ctx, fn)
        if chained:
            tags.add(RULE.name)
            return chained
    return [Ctx(fn.qual, binds)]


def chain_contexts(ev, own, own_ctx: Ctx, fn) -> list[Ctx]:
    """The contexts in which `fn`, an `__init__` of a base class, runs on the instance whose own
    `__init__` (`own`) runs in `own_ctx`: found by dispatching the chain calls of each
    `__init__` in its context, from `own` up. Empty when no chain call reaches `fn`."""
    found: list[Ctx] = []
    todo = [(own, own_ctx)]
    seen: set = set()
    while todo and len(seen) < MAX_CHAIN_CONTEXTS:
        f, ctx = todo.pop()
        if (f.qual, ctx) in seen:
            continue
        seen.add((f.qual, ctx))
        scope = Scope(f.module, f, ctx)
        for node in _chain_calls(f):
            for t in ev.calls.dispatch(node, scope).targets:
                if t.fn == fn.qual:
                    if t.ctx not in found:
                        found.append(t.ctx)
                elif t.fn.endswith(".__init__"):
                    nxt = ev.p.functions.get(t.fn)
                    if nxt is not None:
                        todo.append((nxt, t.ctx))
    if todo and found:  # the bound was reached: the contexts not followed are not known
        found.append(Ctx(fn.qual, ((first_param(fn), own_ctx.get(first_param(own)) or frozenset()),)))
    return found


def _chain_calls(fn) -> list[ast.Call]:
    """`super().__init__(...)`, `super(C, self).__init__(...)`, `Base.__init__(self, ...)` in `fn`."""
    out = []
    for call in fn.calls():
        f = call.func
        if not (isinstance(f, ast.Attribute) and f.attr == "__init__"):
            continue
        if isinstance(f.value, ast.Call) and isinstance(f.value.func, ast.Name) and f.value.func.id == "super":
            out.append(call)
        elif isinstance(f.value, (ast.Name, ast.Attribute)) and call.args:
            out.append(call)
    return out
